//! `docs/openapi.yaml` against the real server, so the document cannot drift.
//!
//! Every answer of the exchanges below is checked against the document: its status must be
//! declared for its path and method (requests outside the documented operations against
//! `x-unknown-path-responses` and `x-unlisted-method-responses`, a 405's `Allow` against the
//! documented methods), its required headers present and valid, its content type documented
//! and its body valid against the declared schema (JSON Schema 2020-12, `$ref`s resolved,
//! formats asserted). A body the server accepted (200, 403, 409, 422) must be valid against
//! the documented request schema. A callback the gateway really sends is checked against the
//! documented webhook. At the end every declared status of every operation must have been
//! answered by the real server (500 and 503 aside: no healthy server gives them), so the
//! document lists nothing that does not exist.

mod callbacks;
mod coverage;
mod disputes;
mod flows;
mod operations;
mod refunds;
mod refusals;
mod spec;

use actix_web::ResponseError;
use adapters_http::ApiError;
use domain::merchant::Secret;
use domain::operation::DeclineCode;
use domain::route::Flow;
use reqwest::Method;
use serde_json::Value;

use crate::helpers::{each_backend, Answer, Setup, Shop, TestApp};
use spec::Spec;

/// A test app whose every answer is checked against the document.
pub struct Checked<'a> {
    pub app: &'a TestApp,
    pub spec: &'a Spec,
}

impl Checked<'_> {
    /// A JSON POST by the main merchant.
    pub async fn post(&self, path: &str, body: &Value) -> Answer {
        self.post_as(&self.app.shop, path, body).await
    }

    /// An SBP payout of `amount` to +79001234567 by the main merchant.
    pub async fn sbp_payout(&self, amount: &str) -> Answer {
        let body = crate::helpers::sbp_withdrawal(amount, "+79001234567");
        self.post(operations::WITHDRAWALS, &body).await
    }

    /// A second cancel of the operation at `path` (under `base`) is refused as it is final,
    /// and a cancel of an unknown operation under `base` is 404.
    pub async fn assert_cancels_refused_after(&self, path: &str, base: &str) {
        let again = self.post(path, &serde_json::json!({})).await;
        again.assert_error(409, "InvalidState");
        let unknown = format!("{base}/{}/cancel", uuid::Uuid::new_v4());
        self.post(&unknown, &serde_json::json!({}))
            .await
            .assert_error(404, "NotFound");
    }

    /// A JSON POST by `shop`; an accepted body must also match the request schema.
    pub async fn post_as(&self, shop: &Shop, path: &str, body: &Value) -> Answer {
        let answer = self.app.post_as(shop, path, &body.to_string()).await;
        self.spec.check("POST", path, &answer);
        if [200, 403, 409, 422].contains(&answer.status) {
            if let Some(problem) = self.spec.request_problem("POST", path, body) {
                panic!(
                    "POST {path}: the server accepted {body}, the document refuses it: {problem}"
                );
            }
        }
        answer
    }

    /// A signed POST of `text` as it is (malformed JSON and the like).
    pub async fn post_text(&self, path: &str, text: &str) -> Answer {
        let answer = self.app.post(path, text).await;
        self.spec.check("POST", path, &answer);
        answer
    }

    /// A signed GET by the main merchant.
    pub async fn get(&self, path: &str) -> Answer {
        let answer = self.app.get(path).await;
        self.spec.check("GET", path, &answer);
        answer
    }

    /// Exactly this request.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<reqwest::Body>,
    ) -> Answer {
        let answer = self.app.raw(method.clone(), path, headers, body).await;
        self.spec.check(method.as_str(), path, &answer);
        answer
    }

    /// Asserts that the server refuses `body` with 400 and the document's schema does too.
    pub async fn refused_by_both(&self, path: &str, body: Value) {
        let answer = self.post(path, &body).await;
        answer.assert_error(400, "InvalidRequest");
        assert!(
            self.spec.request_problem("POST", path, &body).is_some(),
            "POST {path}: the document accepts {body}, which the server refuses: {}",
            answer.text
        );
    }
}

fn setup(rate_limit: u32, flow: Option<Flow>) -> Setup {
    Setup {
        rate_limit,
        routes: flow.map(|f| vec![(f, 200)]).unwrap_or_default(),
        pages: true,
        ..Setup::default()
    }
}

