//! The card form: `GET /pay/{id}` of a card deposit and `POST /pay/{id}/card`.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::operation::Operation;
use domain::service::{Checkout, CheckoutError};
use domain::ValidationErrors;
use maud::{html, Markup};
use serde::Deserialize;

use super::i18n::{Lang, PageTexts};
use super::layout::{page, shell, summary};
use super::outcome::{after_step, failure, not_found};
use super::PageId;

/// The card form as posted. No `Debug`: it holds the full card number and the CVC, which
/// must never reach a log.
#[derive(Deserialize)]
pub struct CardForm {
    #[serde(default)]
    pan: String,
    #[serde(default)]
    expiry: String,
    #[serde(default)]
    cvc: String,
}

/// Which card fields were refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CardErrors {
    pub pan: bool,
    pub expiry: bool,
    pub cvc: bool,
}

impl CardErrors {
    fn any(self) -> bool {
        self.pan || self.expiry || self.cvc
    }
}

impl From<&ValidationErrors> for CardErrors {
    fn from(errors: &ValidationErrors) -> Self {
        let named = |name: &str| errors.0.iter().any(|e| e.field == name);
        Self {
            pan: named("pan"),
            expiry: named("expiry"),
            cvc: named("cvc"),
        }
    }
}

/// The card form; after refused input it shows the errors and keeps the expiry only (the
/// number and CVC are never written back into a page).
pub fn form(lang: Lang, op: &Operation, errors: CardErrors, expiry: &str) -> Markup {
    let t = lang.texts();
    let action = format!("/pay/{}/card", op.id());
    let body = html! {
        (summary(lang, op))
        h1 { (t.card_title) }
        @if errors.any() {
            p.errors role="alert" { (t.card_errors) }
        }
        form method="post" action=(action) autocomplete="on" {
            label for="pan" { (t.card_number) }
            input #pan name="pan" type="text" inputmode="numeric" autocomplete="cc-number"
                maxlength="23" placeholder="0000 0000 0000 0000" required
                aria-invalid=(errors.pan);
            @if errors.pan { p.field-error { (t.bad_pan) } }
            div.row {
                div {
                    label for="expiry" { (t.card_expiry) }
                    input #expiry name="expiry" type="text" autocomplete="cc-exp"
                        maxlength="7" placeholder="MM/YY" required value=(expiry)
                        aria-invalid=(errors.expiry);
                    @if errors.expiry { p.field-error { (t.bad_expiry) } }
                }
                div {
                    label for="cvc" { (t.card_cvc) }
                    input #cvc name="cvc" type="password" inputmode="numeric"
                        autocomplete="cc-csc" maxlength="4" required
                        aria-invalid=(errors.cvc);
                    @if errors.cvc { p.field-error { (t.bad_cvc) } }
                }
            }
            button type="submit" { (t.pay) " " (lang.money(op.amount(), op.currency())) }
        }
        p.note { (t.card_note) }
    };
    shell(t, t.card_title, body)
}

/// `POST /pay/{id}/card`: pays with the typed card, or shows the form again with its errors.
#[tracing::instrument(name = "pages.card", skip_all, fields(operation.id = ?target.id))]
pub async fn submit(
    posted: web::Form<CardForm>,
    target: PageId,
    checkout: web::Data<Checkout>,
) -> HttpResponse {
    let PageId { lang, id } = target;
    let Some(id) = id else {
        return not_found(lang);
    };
    let card = posted.into_inner();
    match checkout
        .pay_by_card(id, &card.pan, &card.expiry, &card.cvc)
        .await
    {
        Ok(op) => after_step(&op),
        Err(CheckoutError::Invalid(errors)) => {
            tracing::info!("card form refused");
            match checkout.deposit(id).await {
                Ok(op) => page(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    lang,
                    form(lang, &op, CardErrors::from(&errors), card.expiry.trim()),
                ),
                Err(error) => failure(lang, error),
            }
        }
        Err(error) => failure(lang, error),
    }
}

#[cfg(test)]
mod tests {
    use domain::PaymentMethod;

    use super::*;
    use crate::pages::stage::tests::deposit;

    #[test]
    fn the_form_posts_the_three_fields_to_the_card_endpoint() {
        let op = deposit(PaymentMethod::Card);
        let html = form(Lang::En, &op, CardErrors::default(), "").into_string();
        assert!(html.contains(&format!(r#"action="/pay/{}/card""#, op.id())));
        for name in ["pan", "expiry", "cvc"] {
            assert!(html.contains(&format!(r#"name="{name}""#)), "{name}");
        }
        assert!(html.contains("Pay 100.00 RUB"));
        assert!(!html.contains("role=\"alert\""));
    }

    #[test]
    fn refused_fields_are_marked_and_explained_in_russian() {
        let op = deposit(PaymentMethod::Card);
        let mut errors = ValidationErrors::default();
        errors.push("expiry", "bad");
        errors.push("cvc", "bad");
        let marks = CardErrors::from(&errors);
        assert_eq!(
            marks,
            CardErrors {
                pan: false,
                expiry: true,
                cvc: true
            }
        );
        let html = form(Lang::Ru, &op, marks, "13/<b>").into_string();
        assert!(html.contains("Проверьте данные карты"));
        assert!(html.contains("ММ/ГГ (не в прошлом)"));
        assert!(!html.contains("Введите правильный номер карты"));
        assert!(html.contains(r#"value="13/&lt;b&gt;""#), "escaped: {html}");
    }
}
