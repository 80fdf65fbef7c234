//! Creations the acquirer answers: what is sent, and how each answer is classified.

use adapters_acquirer::AcquirerClient;
use domain::acquirer::{AcquirerPayment, CallResult, PaymentStatus};
use domain::ports::Acquirer;
use serde_json::{json, Value};

use crate::helpers::{card_payout, payin, payment, sbp_payout, FakeAcquirer, API_KEY, PAN};

#[tokio::test]
async fn a_created_payin_is_answered_and_the_request_is_exact() {
    let acquirer = FakeAcquirer::start();
    let order = payin();
    let mut answer = payment(&order, "action_required");
    answer["action"] = json!({"redirectUrl": "https://acq.example.com/pay/acq_1"});
    acquirer.reply(201, &answer);

    let result = acquirer.create(&order).await;

    assert_eq!(
        result,
        CallResult::Answered(AcquirerPayment {
            id: "acq_1".into(),
            status: PaymentStatus::ActionRequired,
            redirect_url: Some("https://acq.example.com/pay/acq_1".into()),
            failure: None,
        })
    );
    let request = acquirer.single();
    assert_eq!(
        (request.method.as_str(), request.target.as_str()),
        ("POST", "/v1/payments")
    );
    let reference = order.reference.to_string();
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    assert_eq!(request.header("idempotency-key"), Some(reference.as_str()));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.json(),
        json!({"reference": reference, "kind": "payin", "method": "card", "amount": 10000,
               "currency": "RUB",
               "notifyUrl": "https://gw.example.com/providers/bank-a/notifications",
               "notAfter": "2026-11-21T10:01:00Z",
               "returnUrl": "https://gw.example.com/pay/x/return",
               "expiresAt": "2026-11-21T10:15:00Z"})
    );
    assert!(request.json()["amount"].is_i64(), "amount is an integer");
}

#[tokio::test]
async fn a_card_payout_sends_the_full_pan_and_no_payin_fields() {
    let acquirer = FakeAcquirer::start();
    let order = card_payout();
    assert!(order.return_url.is_some() && order.expires_at.is_some());
    acquirer.reply(201, payment(&order, "pending"));

    let result = acquirer.create(&order).await;

    assert!(matches!(result, CallResult::Answered(p) if p.status == PaymentStatus::Pending));
    assert_eq!(
        acquirer.single().json(),
        json!({"reference": order.reference.to_string(), "kind": "payout", "method": "card",
               "amount": 10000, "currency": "RUB",
               "notifyUrl": "https://gw.example.com/providers/bank-a/notifications",
               "notAfter": "2026-11-21T10:01:00Z",
               "payout": {"pan": PAN, "name": "IVAN IVANOV"}})
    );
}

#[tokio::test]
async fn an_sbp_payout_sends_phone_name_and_bank() {
    let acquirer = FakeAcquirer::start();
    let order = sbp_payout();
    acquirer.reply(201, payment(&order, "pending"));

    let result = acquirer.create(&order).await;

    assert!(matches!(result, CallResult::Answered(_)), "{result:?}");
    let body = acquirer.single().json();
    assert_eq!(body["method"], "sbp");
    assert_eq!(
        body["payout"],
        json!({"phone": "+79001234567", "name": "IVAN IVANOV", "bank": "Bank A"})
    );
    assert!(body.get("returnUrl").is_none() && body.get("expiresAt").is_none());
}

#[tokio::test]
async fn a_repeat_answered_200_is_the_same_payment() {
    let acquirer = FakeAcquirer::start();
    let order = payin();
    acquirer.reply(200, payment(&order, "succeeded"));

    let result = acquirer.create(&order).await;

    assert!(matches!(result, CallResult::Answered(p) if p.status == PaymentStatus::Succeeded));
}