#[tokio::test]
async fn the_server_answers_as_docs_openapi_yaml_says() {
    let spec = Spec::load();
    let spec = &spec;
    each_backend(setup(0, None), |app| async move {
        let api = Checked { app: &app, spec };
        operations::deposits(&api).await;
        operations::withdrawals(&api).await;
        refusals::outside_the_operations(&api).await;
        refusals::every_operation_refuses_bad_requests(&api).await;
    })
    .await;
    each_backend(setup(1, None), |app| async move {
        refusals::every_operation_is_rate_limited(&Checked { app: &app, spec }).await;
    })
    .await;
    for flow in [Flow::InputFields, Flow::Confirmation, Flow::Instruction] {
        each_backend(setup(0, Some(flow)), |app| async move {
            let api = Checked { app: &app, spec };
            match flow {
                Flow::InputFields => flows::input_fields(&api).await,
                Flow::Confirmation => flows::confirmation(&api).await,
                Flow::Instruction => flows::instruction(&api).await,
                other => unreachable!("no flow test for {other:?}"),
            }
        })
        .await;
    }
    each_backend(setup(0, Some(Flow::Requisites)), |app| async move {
        let api = Checked { app: &app, spec };
        flows::requisites_and_the_sandbox(&api).await;
        callbacks::callbacks_are_sent_as_documented(&api).await;
        callbacks::callbacks_are_read_and_sent_again_as_documented(&api).await;
    })
    .await;
    each_backend(setup(0, None), |app| async move {
        refunds::refunds(&Checked { app: &app, spec }).await;
    })
    .await;
    each_backend(setup(0, None), |app| async move {
        disputes::appeals(&Checked { app: &app, spec }).await;
    })
    .await;
    let at_an_acquirer = Setup {
        other_provider: true,
        ..setup(0, None)
    };
    each_backend(at_an_acquirer, |app| async move {
        disputes::evidence(&Checked { app: &app, spec }).await;
    })
    .await;
    // Payouts that settle long after the test, so that one can be canceled.
    let slow = Setup {
        settle: Some(std::time::Duration::from_secs(600)),
        ..setup(0, None)
    };
    each_backend(slow, |app| async move {
        refunds::cancels(&Checked { app: &app, spec }).await;
    })
    .await;
    spec.assert_all_reached();
}

#[test]
fn every_example_in_the_document_matches_its_schema() {
    let checked = Spec::load().check_examples();
    assert!(checked >= 20, "only {checked} examples");
}

/// Every variant, so that a new one must be added here (and to the document).
fn every_api_error() -> Vec<ApiError> {
    let all = vec![
        ApiError::BadBody("body: is empty".into()),
        ApiError::InvalidFields(domain::ValidationErrors::default()),
        ApiError::Unauthorized,
        ApiError::Forbidden,
        ApiError::NotFound,
        ApiError::MethodNotAllowed,
        ApiError::DuplicateOperation,
        ApiError::InvalidState,
        ApiError::PayloadTooLarge,
        ApiError::UnsupportedMediaType,
        ApiError::NoRouteFound,
        ApiError::InsufficientBalance,
        ApiError::AmountTooSmall,
        ApiError::RefundExceedsAmount,
        ApiError::InvalidCode,
        ApiError::TooManyRequests {
            retry_after_secs: 1,
        },
        ApiError::Unavailable("database".into()),
        ApiError::Busy,
        ApiError::Internal(anyhow::anyhow!("bug")),
    ];
    for error in &all {
        match error {
            ApiError::BadBody(_)
            | ApiError::InvalidFields(_)
            | ApiError::Unauthorized
            | ApiError::Forbidden
            | ApiError::NotFound
            | ApiError::MethodNotAllowed
            | ApiError::DuplicateOperation
            | ApiError::InvalidState
            | ApiError::PayloadTooLarge
            | ApiError::UnsupportedMediaType
            | ApiError::NoRouteFound
            | ApiError::InsufficientBalance
            | ApiError::AmountTooSmall
            | ApiError::RefundExceedsAmount
            | ApiError::InvalidCode
            | ApiError::TooManyRequests { .. }
            | ApiError::Unavailable(_)
            | ApiError::Busy
            | ApiError::Internal(_) => {}
        }
    }
    all
}

/// The errorCodes each documented status may carry, from every documented error response.
fn documented_error_statuses(spec: &Spec) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for (_, _, pointer) in spec.response_maps() {
        let statuses = spec
            .resolve(&pointer)
            .1
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (status, _) in statuses {
            let (at, response) = spec.resolve(&format!("{pointer}/{status}"));
            if response["content"]["application/json"].is_null() {
                continue;
            }
            let at = format!("{at}/content/application~1json/schema");
            let code = &spec.resolve(&at).1["properties"]["errorCode"];
            let codes = code["enum"].as_array().cloned().unwrap_or_default();
            for code in codes.iter().chain(code.get("const")) {
                pairs.push((
                    code.as_str().unwrap_or_default().to_string(),
                    status.clone(),
                ));
            }
        }
    }
    pairs
}

