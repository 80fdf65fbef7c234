//! `sbp_qr`: the QR code on the payment page, and the sandbox bank app its code opens
//! (`GET /sandbox/qr/{id}` with Confirm and Reject, `POST /sandbox/qr/{id}/decision`).

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::operation::Operation;
use domain::service::{Checkout, Gateway};
use domain::PaymentMethod;
use maud::{html, Markup};

use super::bank::{bank_page, Decision};
use super::i18n::{Lang, PageTexts};
use super::layout::{page, see_other, shell, summary};
use super::outcome::{
    bad_request, elsewhere_page, failure, not_found, result_path, status_page, Visit,
};
use super::stage::{stage, Stage};
use super::PageDeposit;

/// The payment page of an `sbp_qr` deposit: its QR code to scan with a bank app.
pub fn qr_page(lang: Lang, op: &Operation, qr: Option<&str>) -> Markup {
    let t = lang.texts();
    let body = html! {
        (summary(lang, op))
        h1 { (t.qr_title) }
        @if let Some(uri) = qr {
            img.qr src=(uri) alt=(t.qr_title);
        }
        p { (t.qr_hint) }
    };
    shell(t, t.qr_title, body)
}

fn decision_path(op: &Operation) -> String {
    format!("/sandbox/qr/{}/decision", op.id())
}

/// `GET /sandbox/qr/{id}`: the bank app's page for the scanned code.
#[tracing::instrument(name = "pages.qr_app", skip_all, fields(operation.id = %deposit.op.id()))]
pub async fn bank_app(deposit: PageDeposit, gateway: web::Data<Gateway>) -> HttpResponse {
    // Only an `sbp_qr` deposit is a QR payment.
    if deposit.op.method() != PaymentMethod::SbpQr {
        return not_found(deposit.lang);
    }
    let PageDeposit { lang, op } = deposit;
    match stage(&op, gateway.clock().now()) {
        Stage::Final | Stage::Expired => {
            page(StatusCode::OK, lang, status_page(lang, &op, Visit::Again))
        }
        Stage::Qr { .. } => {
            let t = lang.texts();
            page(
                StatusCode::OK,
                lang,
                bank_page(lang, &op, t.bank_app, &decision_path(&op), None),
            )
        }
        Stage::Card | Stage::SbpBanks | Stage::Bank(_) | Stage::Elsewhere => {
            elsewhere_page(lang, &op)
        }
    }
}

/// `POST /sandbox/qr/{id}/decision`: Confirm or Reject in the bank app, then the result page.
/// The payer is on a phone, not on the merchant's site, so the merchant's URLs are not used.
#[tracing::instrument(name = "pages.qr_decision", skip_all, fields(operation.id = %deposit.op.id()))]
pub async fn decide(
    decision: web::Form<Decision>,
    deposit: PageDeposit,
    checkout: web::Data<Checkout>,
) -> HttpResponse {
    // Only an `sbp_qr` deposit is a QR payment.
    if deposit.op.method() != PaymentMethod::SbpQr {
        return not_found(deposit.lang);
    }
    let PageDeposit { lang, op } = deposit;
    let Some(approve) = decision.approve() else {
        return bad_request(lang);
    };
    match checkout.decide(op.id(), approve).await {
        Ok(done) => see_other(&result_path(done.id())),
        Err(error) => failure(lang, error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::stage::tests::deposit;

    #[test]
    fn the_payment_page_shows_the_qr_image() {
        let op = deposit(PaymentMethod::SbpQr);
        let html = qr_page(Lang::En, &op, Some("data:image/png;base64,AAAA")).into_string();
        assert!(html.contains(r#"src="data:image/png;base64,AAAA""#));
        assert!(html.contains("Scan the QR code"));
        assert!(!qr_page(Lang::Ru, &op, None).into_string().contains("<img"));
    }

    #[test]
    fn the_bank_app_posts_to_its_own_decision_endpoint() {
        let op = deposit(PaymentMethod::SbpQr);
        assert_eq!(
            decision_path(&op),
            format!("/sandbox/qr/{}/decision", op.id())
        );
    }
}