#[tokio::test]
async fn a_failed_payment_is_still_answered_with_its_code() {
    let acquirer = FakeAcquirer::start();
    let order = card_payout();
    let mut answer = payment(&order, "failed");
    answer["failureCode"] = json!("provider_unavailable");
    acquirer.reply(201, answer);

    let result = acquirer.create(&order).await;

    let CallResult::Answered(payment) = result else {
        panic!("{result:?}");
    };
    assert_eq!(payment.status, PaymentStatus::Failed);
    assert_eq!(payment.failure_code(), Some("provider_unavailable"));
}

#[tokio::test]
async fn an_answer_for_another_payment_is_unknown() {
    let acquirer = FakeAcquirer::start();
    let client = AcquirerClient::new();
    let order = payin();
    let cases: [(&str, Value); 4] = [
        ("reference", json!("6f1c2a52-3c7e-4bd0-9a3f-7a1d3c2b9e10")),
        ("kind", json!("payout")),
        ("amount", json!(10_001)),
        ("currency", json!("USD")),
    ];
    for (field, value) in cases {
        let mut answer = payment(&order, "pending");
        answer[field] = value;
        acquirer.reply(201, answer);
        assert_eq!(
            client.create(&acquirer.provider(), &order).await,
            CallResult::Unknown(format!("answer's {field} differs"))
        );
    }
}

#[tokio::test]
async fn a_2xx_that_is_not_a_payment_is_unknown() {
    let acquirer = FakeAcquirer::start();
    let client = AcquirerClient::new();
    let order = payin();
    let mut unknown_status = payment(&order, "pending");
    unknown_status["status"] = json!("authorized");
    let bodies = [
        "<html>ok</html>".to_string(),
        String::new(),
        "{}".to_string(),
        unknown_status.to_string(),
        r#"{"error": {"code": "ok"}}"#.to_string(),
    ];
    for body in bodies {
        for status in [200, 201] {
            acquirer.reply(status, &body);
            assert_eq!(
                client.create(&acquirer.provider(), &order).await,
                CallResult::Unknown(format!("HTTP {status} answer cannot be parsed")),
                "{body}"
            );
        }
    }
}

#[tokio::test]
async fn a_redirect_is_unknown_and_never_followed() {
    let acquirer = FakeAcquirer::start();
    let client = AcquirerClient::new();
    for status in [301, 302, 303, 307, 308] {
        acquirer.redirect(status, "/v1/elsewhere");
        assert_eq!(
            client.create(&acquirer.provider(), &payin()).await,
            CallResult::Unknown(format!("HTTP {status}"))
        );
    }
    let targets: Vec<String> = acquirer.received().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, vec!["/v1/payments"; 5]);
}

#[tokio::test]
async fn a_conflict_is_unknown_even_with_a_payment() {
    let acquirer = FakeAcquirer::start();
    let order = payin();
    acquirer.reply(409, payment(&order, "pending"));

    let result = acquirer.create(&order).await;

    assert_eq!(result, CallResult::Unknown("HTTP 409".into()));
}

#[tokio::test]
async fn server_errors_and_other_statuses_are_unknown() {
    let acquirer = FakeAcquirer::start();
    let client = AcquirerClient::new();
    for status in [500, 502, 504, 405, 418, 202] {
        let body = if status == 202 { "" } else { "{}" };
        acquirer.reply(status, body);
        let result = client.create(&acquirer.provider(), &payin()).await;
        assert!(
            matches!(&result, CallResult::Unknown(reason) if reason.starts_with(&format!("HTTP {status}"))),
            "{status}: {result:?}"
        );
    }
}

#[tokio::test]
async fn refusals_are_definite_failures() {
    let acquirer = FakeAcquirer::start();
    let client = AcquirerClient::new();
    for status in [400, 401, 403, 404, 422, 429, 503] {
        acquirer.reply(
            status,
            json!({"error": {"code": "x", "message": "refused"}}),
        );
        assert_eq!(
            client.create(&acquirer.provider(), &payin()).await,
            CallResult::Unavailable(format!("HTTP {status}"))
        );
    }
}
