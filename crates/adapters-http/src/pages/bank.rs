//! SBP's bank list, the bank page with Confirm and Reject, and the decision they post.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::operation::Operation;
use domain::service::{Checkout, Gateway};
use maud::{html, Markup};
use serde::Deserialize;

use super::i18n::{Lang, PageTexts};
use super::layout::{page, see_other, shell, summary};
use super::outcome::{after_step, bad_request, failure, not_found, pay_path};
use super::stage::{stage, Stage};
use super::PageDeposit;
use super::PageId;

/// The bank picked on the SBP list (`?bank=ID` or a form field).
#[derive(Debug, Deserialize)]
pub struct BankChoice {
    #[serde(default)]
    bank: String,
}

/// A Confirm (`approve=true`) or Reject (`approve=false`) press.
#[derive(Debug, Deserialize)]
pub struct Decision {
    #[serde(default)]
    approve: String,
}

impl Decision {
    /// `Some(true)` for Confirm, `Some(false)` for Reject, `None` for anything else.
    pub fn approve(&self) -> Option<bool> {
        match self.approve.as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }
}

/// The SBP bank list: one button per bank, each opening that bank's page.
pub fn banks_page(lang: Lang, op: &Operation, banks: &[(String, String)], refused: bool) -> Markup {
    let t = lang.texts();
    let action = format!("/pay/{}/sbp", op.id());
    let body = html! {
        (summary(lang, op))
        h1 { (t.sbp_title) }
        @if refused { p.errors role="alert" { (t.unknown_bank) } }
        p { (t.choose_bank) }
        form.banks method="get" action=(action) {
            @for (id, name) in banks {
                button type="submit" name="bank" value=(id) { (name) }
            }
        }
    };
    shell(t, t.sbp_title, body)
}

/// A bank's page: the payment and Confirm / Reject, posted to `action`.
pub fn bank_page(
    lang: Lang,
    op: &Operation,
    bank: &str,
    action: &str,
    back: Option<&str>,
) -> Markup {
    let t = lang.texts();
    let body = html! {
        p.label { (bank) }
        (summary(lang, op))
        h1 { (t.bank_prompt) }
        form method="post" action=(action) {
            button type="submit" name="approve" value="true" { (t.confirm) }
        }
        form method="post" action=(action) {
            button.reject type="submit" name="approve" value="false" { (t.reject) }
        }
        @if let Some(back) = back {
            p { a href=(back) { (t.other_bank) } }
        }
        p.note { (t.test_mode) }
    };
    shell(t, bank, body)
}

/// The decision endpoint of the payment pages.
pub fn decision_path(op: &Operation) -> String {
    format!("/pay/{}/decision", op.id())
}

/// `GET /pay/{id}/sbp?bank=ID`: the chosen bank's page.
#[tracing::instrument(name = "pages.sbp_bank", skip_all, fields(operation.id = %deposit.op.id()))]
pub async fn choose_by_query(
    choice: web::Query<BankChoice>,
    deposit: PageDeposit,
    checkout: web::Data<Checkout>,
    gateway: web::Data<Gateway>,
) -> HttpResponse {
    chosen(deposit, &choice.bank, &checkout, &gateway)
}

/// `POST /pay/{id}/sbp` with `bank=ID` in the form: the same as the `GET`.
#[tracing::instrument(name = "pages.sbp_bank", skip_all, fields(operation.id = %deposit.op.id()))]
pub async fn choose_by_form(
    choice: web::Form<BankChoice>,
    deposit: PageDeposit,
    checkout: web::Data<Checkout>,
    gateway: web::Data<Gateway>,
) -> HttpResponse {
    chosen(deposit, &choice.bank, &checkout, &gateway)
}

fn chosen(
    deposit: PageDeposit,
    bank: &str,
    checkout: &Checkout,
    gateway: &Gateway,
) -> HttpResponse {
    let PageDeposit { lang, op } = deposit;
    if stage(&op, gateway.clock().now()) != Stage::SbpBanks {
        // The payment page shows whatever this operation needs now (or that it is finished).
        return see_other(&pay_path(op.id()));
    }
    let banks = checkout.sbp_banks();
    match banks.iter().find(|(known, _)| known == bank) {
        Some((_, name)) => page(
            StatusCode::OK,
            lang,
            bank_page(
                lang,
                &op,
                name,
                &decision_path(&op),
                Some(&pay_path(op.id())),
            ),
        ),
        None => page(
            StatusCode::UNPROCESSABLE_ENTITY,
            lang,
            banks_page(lang, &op, &banks, true),
        ),
    }
}

/// `POST /pay/{id}/decision`: Confirm or Reject on a bank page, then on to the result.
#[tracing::instrument(name = "pages.decision", skip_all, fields(operation.id = ?target.id))]
pub async fn decide(
    decision: web::Form<Decision>,
    target: PageId,
    checkout: web::Data<Checkout>,
) -> HttpResponse {
    let PageId { lang, id } = target;
    let Some(id) = id else {
        return not_found(lang);
    };
    let Some(approve) = decision.approve() else {
        return bad_request(lang);
    };
    match checkout.decide(id, approve).await {
        Ok(op) => after_step(&op),
        Err(error) => failure(lang, error),
    }
}

#[cfg(test)]
mod tests {
    use domain::PaymentMethod;

    use super::*;
    use crate::pages::stage::tests::deposit;

    fn decision(text: &str) -> Option<bool> {
        Decision {
            approve: text.into(),
        }
        .approve()
    }

    #[test]
    fn only_true_and_false_are_decisions() {
        assert_eq!(decision("true"), Some(true));
        assert_eq!(decision("false"), Some(false));
        for other in ["", "TRUE", "1", "yes", "true "] {
            assert_eq!(decision(other), None, "{other:?}");
        }
    }

    #[test]
    fn the_bank_list_has_one_button_per_bank() {
        let op = deposit(PaymentMethod::Sbp);
        let banks = vec![
            ("bank_a".to_string(), "Bank A".to_string()),
            ("bank_b".to_string(), "Bank <B>".to_string()),
        ];
        let html = banks_page(Lang::En, &op, &banks, false).into_string();
        assert!(html.contains(&format!(r#"action="/pay/{}/sbp""#, op.id())));
        assert!(html.contains(r#"name="bank" value="bank_a""#));
        assert!(html.contains("Bank &lt;B&gt;"));
        assert!(!html.contains("role=\"alert\""));
        let refused = banks_page(Lang::Ru, &op, &banks, true).into_string();
        assert!(refused.contains("Выберите банк из списка"));
    }

    #[test]
    fn the_bank_page_posts_confirm_and_reject() {
        let op = deposit(PaymentMethod::BankAPay);
        let html = bank_page(Lang::En, &op, "Bank A Pay", &decision_path(&op), None).into_string();
        assert!(html.contains(&format!(r#"action="/pay/{}/decision""#, op.id())));
        assert!(html.contains(r#"name="approve" value="true""#));
        assert!(html.contains(r#"name="approve" value="false""#));
        assert!(html.contains("Confirm") && html.contains("Reject"));
        assert!(!html.contains("Choose another bank"));
    }
}
