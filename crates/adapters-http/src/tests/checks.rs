//! The checks before the domain: 404/405, 415/413, 401, 429, 400, and the operational endpoints.

use std::sync::Arc;

use actix_web::http::header;
use actix_web::test::TestRequest;

use super::*;
use crate::test_support::Mocks;

const GOOD: &str =
    r#"{"amount": "100.00", "currency": "RUB", "paymentMethod": "card", "userId": "u-1"}"#;

#[actix_web::test]
async fn unknown_paths_are_json_404_before_authentication() {
    let app = default_service(Mocks::new()).await;
    for path in ["/", "/api/v1/nope", "/api/v1/deposits/", "/api/v2/deposits"] {
        let (status, headers, body) = call(&app, TestRequest::get().uri(path)).await;
        assert_eq!(status, 404, "{path}");
        assert_error(&body, "NotFound");
        assert_eq!(
            headers.get(header::CONTENT_TYPE).map(|v| v.as_bytes()),
            Some(&b"application/json"[..])
        );
    }
}

#[actix_web::test]
async fn wrong_methods_on_known_paths_are_json_405_with_allow() {
    let app = default_service(Mocks::new()).await;
    let cases = [
        TestRequest::delete().uri("/api/v1/deposits"),
        TestRequest::put().uri("/api/v1/withdrawals"),
        TestRequest::get().uri("/api/v1/deposits/6f1c0000-0000-4000-8000-000000000001/input"),
        TestRequest::get().uri("/api/v1/deposits/x/confirm"),
        TestRequest::post().uri("/api/v1/deposits/x"),
        TestRequest::post().uri("/api/v1/balance"),
        TestRequest::post().uri("/healthz"),
        TestRequest::delete().uri("/metrics"),
    ];
    for req in cases {
        let (status, headers, body) = call(&app, req).await;
        assert_eq!(status, 405);
        assert_error(&body, "MethodNotAllowed");
        assert!(headers.contains_key(header::ALLOW));
    }
}

#[actix_web::test]
async fn posts_need_a_json_content_type_before_authentication() {
    let app = default_service(Mocks::new()).await;
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/json; charset=latin1"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let mut req = TestRequest::post()
            .uri("/api/v1/deposits")
            .set_payload(GOOD);
        if let Some(value) = content_type {
            req = req.insert_header((header::CONTENT_TYPE, value));
        }
        let (status, _, body) = call(&app, req).await;
        assert_eq!(status, 415, "{content_type:?}");
        assert_error(&body, "UnsupportedMediaType");
    }
}

