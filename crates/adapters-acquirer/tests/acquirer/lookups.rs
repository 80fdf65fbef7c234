//! Reads by reference and cancels.

use adapters_acquirer::AcquirerClient;
use domain::acquirer::{Lookup, PaymentStatus};
use domain::ports::Acquirer;
use serde_json::json;

use crate::helpers::{closed_port, payin, payment, provider_on, FakeAcquirer, API_KEY};

#[tokio::test]
async fn a_read_finds_the_payment_by_reference() {
    let acquirer = FakeAcquirer::start();
    let order = payin();
    let mut answer = payment(&order, "action_required");
    answer["action"] = json!({"redirectUrl": "https://acq.example.com/pay/acq_1"});
    acquirer.reply(200, answer);

    let lookup = AcquirerClient::new()
        .find(&acquirer.provider(), order.reference)
        .await;

    let Lookup::Found(payment) = lookup else {
        panic!("{lookup:?}");
    };
    assert_eq!(payment.id, "acq_1");
    assert_eq!(payment.status, PaymentStatus::ActionRequired);
    assert_eq!(
        payment.redirect_url.as_deref(),
        Some("https://acq.example.com/pay/acq_1")
    );
    let request = acquirer.single();
    assert_eq!(request.method, "GET");
    assert_eq!(
        request.target,
        format!("/v1/payments?reference={}", order.reference)
    );
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    assert!(request.body.is_empty());
}

#[tokio::test]
async fn a_read_tells_not_found_from_failures() {
    let acquirer = FakeAcquirer::start();
    let client = AcquirerClient::new();
    let order = payin();

    acquirer.reply(
        404,
        json!({"error": {"code": "not_found", "message": "no payment"}}),
    );
    assert_eq!(
        client.find(&acquirer.provider(), order.reference).await,
        Lookup::NotFound
    );

    for status in [500, 502, 503, 401, 302] {
        acquirer.reply(status, payment(&order, "pending"));
        assert_eq!(
            client.find(&acquirer.provider(), order.reference).await,
            Lookup::Failed(format!("HTTP {status}"))
        );
    }

    acquirer.reply(200, payment(&payin(), "succeeded"));
    assert_eq!(
        client.find(&acquirer.provider(), order.reference).await,
        Lookup::Failed("answer's reference differs".into())
    );

    acquirer.reply(200, "not json");
    assert_eq!(
        client.find(&acquirer.provider(), order.reference).await,
        Lookup::Failed("HTTP 200 answer cannot be parsed".into())
    );

    assert_eq!(
        client
            .find(&provider_on(closed_port()), order.reference)
            .await,
        Lookup::Failed("connection refused".into())
    );
}

#[tokio::test]
async fn a_cancel_answers_the_canceled_payment() {
    let acquirer = FakeAcquirer::start();
    acquirer.reply(200, payment(&payin(), "canceled"));

    let lookup = AcquirerClient::new()
        .cancel(&acquirer.provider(), "acq_1")
        .await;

    assert!(
        matches!(&lookup, Lookup::Found(p) if p.status == PaymentStatus::Canceled && p.id == "acq_1"),
        "{lookup:?}"
    );
    let request = acquirer.single();
    assert_eq!(
        (request.method.as_str(), request.target.as_str()),
        ("POST", "/v1/payments/acq_1/cancel")
    );
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );
}

#[tokio::test]
async fn a_cancel_of_a_final_payment_answers_it_as_it_is() {
    let acquirer = FakeAcquirer::start();
    let mut answer = payment(&payin(), "failed");
    answer["failureCode"] = json!("card_declined");
    acquirer.reply(409, answer);

    let lookup = AcquirerClient::new()
        .cancel(&acquirer.provider(), "acq_1")
        .await;

    let Lookup::Found(payment) = lookup else {
        panic!("{lookup:?}");
    };
    assert_eq!(payment.status, PaymentStatus::Failed);
    assert_eq!(payment.failure_code(), Some("card_declined"));
}

#[tokio::test]
async fn a_cancel_tells_not_found_from_failures() {
    let acquirer = FakeAcquirer::start();
    let client = AcquirerClient::new();

    acquirer.reply(
        404,
        json!({"error": {"code": "not_found", "message": "no payment"}}),
    );
    assert_eq!(
        client.cancel(&acquirer.provider(), "acq_1").await,
        Lookup::NotFound
    );

    acquirer.reply(500, "");
    assert_eq!(
        client.cancel(&acquirer.provider(), "acq_1").await,
        Lookup::Failed("HTTP 500".into())
    );

    acquirer.reply(
        409,
        json!({"error": {"code": "conflict", "message": "final"}}),
    );
    assert_eq!(
        client.cancel(&acquirer.provider(), "acq_1").await,
        Lookup::Failed("HTTP 409 answer cannot be parsed".into())
    );

    acquirer.reply(200, payment(&payin(), "canceled"));
    assert_eq!(
        client.cancel(&acquirer.provider(), "acq_2").await,
        Lookup::Failed("answer's id differs".into())
    );
}

#[tokio::test]
async fn an_acquirer_id_cannot_change_the_path() {
    let acquirer = FakeAcquirer::start();
    acquirer.reply(404, "");

    let lookup = AcquirerClient::new()
        .cancel(&acquirer.provider(), "../refunds?x=1")
        .await;

    assert_eq!(lookup, Lookup::NotFound);
    assert_eq!(
        acquirer.single().target,
        "/v1/payments/..%2Frefunds%3Fx=1/cancel"
    );
    for id in ["", ".", ".."] {
        assert_eq!(
            AcquirerClient::new().cancel(&acquirer.provider(), id).await,
            Lookup::Failed("invalid acquirer id".into())
        );
    }
    assert_eq!(acquirer.received().len(), 1, "nothing more was sent");
}
