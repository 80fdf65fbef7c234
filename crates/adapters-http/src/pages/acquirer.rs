//! The pages of deposits made at an acquirer: `GET /pay/{id}` sends the payer on to the
//! acquirer's own page, `GET /pay/{id}/return` is where the acquirer sends them back, and
//! `GET /pay/{id}/result` shows the result (or refreshes while the bank is deciding).

use std::time::Duration;

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use domain::operation::Operation;
use domain::service::{Gateway, PayPage, ReadError};
use domain::{OperationId, Status};
use maud::html;

use super::i18n::Lang;
use super::layout::{page, see_other, shell, summary};
use super::outcome::{failure, result_path, status_page, Visit};
use super::PageId;

/// How long `/pay/{id}/return` waits for a processing deposit to become final.
const RETURN_WAIT: Duration = Duration::from_secs(5);
/// How often it looks while waiting.
const RETURN_POLL: Duration = Duration::from_millis(250);
/// Seconds between refreshes of the payment page while the acquirer's page is not known.
const PAY_REFRESH_SECS: u32 = 3;
/// Seconds between refreshes of the result page while the deposit is processing.
const RESULT_REFRESH_SECS: u32 = 5;

/// `GET /pay/{id}` for an acquirer deposit; `None` when `id` is not one (the sandbox's page
/// may serve it).
pub async fn pay(lang: Lang, id: OperationId, gateway: &Gateway) -> Option<HttpResponse> {
    match gateway.pay_page(id).await {
        Ok(PayPage::Acquirer(url)) => Some(see_other(&url)),
        Ok(PayPage::Final(op)) => Some(page(
            StatusCode::OK,
            lang,
            status_page(lang, &op, Visit::Again),
        )),
        Ok(PayPage::Processing(op)) => Some(processing(lang, &op, PAY_REFRESH_SECS)),
        Err(ReadError::NotFound) => None,
        Err(error) => Some(failure(lang, error.into())),
    }
}

/// `GET /pay/{id}/return` (its query string ignored): a deposit still processing is read
/// once from the acquirer and given up to five seconds; then Approved goes to `successUrl`,
/// Declined to `failUrl`, still processing to `processingUrl`, each else to the result page.
#[tracing::instrument(name = "pages.return", skip_all, fields(operation.id))]
pub async fn back_from_acquirer(page_id: PageId, gateway: web::Data<Gateway>) -> HttpResponse {
    let PageId { lang, id } = page_id;
    let Some(id) = id else {
        return super::outcome::not_found(lang);
    };
    tracing::Span::current().record("operation.id", tracing::field::display(id));
    let mut op = match gateway.pay_return(id).await {
        Ok(op) => op,
        Err(error) => return failure(lang, error.into()),
    };
    let deadline = std::time::Instant::now() + RETURN_WAIT;
    while op.status() == Status::Processing && std::time::Instant::now() < deadline {
        actix_web::rt::time::sleep(RETURN_POLL).await;
        match gateway.acquirer_deposit(id).await {
            Ok(current) => op = current,
            Err(error) => return failure(lang, error.into()),
        }
    }
    let merchant_url = match op.status() {
        Status::Approved => op.urls().success.as_ref(),
        Status::Declined => op.urls().fail.as_ref(),
        Status::Processing => op.urls().processing.as_ref(),
    };
    match merchant_url {
        Some(url) => see_other(url.as_str()),
        None => see_other(&result_path(id)),
    }
}

/// `GET /pay/{id}/result` for an acquirer deposit; `None` when `id` is not one.
pub async fn result(lang: Lang, id: OperationId, gateway: &Gateway) -> Option<HttpResponse> {
    match gateway.acquirer_deposit(id).await {
        Ok(op) if op.status() == Status::Processing => {
            Some(processing(lang, &op, RESULT_REFRESH_SECS))
        }
        Ok(op) => Some(page(
            StatusCode::OK,
            lang,
            status_page(lang, &op, Visit::Result),
        )),
        Err(ReadError::NotFound) => None,
        Err(error) => Some(failure(lang, error.into())),
    }
}

/// "The bank is deciding": a page that reloads itself every `seconds` (a `Refresh` header,
/// since the pages run no script).
fn processing(lang: Lang, op: &Operation, seconds: u32) -> HttpResponse {
    let t = lang.texts();
    let body = html! {
        (summary(lang, op))
        h1 { (t.processing_title) }
        p { (t.processing_hint) }
    };
    let mut answer = page(StatusCode::OK, lang, shell(t, t.processing_title, body));
    answer
        .headers_mut()
        .insert(header::REFRESH, header::HeaderValue::from(seconds));
    answer
}
