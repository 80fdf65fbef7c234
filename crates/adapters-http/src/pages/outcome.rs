//! Where a payer goes after a result, the result and "finished" pages, and failures as pages.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use domain::operation::{DeclineCode, Operation};
use domain::service::CheckoutError;
use domain::{OperationId, Status};
use maud::{html, Markup};

use super::i18n::{Lang, PageTexts};
use super::layout::{page, see_other, shell, summary};

/// The gateway's own result page of an operation.
pub fn result_path(id: OperationId) -> String {
    format!("/pay/{id}/result")
}

/// The payment page of an operation.
pub fn pay_path(id: OperationId) -> String {
    format!("/pay/{id}")
}

/// After a step the payer made: to `successUrl` / `failUrl` when the merchant gave them, else
/// to the result page; an operation still processing goes back to its payment page.
pub fn after_step(op: &Operation) -> HttpResponse {
    let merchant_url = match op.status() {
        Status::Approved => op.urls().success.as_ref(),
        Status::Declined => op.urls().fail.as_ref(),
        Status::Processing => return see_other(&pay_path(op.id())),
    };
    match merchant_url {
        Some(url) => see_other(url.as_str()),
        None => see_other(&result_path(op.id())),
    }
}

/// Whether a status page follows the payer's own step or a later visit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    /// The result page right after the step.
    Result,
    /// Any page of an operation that was already final or expired: says that nothing changed.
    Again,
}

/// The page of a final or expired operation.
pub fn status_page(lang: Lang, op: &Operation, visit: Visit) -> Markup {
    let t = lang.texts();
    let expired = op.status() == Status::Processing
        || op.decline().is_some_and(|d| d.code == DeclineCode::Expired);
    let (title, class) = match op.status() {
        Status::Approved => (t.approved_title, "ok"),
        Status::Declined if expired => (t.expired_title, "bad"),
        Status::Declined => (t.declined_title, "bad"),
        Status::Processing => (t.expired_title, "bad"),
    };
    let back = match op.status() {
        Status::Approved => op.urls().success.as_ref(),
        Status::Declined | Status::Processing => op.urls().fail.as_ref(),
    };
    let body = html! {
        (summary(lang, op))
        h1 class=(class) { (title) }
        @if let Some(decline) = op.decline().as_ref().filter(|_| !expired) {
            p { (t.reason) ": " (t.decline(decline.code)) }
        }
        @if expired {
            p { (t.expired_hint) }
        }
        @if visit == Visit::Again {
            p.note { (t.already_finished) }
        }
        @if let Some(url) = back {
            a.button href=(url.as_str()) { (t.back_to_store) }
        }
    };
    shell(t, title, body)
}

/// An operation that is processing but not on this page (wrong page, or another flow).
pub fn elsewhere_page(lang: Lang, op: &Operation) -> HttpResponse {
    let t = lang.texts();
    let body = html! {
        (summary(lang, op))
        h1 { (t.processing_title) }
        p { (t.elsewhere) }
    };
    page(
        StatusCode::CONFLICT,
        lang,
        shell(t, t.processing_title, body),
    )
}

/// A simple message page: a title and a hint.
fn message(
    lang: Lang,
    status: StatusCode,
    title: &str,
    hint: &str,
    extra: Option<&str>,
) -> HttpResponse {
    let t = lang.texts();
    let body = html! {
        h1 { (title) }
        p { (hint) @if let Some(extra) = extra { " " code { (extra) } } }
    };
    page(status, lang, shell(t, title, body))
}

/// 404: no such payment (or an id that is not one).
pub fn not_found(lang: Lang) -> HttpResponse {
    let t = lang.texts();
    message(
        lang,
        StatusCode::NOT_FOUND,
        t.not_found_title,
        t.not_found_hint,
        None,
    )
}

/// 400: a form or query that could not be read.
pub fn bad_request(lang: Lang) -> HttpResponse {
    let t = lang.texts();
    message(
        lang,
        StatusCode::BAD_REQUEST,
        t.bad_request_title,
        t.bad_request_hint,
        None,
    )
}

/// 405 on a page path, as a page.
pub fn method_not_allowed(lang: Lang) -> HttpResponse {
    let t = lang.texts();
    message(
        lang,
        StatusCode::METHOD_NOT_ALLOWED,
        t.bad_request_title,
        t.bad_request_hint,
        None,
    )
}

/// 503: storage or the provider cannot be reached; nothing changed.
pub fn unavailable(lang: Lang) -> HttpResponse {
    let t = lang.texts();
    message(
        lang,
        StatusCode::SERVICE_UNAVAILABLE,
        t.unavailable_title,
        t.unavailable_hint,
        None,
    )
}

/// 429: a page asked for too often; `Retry-After` says when to ask again.
pub fn too_many(lang: Lang, wait: std::time::Duration) -> HttpResponse {
    let t = lang.texts();
    let mut answer = message(
        lang,
        StatusCode::TOO_MANY_REQUESTS,
        t.too_many_title,
        t.too_many_hint,
        None,
    );
    answer.headers_mut().insert(
        actix_web::http::header::RETRY_AFTER,
        actix_web::http::header::HeaderValue::from(crate::rate_limit::retry_after_secs(wait)),
    );
    answer
}

/// 500: logged here, once, with a correlation id the page shows.
pub fn internal(lang: Lang, error: &anyhow::Error) -> HttpResponse {
    let correlation = uuid::Uuid::new_v4().to_string();
    tracing::error!(correlation.id = %correlation, error = format!("{error:#}"), "page failed");
    let t = lang.texts();
    message(
        lang,
        StatusCode::INTERNAL_SERVER_ERROR,
        t.internal_title,
        t.internal_hint,
        Some(&correlation),
    )
}