#[actix_web::test]
async fn bodies_over_64_kib_are_413_before_authentication() {
    let app = default_service(Mocks::new()).await;
    let big = format!(r#"{{"userId": "{}"}}"#, "x".repeat(64 * 1024));
    let req = TestRequest::post()
        .uri("/api/v1/withdrawals")
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .set_payload(big);
    let (status, _, body) = call(&app, req).await;
    assert_eq!(status, 413);
    assert_error(&body, "PayloadTooLarge");
}

#[actix_web::test]
async fn every_credential_failure_is_the_same_401() {
    let app = default_service(Mocks::new()).await;
    let good = deposit_sig(GOOD.as_bytes());
    let cases = [
        (
            "no headers",
            TestRequest::post()
                .uri("/api/v1/deposits")
                .insert_header((header::CONTENT_TYPE, "application/json"))
                .set_payload(GOOD),
        ),
        (
            "no signature",
            TestRequest::post()
                .uri("/api/v1/deposits")
                .insert_header((header::CONTENT_TYPE, "application/json"))
                .insert_header(("merchant-id", MERCHANT))
                .set_payload(GOOD),
        ),
        (
            "unknown merchant",
            post("/api/v1/deposits", GOOD, &good).insert_header(("merchant-id", "m-unknown")),
        ),
        (
            "malformed merchant id",
            post("/api/v1/deposits", GOOD, &good).insert_header(("merchant-id", "m 1")),
        ),
        (
            "wrong signature",
            post("/api/v1/deposits", GOOD, &deposit_sig(b"other")),
        ),
        ("not hex", post("/api/v1/deposits", GOOD, "zz")),
        (
            "withdrawal secret on a deposit",
            post("/api/v1/deposits", GOOD, &withdrawal_sig(GOOD.as_bytes())),
        ),
        (
            "deposit secret on a withdrawal",
            post("/api/v1/withdrawals", GOOD, &good),
        ),
        (
            "deposit secret on the balance",
            get("/api/v1/balance", &deposit_sig(b"/api/v1/balance")),
        ),
        (
            "altered body",
            post("/api/v1/deposits", &GOOD.replace("100.00", "900.00"), &good),
        ),
    ];
    let mut bodies = Vec::new();
    for (name, req) in cases {
        let (status, _, body) = call(&app, req).await;
        assert_eq!(status, 401, "{name}");
        assert_error(&body, "Unauthorized");
        bodies.push(body);
    }
    assert!(
        bodies.windows(2).all(|w| w[0] == w[1]),
        "one message for all"
    );
}

#[actix_web::test]
async fn signatures_in_upper_case_hex_are_accepted() {
    let app = default_service(Mocks::new()).await;
    let body = "";
    let req = post("/api/v1/deposits", body, &deposit_sig(b"").to_uppercase());
    let (status, _, body) = call(&app, req).await;
    assert_eq!(status, 400, "signed empty body gets past 401");
    assert_eq!(body["errorMessage"], "body: is empty");
}

#[actix_web::test]
async fn body_errors_are_400_without_details() {
    let app = default_service(Mocks::new()).await;
    for (body, message) in [
        ("", "body: is empty"),
        ("[]", "body: must be a JSON object"),
        ("{\"amount\": ", "body: malformed JSON"),
        ("{\"a\": 1, \"a\": 1}", "body: the key \"a\" is given twice"),
    ] {
        let req = post_deposit(body);
        let (status, _, answer) = call(&app, req).await;
        assert_eq!(status, 400, "{body}");
        assert_error(&answer, "InvalidRequest");
        let text = answer["errorMessage"].as_str().unwrap_or("");
        assert!(text.starts_with(message), "{text}");
    }
}

#[actix_web::test]
async fn field_errors_list_every_field() {
    let app = default_service(Mocks::new()).await;
    let body = r#"{"amount": 100, "currency": "rub", "paymentMethod": "cash", "x": 1}"#;
    let req = post_deposit(body);
    let (status, _, answer) = call(&app, req).await;
    assert_eq!(status, 400);
    let fields: Vec<&str> = answer["details"]
        .as_array()
        .map(|d| d.iter().filter_map(|e| e["field"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        fields,
        vec!["x", "amount", "currency", "paymentMethod", "userId"]
    );
    assert!(answer["errorMessage"]
        .as_str()
        .unwrap_or("")
        .starts_with("x: is not a known field; amount: must be a string"));
}

#[actix_web::test]
async fn the_rate_limit_answers_429_with_retry_after_after_the_signature() {
    let settings = HttpSettings {
        rate_limit_per_sec: 2,
        ..HttpSettings::default()
    };
    let app = service(Mocks::new(), settings, Arc::new(AlwaysReady)).await;
    let sig = deposit_sig(b"");
    for _ in 0..2 {
        let (status, _, _) = call(&app, post("/api/v1/deposits", "", &sig)).await;
        assert_eq!(status, 400);
    }
    let (status, _, _) = call(&app, post("/api/v1/deposits", "", "bad")).await;
    assert_eq!(status, 401, "a bad signature is refused before the limit");
    let (status, headers, body) = call(&app, post("/api/v1/deposits", "", &sig)).await;
    assert_eq!(status, 429);
    assert_error(&body, "TooManyRequests");
    assert_eq!(
        headers.get(header::RETRY_AFTER).map(|v| v.as_bytes()),
        Some(&b"1"[..])
    );
    let (status, _, _) = call(&app, TestRequest::get().uri("/healthz")).await;
    assert_eq!(status, 200, "operational endpoints are not limited");
}

#[actix_web::test]
async fn health_readiness_and_metrics_need_no_signature() {
    let app = default_service(Mocks::new()).await;
    let (status, headers, body) = call(&app, TestRequest::get().uri("/healthz")).await;
    assert_eq!((status, body), (200, serde_json::json!({"status": "ok"})));
    assert!(headers.contains_key("x-request-id"));
    let (status, _, _) = call(&app, TestRequest::get().uri("/readyz")).await;
    assert_eq!(status, 200);
    let (status, _, body) = call(&app, TestRequest::get().uri("/metrics")).await;
    assert_eq!(status, 200);
    let text = body.as_str().unwrap_or("");
    assert!(
        text.contains(r#"http_requests_total{method="GET",route="/healthz",status="200"} 1"#),
        "{text}"
    );
    assert!(text.contains(r#"route="/readyz""#), "{text}");

    let not_ready = crate::ReadyFn(|| async { false });
    let app = service(Mocks::new(), HttpSettings::default(), Arc::new(not_ready)).await;
    let (status, _, body) = call(&app, TestRequest::get().uri("/readyz")).await;
    assert_eq!(status, 503);
    assert_error(&body, "ServiceUnavailable");
}

#[actix_web::test]
async fn request_ids_are_taken_when_sane_and_made_otherwise() {
    let app = default_service(Mocks::new()).await;
    let req = TestRequest::get()
        .uri("/healthz")
        .insert_header(("x-request-id", "abc-1"));
    let (_, headers, _) = call(&app, req).await;
    assert_eq!(
        headers.get("x-request-id").map(|v| v.as_bytes()),
        Some(&b"abc-1"[..])
    );
    let req = TestRequest::get()
        .uri("/nope")
        .insert_header(("x-request-id", "bad id!"));
    let (_, headers, _) = call(&app, req).await;
    let id = headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    assert_eq!(id.len(), 32);
}

#[actix_web::test]
async fn metrics_of_other_components_share_the_registry() {
    let registry = prometheus::Registry::new();
    let counter = prometheus::IntCounter::new("callbacks_sent_total", "test").expect("valid");
    registry
        .register(Box::new(counter.clone()))
        .expect("registered");
    counter.inc();
    let state = HttpState::with_registry(
        Mocks::new().gateway(),
        Arc::new(AlwaysReady),
        HttpSettings::default(),
        registry.clone(),
    )
    .expect("names are free");
    assert!(HttpState::with_registry(
        Mocks::new().gateway(),
        Arc::new(AlwaysReady),
        HttpSettings::default(),
        registry,
    )
    .is_err());
    let app = actix_web::test::init_service(crate::app(web::Data::new(state), |_| {})).await;
    let (_, _, body) = call(&app, TestRequest::get().uri("/metrics")).await;
    assert!(body
        .as_str()
        .unwrap_or("")
        .contains("callbacks_sent_total 1"));
}

#[actix_web::test]
async fn extra_routes_get_json_errors_and_keep_their_own_bodies() {
    let state = HttpState::new(
        Mocks::new().gateway(),
        Arc::new(AlwaysReady),
        HttpSettings::default(),
    );
    let extra = |cfg: &mut web::ServiceConfig| {
        cfg.service(
            web::resource("/page")
                .route(web::get().to(|| async { actix_web::HttpResponse::Ok().body("page") })),
        )
        .service(web::resource("/html-404").route(web::get().to(|| async {
            actix_web::HttpResponse::NotFound()
                .content_type("text/html; charset=utf-8")
                .body("<p>gone</p>")
        })))
        .service(
            web::resource("/form").route(
                web::post()
                    .to(|_: web::Form<std::collections::HashMap<String, String>>| async { "ok" }),
            ),
        );
    };
    let app = actix_web::test::init_service(crate::app(web::Data::new(state), extra)).await;
    let (status, headers, body) = call(&app, TestRequest::post().uri("/page")).await;
    assert_eq!(status, 405);
    assert_error(&body, "MethodNotAllowed");
    assert!(headers.contains_key(header::ALLOW));
    let (status, _, body) = call(&app, TestRequest::get().uri("/html-404")).await;
    assert_eq!((status, body), (404, Value::String("<p>gone</p>".into())));
    let req = TestRequest::post()
        .uri("/form")
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .set_payload("{}");
    let (status, _, body) = call(&app, req).await;
    assert_eq!(status, 415, "actix's own extractor error");
    assert_error(&body, "UnsupportedMediaType");
}

/// The webhook secret of the acquirer `bank` below.
const WEBHOOK_SECRET: &str = "bank-webhook-secret-value";

/// The acquirer `bank`, whose notifications are signed with [`WEBHOOK_SECRET`].
fn bank() -> domain::provider::AcquirerProvider {
    crate::test_support::acquirer("bank", "bank-api-key-value", WEBHOOK_SECRET)
}

#[actix_web::test]
async fn notifications_past_those_in_progress_are_shed_with_503_once_authenticated() {
    use crate::state::NOTIFICATIONS_AT_ONCE as AT_ONCE;
    use domain::acquirer::{Notification, NotificationRefusal, NotifiedObject, PaymentStatus};
    let mut providers = domain::ports::MockProviderDirectory::new();
    providers
        .expect_acquirer()
        .returning(|name| Ok((name == "bank").then(bank)));
    // A reference that is no operation of the gateway: 404 once past the permit, with
    // nothing read from the (mock) store.
    let body = r#"{"object": "payment", "id": "acq_1", "reference": "not-an-operation", "status": "pending"}"#;
    let signed = sign(&Secret::new(WEBHOOK_SECRET), body.as_bytes());
    // The protocol's adapter authenticates and reads the notification; here, a mock that
    // takes this one signature.
    let mut acquirer = domain::ports::MockAcquirer::new();
    acquirer
        .expect_notification_signature_header()
        .return_const("x-acquirer-signature");
    let accepted = signed.clone();
    acquirer
        .expect_read_notification()
        .returning(move |provider, signature, _| {
            assert_eq!(provider.name.as_str(), "bank");
            if signature != accepted {
                return Err(NotificationRefusal::BadSignature);
            }
            Ok(Notification {
                object: NotifiedObject::Payment,
                id: "acq_1".into(),
                reference: "not-an-operation".into(),
                status: PaymentStatus::Pending,
                failure: None,
                dispute: None,
            })
        });
    let state = web::Data::new(HttpState::new(
        Mocks::new().gateway_with_acquirers(Arc::new(providers), Arc::new(acquirer)),
        Arc::new(AlwaysReady),
        HttpSettings::default(),
    ));
    let app = test::init_service(crate::app(state.clone(), |_| {})).await;
    let notification = |signature: &str| {
        TestRequest::post()
            .uri("/providers/bank/notifications")
            .insert_header((header::CONTENT_TYPE, "application/json"))
            .insert_header(("x-acquirer-signature", signature.to_string()))
            .set_payload(body)
    };
    let slots = u32::try_from(AT_ONCE).expect("a small bound");
    let in_progress = state
        .notification_slots()
        .try_acquire_many(slots)
        .expect("every slot is free at start");

    let (status, _, body_of) = call(&app, notification("00")).await;
    assert_eq!(status, 401, "the signature is checked first: {body_of}");
    let (status, headers, body_of) = call(&app, notification(&signed)).await;
    assert_eq!(status, 503, "{body_of}");
    assert_error(&body_of, "ServiceUnavailable");
    assert_eq!(
        headers.get(header::RETRY_AFTER).map(|v| v.as_bytes()),
        Some(&b"1"[..])
    );

    // A slot free: the notification goes on to its reference (404 here), and gives its slot
    // back once answered.
    drop(in_progress);
    let (status, _, body_of) = call(&app, notification(&signed)).await;
    assert_eq!(status, 404, "{body_of}");
    assert_error(&body_of, "NotFound");
    assert_eq!(state.notification_slots().available_permits(), AT_ONCE);

    let (_, _, metrics) = call(&app, TestRequest::get().uri("/metrics")).await;
    let text = metrics.as_str().unwrap_or_default();
    assert!(
        text.contains(
            r#"http_requests_total{method="POST",route="/providers/{name}/notifications",status="503"} 1"#
        ),
        "one shed notification counted: {text}"
    );
}
