//! In-process tests of the whole app (edge middleware, routes, errors) on mock ports.

mod cancel;
mod checks;
mod flows;
mod read_shapes;
mod refunds;

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::header;
use actix_web::test::{self, TestRequest};
use actix_web::web;
use domain::merchant::Secret;
use domain::signature::sign;
use serde_json::Value;

use crate::state::{AlwaysReady, HttpSettings, HttpState, Readiness};
use crate::test_support::{Mocks, DEPOSIT_SECRET, MERCHANT, WITHDRAWAL_SECRET};

/// The app on `mocks`, with `settings`.
async fn service(
    mocks: Mocks,
    settings: HttpSettings,
    readiness: std::sync::Arc<dyn Readiness>,
) -> impl Service<
    actix_http::Request,
    Response = ServiceResponse<impl MessageBody>,
    Error = actix_web::Error,
> {
    let state = HttpState::new(mocks.gateway(), readiness, settings);
    test::init_service(crate::app(web::Data::new(state), |_| {})).await
}

async fn default_service(
    mocks: Mocks,
) -> impl Service<
    actix_http::Request,
    Response = ServiceResponse<impl MessageBody>,
    Error = actix_web::Error,
> {
    service(
        mocks,
        HttpSettings::default(),
        std::sync::Arc::new(AlwaysReady),
    )
    .await
}

fn deposit_sig(message: &[u8]) -> String {
    sign(&Secret::new(DEPOSIT_SECRET), message)
}

fn withdrawal_sig(message: &[u8]) -> String {
    sign(&Secret::new(WITHDRAWAL_SECRET), message)
}

/// A POST with a JSON body signed with `signature`.
fn post(path: &str, body: &str, signature: &str) -> TestRequest {
    TestRequest::post()
        .uri(path)
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .insert_header(("merchant-id", MERCHANT))
        .insert_header(("x-signature", signature))
        .set_payload(body.to_string())
}

/// A POST of `body` to `path` (one that names an operation) signed with version 2 over
/// `signed` by `secret`, stamped at the mocks' clock.
fn post_v2_over(path: &str, body: &str, signed: &[u8], secret: &str) -> TestRequest {
    let stamp = crate::test_support::now()
        .millis()
        .div_euclid(1000)
        .to_string();
    let message = domain::signature::bound_message(&stamp, "POST", path, signed);
    let signature = sign(&Secret::new(secret), &message);
    post(path, body, &signature)
        .insert_header(("x-signature-version", "2"))
        .insert_header(("x-timestamp", stamp))
}

/// A POST of `body` to `path` signed with version 2 by `secret`.
fn post_v2(path: &str, body: &str, secret: &str) -> TestRequest {
    post_v2_over(path, body, body.as_bytes(), secret)
}

/// A POST of `body` to the deposits, signed with the deposit secret.
fn post_deposit(body: &str) -> TestRequest {
    post("/api/v1/deposits", body, &deposit_sig(body.as_bytes()))
}

/// A GET signed over its path and query with `signature`.
fn get(path: &str, signature: &str) -> TestRequest {
    TestRequest::get()
        .uri(path)
        .insert_header(("merchant-id", MERCHANT))
        .insert_header(("x-signature", signature))
}

/// Status, headers and the JSON body of an answer.
async fn call<S, B>(app: &S, req: TestRequest) -> (u16, header::HeaderMap, Value)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let (status, headers, bytes) = crate::test_support::send(app, req).await;
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, headers, body)
}

/// Asserts the contract's error body with `code` and no `details`.
fn assert_error(body: &Value, code: &str) {
    assert_eq!(body["errorCode"], code, "{body}");
    assert!(body["errorMessage"].is_string(), "{body}");
    assert!(body.get("details").is_none(), "{body}");
}