/// A failed hosted-page step as a page. A finished or expired operation shows its state and
/// is never redirected again.
pub fn failure(lang: Lang, error: CheckoutError) -> HttpResponse {
    match error {
        CheckoutError::NotFound => not_found(lang),
        CheckoutError::NotWaiting(op) => match op.status() {
            Status::Approved | Status::Declined => page(
                StatusCode::CONFLICT,
                lang,
                status_page(lang, &op, Visit::Again),
            ),
            Status::Processing => elsewhere_page(lang, &op),
        },
        // Only the card form has fields; it renders its own errors before getting here.
        CheckoutError::Invalid(_) => bad_request(lang),
        CheckoutError::Unavailable(why) => {
            tracing::warn!(reason = %domain::ports::Chain(why.as_ref()), "page step unavailable");
            unavailable(lang)
        }
        CheckoutError::Unknown(error) => internal(lang, &error),
    }
}

#[cfg(test)]
mod tests {
    use actix_web::http::header;
    use domain::operation::{Decline, OperationUrls, Outcome};
    use domain::{HttpUrl, PaymentMethod, Timestamp};

    use super::*;
    use crate::pages::layout::tests::header_of;
    use crate::pages::stage::tests::{deposit, deposit_builder, NOW};

    fn at() -> Timestamp {
        Timestamp::from_millis(NOW).plus_seconds(5)
    }

    fn with_urls(method: PaymentMethod) -> Operation {
        deposit_builder(method)
            .urls(OperationUrls {
                success: HttpUrl::parse("https://shop.example/ok").ok(),
                fail: HttpUrl::parse("https://shop.example/fail").ok(),
                ..OperationUrls::default()
            })
            .build()
    }

    fn location(response: &HttpResponse) -> &str {
        header_of(response, header::LOCATION)
    }

    #[test]
    fn results_go_to_the_merchant_urls_or_the_result_page() {
        let op = with_urls(PaymentMethod::Card);
        let approved = op.finish(&Outcome::Approve, at()).expect("processing");
        let declined = op
            .finish(
                &Outcome::Decline(Decline::new(DeclineCode::CardDeclined)),
                at(),
            )
            .expect("processing");
        assert_eq!(location(&after_step(&approved)), "https://shop.example/ok");
        assert_eq!(
            location(&after_step(&declined)),
            "https://shop.example/fail"
        );
        let bare = deposit(PaymentMethod::Card)
            .finish(&Outcome::Approve, at())
            .expect("processing");
        assert_eq!(location(&after_step(&bare)), result_path(bare.id()));
        assert_eq!(location(&after_step(&op)), pay_path(op.id()));
    }

    #[test]
    fn the_result_page_names_the_reason_in_the_language() {
        let declined = deposit(PaymentMethod::BankBPay)
            .finish(
                &Outcome::Decline(Decline::new(DeclineCode::PaymentRejected)),
                at(),
            )
            .expect("processing");
        let ru = status_page(Lang::Ru, &declined, Visit::Result).into_string();
        assert!(ru.contains("Платёж отклонён"), "{ru}");
        assert!(ru.contains("Причина"));
        assert!(ru.contains("100,00 RUB"));
        assert!(!ru.contains("уже завершён"));
        let again = status_page(Lang::En, &declined, Visit::Again).into_string();
        assert!(again.contains("already finished"), "{again}");
        assert!(again.contains("The payment was rejected."));
    }

    #[test]
    fn an_expired_operation_says_so() {
        let expired = deposit(PaymentMethod::Card)
            .finish(&Outcome::Decline(Decline::new(DeclineCode::Expired)), at())
            .expect("processing");
        let html = status_page(Lang::En, &expired, Visit::Again).into_string();
        assert!(html.contains("Time to pay has run out"), "{html}");
        let waiting = status_page(Lang::En, &deposit(PaymentMethod::Card), Visit::Again);
        assert!(waiting.into_string().contains("Time to pay has run out"));
    }

    #[test]
    fn a_finished_operation_links_back_to_the_store_without_redirecting() {
        let approved = with_urls(PaymentMethod::Card)
            .finish(&Outcome::Approve, at())
            .expect("processing");
        let response = failure(Lang::En, CheckoutError::NotWaiting(Box::new(approved)));
        assert_eq!(response.status(), StatusCode::CONFLICT);
        assert!(response.headers().get(header::LOCATION).is_none());
    }

    #[test]
    fn too_many_requests_is_a_429_page_saying_when_to_come_back() {
        let answer = too_many(Lang::Ru, std::time::Duration::from_millis(100));
        assert_eq!(answer.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(header_of(&answer, header::RETRY_AFTER), "1");
        assert_eq!(header_of(&answer, header::CONTENT_LANGUAGE), "ru");
        let late = too_many(Lang::En, std::time::Duration::from_millis(1_500));
        assert_eq!(header_of(&late, header::RETRY_AFTER), "2");
    }

    #[test]
    fn failures_become_pages_with_their_status() {
        assert_eq!(failure(Lang::En, CheckoutError::NotFound).status(), 404);
        assert_eq!(
            failure(Lang::En, CheckoutError::Unavailable("db".into())).status(),
            503
        );
        let internal = failure(Lang::En, CheckoutError::Unknown(anyhow::anyhow!("secret")));
        assert_eq!(internal.status(), 500);
    }
}
