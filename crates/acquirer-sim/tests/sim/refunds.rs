use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

const NOWHERE: &str = "http://127.0.0.1:9/notify";

/// Posts a refund of `amount` to `path` with its reference as the key.
async fn post_refund(
    sim: &TestSim,
    path: &str,
    reference: &str,
    amount: i64,
) -> (StatusCode, serde_json::Value) {
    let body = json!({"reference": reference, "amount": amount});
    sim.post(path, Some(reference), &body).await
}

/// The refund under `reference` once it is no longer pending.
async fn once_settled(sim: &TestSim, reference: &str) -> serde_json::Value {
    eventually(|| async {
        let (_, read) = sim.get(&format!("/v1/refunds?reference={reference}")).await;
        (read["status"] != "pending").then_some(read)
    })
    .await
}

#[tokio::test]
async fn refunds_settle_and_are_idempotent() {
    let sim = TestSim::spawn(&[]).await;
    let receiver = Receiver::start(0).await;
    let payment = paid_payin(&sim, "r-pay", 10000, &receiver.url).await;
    let path = format!("/v1/payments/{payment}/refunds");

    let body = json!({"reference": "rf-1", "amount": 3000});
    let (status, refund) = sim.post(&path, Some("rf-1"), &body).await;
    assert_eq!(status, StatusCode::CREATED, "{refund}");
    assert_eq!(refund["status"], "pending");
    assert_eq!(refund["paymentId"], payment);
    let (status, again) = sim.post(&path, Some("rf-1"), &body).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again["id"], refund["id"]);
    let (status, conflict) = post_refund(&sim, &path, "rf-1", 4000).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(conflict["id"], refund["id"]);
    let (status, conflict) = sim.post(&path, Some("other"), &body).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(conflict["id"], refund["id"]);

    let settled = once_settled(&sim, "rf-1").await;
    assert_eq!(settled["status"], "succeeded");
    let notified = receiver
        .wait_for(refund["id"].as_str().expect("id"), "succeeded")
        .await;
    assert_eq!(notified.body["object"], "refund");
    assert_eq!(notified.body["reference"], "rf-1");

    let (status, declined) = post_refund(&sim, &path, "rf-2", 1005).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(declined["status"], "pending");
    let failed = once_settled(&sim, "rf-2").await;
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["failureCode"], "declined");
    let (status, _) = sim.get("/v1/refunds?reference=nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn refunds_beyond_the_amount_or_of_other_payments_are_422() {
    let sim = TestSim::spawn(&[]).await;
    let payment = paid_payin(&sim, "r-pay2", 10000, NOWHERE).await;
    let path = format!("/v1/payments/{payment}/refunds");
    let (status, _) = post_refund(&sim, &path, "a", 7000).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, error) = post_refund(&sim, &path, "b", 3001).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error["error"]["code"], "invalid_request");
    let (status, _) = sim.get("/v1/refunds?reference=b").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing created");
    let (status, _) = post_refund(&sim, &path, "c", 3000).await;
    assert_eq!(status, StatusCode::CREATED);

    let (_, waiting) = sim.submit(&payin("r-wait", "card", 10000, NOWHERE)).await;
    let waiting_path = format!(
        "/v1/payments/{}/refunds",
        waiting["id"].as_str().expect("id")
    );
    let (status, error) = post_refund(&sim, &waiting_path, "d", 100).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error["error"]["code"], "invalid_request");

    let (_, out) = sim
        .submit(&payout(
            "r-out",
            10000,
            json!({"pan": "4111111111111111"}),
            NOWHERE,
        ))
        .await;
    let out_id = out["id"].as_str().expect("id");
    sim.wait_payment("r-out", |p| p["status"] == "succeeded")
        .await;
    let (status, _) = sim
        .post(
            &format!("/v1/payments/{out_id}/refunds"),
            Some("e"),
            &json!({"reference": "e", "amount": 100}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "payouts are not refunded"
    );
}
