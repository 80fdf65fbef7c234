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

use super::i18n::{Lang, PageTexts};
use super::layout::{page, see_other, shell, summary};
use super::outcome::{failure, result_path, status_page, Visit};
use super::PageId;
use crate::rate_limit::RateLimiter;

/// How long `/pay/{id}/return` waits for a processing deposit to become final.
const RETURN_WAIT: Duration = Duration::from_secs(5);
/// How often it looks while waiting.
const RETURN_POLL: Duration = Duration::from_millis(250);
/// Seconds between refreshes of the payment page while the acquirer's page is not known.
const PAY_REFRESH_SECS: u32 = 3;
/// Seconds between refreshes of the result page while the deposit is processing.
const RESULT_REFRESH_SECS: u32 = 5;
/// Requests per second (and burst) `/pay/{id}/return` answers for one operation, per process.
pub const RETURN_LIMIT_PER_SEC: u32 = 10;

/// The per-operation limit of `/pay/{id}/return`: one for the whole process, shared by its
/// workers.
pub type ReturnLimiter = RateLimiter<OperationId>;

/// `GET /pay/{id}` for an acquirer deposit; `None` when `id` is not one (the sandbox's page
/// may serve it).
pub async fn pay(lang: Lang, id: OperationId, gateway: &Gateway) -> Option<HttpResponse> {
    match gateway.steps().pay_page(id).await {
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
/// from the acquirer (at most once per operation per two seconds, see `Steps::pay_return`)
/// and given up to five seconds; then Approved goes to `successUrl`, Declined to `failUrl`,
/// still processing to `processingUrl`, each else to the result page. Beyond
/// [`RETURN_LIMIT_PER_SEC`] requests per second for one operation, 429.
#[tracing::instrument(name = "pages.return", skip_all, fields(operation.id))]
pub async fn back_from_acquirer(
    page_id: PageId,
    gateway: web::Data<Gateway>,
    limiter: web::Data<ReturnLimiter>,
) -> HttpResponse {
    let PageId { lang, id } = page_id;
    let Some(id) = id else {
        return super::outcome::not_found(lang);
    };
    tracing::Span::current().record("operation.id", tracing::field::display(id));
    if let Err(wait) = limiter.check(&id) {
        tracing::info!("return page asked for too often");
        return super::outcome::too_many(lang, wait);
    }
    let mut op = match gateway.steps().pay_return(id).await {
        Ok(op) => op,
        Err(error) => return failure(lang, error.into()),
    };
    let deadline = std::time::Instant::now() + RETURN_WAIT;
    while op.status() == Status::Processing && std::time::Instant::now() < deadline {
        actix_web::rt::time::sleep(RETURN_POLL).await;
        match gateway.steps().acquirer_deposit(id).await {
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
    match gateway.steps().acquirer_deposit(id).await {
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

#[cfg(test)]
mod tests {
    use actix_web::http::header;
    use actix_web::test::{self, TestRequest};
    use actix_web::App;
    use domain::{OperationId, Status};

    use crate::pages::mount;
    use crate::test_support::{deposit_builder, op_id, Mocks};

    fn other_id() -> OperationId {
        OperationId::parse("6f1c0000-0000-4000-8000-000000000002").expect("an id")
    }

    /// Returns in a row for one approved deposit: the first ten (and one more per 100 ms
    /// the test takes) go on to the result, the next is a 429 page with `Retry-After`;
    /// another operation has a limit of its own, and a refused request reads nothing.
    #[actix_web::test]
    async fn beyond_ten_returns_a_second_for_one_operation_the_page_is_429() {
        let mut mocks = Mocks::new();
        let reads = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = reads.clone();
        mocks.store.expect_get().returning(move |id| {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(Some(
                deposit_builder(Status::Approved, None)
                    .id(id)
                    .provider("bank")
                    .build(),
            ))
        });
        let app = test::init_service(App::new().configure(mount(None, mocks.gateway()))).await;
        let path = |id: OperationId| format!("/pay/{id}/return?from=acquirer");

        let started = std::time::Instant::now();
        let mut passed = 0;
        let limited = loop {
            let request = TestRequest::get()
                .uri(&path(op_id()))
                .insert_header((header::ACCEPT_LANGUAGE, "en"));
            let answer = test::call_service(&app, request.to_request()).await;
            if answer.status() != 303 {
                break answer;
            }
            passed += 1;
            assert!(passed <= 100, "never limited");
        };
        let refilled = started.elapsed().as_millis() / 100;
        let burst = usize::try_from(super::RETURN_LIMIT_PER_SEC).unwrap_or(0);
        assert!(passed >= burst, "a burst of ten: {passed}");
        assert!(
            passed <= burst + usize::try_from(refilled).unwrap_or(0),
            "{passed} passed"
        );
        assert_eq!(limited.status(), 429);
        assert_eq!(
            limited
                .headers()
                .get(header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok()),
            Some("1")
        );
        let body = test::read_body(limited).await;
        assert!(
            String::from_utf8_lossy(&body).contains("Too many requests"),
            "an HTML page"
        );
        assert_eq!(
            reads.load(std::sync::atomic::Ordering::SeqCst),
            passed,
            "the refused requests read nothing"
        );

        let other =
            test::call_service(&app, TestRequest::get().uri(&path(other_id())).to_request()).await;
        assert_eq!(other.status(), 303, "another operation is not limited");
    }
}