/// The strings of a JSON array (none if it is not one).
fn strings(array: &Value) -> Vec<&str> {
    array
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

#[test]
fn the_document_knows_every_error_code_with_its_status() {
    let spec = Spec::load();
    let documented = documented_error_statuses(&spec);
    let listed = spec.resolve("/components/schemas/ErrorCode").1["enum"].clone();
    let listed = strings(&listed);
    let errors = every_api_error();
    for error in &errors {
        let (code, status) = (error.code(), error.status_code().as_u16().to_string());
        assert!(listed.contains(&code), "{code} is not in ErrorCode");
        assert!(
            documented.contains(&(code.to_string(), status.clone())),
            "no documented {status} response carries {code}"
        );
    }
    for code in listed {
        assert!(
            errors.iter().any(|e| e.code() == code),
            "{code} is documented but never answered"
        );
    }
}

/// `AmountDigits` lists exactly the active codes whose exponent is not two, as the gateway's
/// ISO 4217 table has them: every three-letter code is asked.
#[test]
fn the_document_lists_the_currencies_whose_amounts_are_not_two_digit() {
    let mut table: [Vec<String>; 3] = Default::default();
    for a in b'A'..=b'Z' {
        for b in b'A'..=b'Z' {
            for c in b'A'..=b'Z' {
                let code = String::from_utf8(vec![a, b, c]).expect("ASCII");
                let currency = domain::Currency::parse(&code).expect("three letters");
                if !currency.is_active() {
                    continue;
                }
                match currency.exponent() {
                    0 => table[0].push(code),
                    3 => table[1].push(code),
                    4 => table[2].push(code),
                    _ => {}
                }
            }
        }
    }
    let spec = Spec::load();
    let mut rule = spec.resolve("/components/schemas/AmountDigits").1.clone();
    for (exponent, codes) in table.iter().enumerate() {
        let documented = strings(&rule["if"]["properties"]["currency"]["enum"]);
        assert_eq!(
            documented,
            *codes,
            "the list of exponent {}",
            [0, 3, 4][exponent]
        );
        rule = rule["else"].clone();
    }
    assert!(table[0].contains(&"JPY".to_string()) && table[1].contains(&"KWD".to_string()));
}

#[test]
fn the_document_knows_every_decline_code() {
    let spec = Spec::load();
    let documented = spec.resolve("/components/schemas/DeclineCode").1["enum"].clone();
    let documented = strings(&documented);
    let ours: Vec<&str> = DeclineCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(documented, ours);
}

#[test]
fn the_signing_example_in_docs_api_md_is_right() {
    use domain::signature::{bound_message, sign};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/api.md");
    let doc = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let deposit = "6465706f7369742d64656d6f2d7365637265742d6e6f742d666f722d70726f64";
    let withdrawal = "7769746864726177616c2d64656d6f2d7365637265742d6e6f742d666f722d70";
    let body = r#"{"amount":"100.00","currency":"RUB","paymentMethod":"card","userId":"user-1","merchantOperationId":"order-1"}"#;
    let stamp = "1795255200";
    assert!(doc.contains(&format!("x-timestamp: {stamp}")));
    let cancel = "/api/v1/deposits/0190d7c4-5b1e-7000-8000-00000000000a/cancel";
    // Version 2: timestamp, method, path and query, body.
    for (secret, method, target, sent) in [
        (deposit, "POST", "/api/v1/deposits", body),
        (
            deposit,
            "GET",
            "/api/v1/deposits?merchantOperationId=order-1",
            "",
        ),
        (withdrawal, "GET", "/api/v1/balance", ""),
        (deposit, "POST", cancel, "{}"),
    ] {
        assert!(doc.contains(secret) && doc.contains(target), "{target}");
        let message = bound_message(stamp, method, target, sent.as_bytes());
        let signature = sign(&Secret::new(secret), &message);
        let line = format!("x-signature: {signature}");
        assert!(
            doc.contains(&line),
            "docs/api.md should show {line} for {method} {target}"
        );
    }
    // Version 1: the body alone, then with the timestamp.
    let bare = sign(&Secret::new(deposit), body.as_bytes());
    assert!(doc.contains(&format!("`{bare}`")), "version 1: {bare}");
    for message in [body, "/api/v1/deposits?merchantOperationId=order-1"] {
        let stamped = format!("{stamp}.{message}");
        let signature = sign(&Secret::new(deposit), stamped.as_bytes());
        let line = format!("x-signature: {signature}");
        assert!(
            doc.contains(&line),
            "docs/api.md should show {line} for {stamped}"
        );
    }
}
