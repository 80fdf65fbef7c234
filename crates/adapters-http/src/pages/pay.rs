//! `GET /pay/{id}` (the page the deposit's method needs) and `GET /pay/{id}/result`, for
//! sandbox and acquirer deposits alike.

use actix_web::http::StatusCode;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use domain::service::{Checkout, Gateway};

use super::bank::{bank_page, banks_page, decision_path};
use super::card::{form, CardErrors};
use super::layout::{page, see_other};
use super::outcome::{elsewhere_page, pay_path, status_page, Visit};
use super::qr::qr_page;
use super::stage::{stage, Stage};
use super::{acquirer, PageDeposit, PageId};

/// `GET /pay/{id}`: an acquirer deposit goes on to the acquirer's page; a sandbox deposit gets
/// the card form, the SBP bank list, the bank page or the QR code; a finished or expired
/// payment shows its state (nothing changes).
#[tracing::instrument(name = "pages.pay", skip_all)]
pub async fn show(page_id: PageId, req: HttpRequest, gateway: web::Data<Gateway>) -> HttpResponse {
    let Some(id) = page_id.id else {
        return super::outcome::not_found(page_id.lang);
    };
    if let Some(answer) = acquirer::pay(page_id.lang, id, &gateway).await {
        return answer;
    }
    let deposit = match PageDeposit::from_request(&req, &mut actix_web::dev::Payload::None).await {
        Ok(deposit) => deposit,
        Err(answer) => return answer.error_response(),
    };
    let Some(checkout) = req.app_data::<web::Data<Checkout>>() else {
        return super::outcome::not_found(page_id.lang);
    };
    sandbox_page(deposit, checkout, &gateway)
}

/// The sandbox's page for a deposit waiting on it.
fn sandbox_page(deposit: PageDeposit, checkout: &Checkout, gateway: &Gateway) -> HttpResponse {
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

/// `GET /pay/{id}/result`: the gateway's own result page; a sandbox payment still waiting
/// goes back to its payment page, an acquirer one shows a page that refreshes.
#[tracing::instrument(name = "pages.result", skip_all)]
pub async fn result(
    page_id: PageId,
    req: HttpRequest,
    gateway: web::Data<Gateway>,
) -> HttpResponse {
    let Some(id) = page_id.id else {
        return super::outcome::not_found(page_id.lang);
    };
    if let Some(answer) = acquirer::result(page_id.lang, id, &gateway).await {
        return answer;
    }
    let deposit = match PageDeposit::from_request(&req, &mut actix_web::dev::Payload::None).await {
        Ok(deposit) => deposit,
        Err(answer) => return answer.error_response(),
    };
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
