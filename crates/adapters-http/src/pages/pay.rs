//! `GET /pay/{id}` (the page the deposit's method needs) and `GET /pay/{id}/result`.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::service::{Checkout, Gateway};

use super::bank::{bank_page, banks_page, decision_path};
use super::card::{form, CardErrors};
use super::layout::{page, see_other};
use super::outcome::{elsewhere_page, pay_path, status_page, Visit};
use super::qr::qr_page;
use super::stage::{stage, Stage};
use super::PageDeposit;

/// `GET /pay/{id}`: the card form, the SBP bank list, the bank page or the QR code; for a
/// finished or expired payment, its state (nothing changes).
#[tracing::instrument(name = "pages.pay", skip_all, fields(operation.id = %deposit.op.id()))]
pub async fn show(
    deposit: PageDeposit,
    checkout: web::Data<Checkout>,
    gateway: web::Data<Gateway>,
) -> HttpResponse {
    let PageDeposit { lang, op } = deposit;
    let markup = match stage(&op, gateway.clock().now()) {
        Stage::Final | Stage::Expired => status_page(lang, &op, Visit::Again),
        Stage::Card => form(lang, &op, CardErrors::default(), ""),
        Stage::SbpBanks => banks_page(lang, &op, &checkout.sbp_banks(), false),
        Stage::Bank(bank) => bank_page(lang, &op, bank.name(), &decision_path(&op), None),
        Stage::Qr { qr } => qr_page(lang, &op, qr),
        Stage::Elsewhere => return elsewhere_page(lang, &op),
    };
    page(StatusCode::OK, lang, markup)
}

/// `GET /pay/{id}/result`: the gateway's own result page; a payment still waiting goes back
/// to its payment page.
#[tracing::instrument(name = "pages.result", skip_all, fields(operation.id = %deposit.op.id()))]
pub async fn result(deposit: PageDeposit, gateway: web::Data<Gateway>) -> HttpResponse {
    let PageDeposit { lang, op } = deposit;
    match stage(&op, gateway.clock().now()) {
        Stage::Final | Stage::Expired => {
            page(StatusCode::OK, lang, status_page(lang, &op, Visit::Result))
        }
        Stage::Card | Stage::SbpBanks | Stage::Bank(_) | Stage::Qr { .. } | Stage::Elsewhere => {
            see_other(&pay_path(op.id()))
        }
    }
}
