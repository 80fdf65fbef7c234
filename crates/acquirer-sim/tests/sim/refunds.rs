use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

const NOWHERE: &str = "http://127.0.0.1:9/notify";

async fn paid_payin(sim: &TestSim, reference: &str, amount: i64) -> String {
    let (_, created) = sim
        .create(reference, &payin(reference, "card", amount, NOWHERE))
        .await;
    let (status, _) = sim
        .control_post(
            &format!("/_sim/payins/{reference}/complete"),
            &json!({"decision": "confirm"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    created["id"].as_str().expect("id").to_owned()
}

#[tokio::test]
async fn refunds_settle_and_are_idempotent() {
    let sim = TestSim::spawn(&[]).await;
    let receiver = Receiver::start(0).await;
    let (_, created) = sim
        .create("r-pay", &payin("r-pay", "card", 10000, &receiver.url))
        .await;
    sim.control_post(
        "/_sim/payins/r-pay/complete",
        &json!({"decision": "confirm"}),
    )
    .await;
    let payment = created["id"].as_str().expect("id");
    let path = format!("/v1/payments/{payment}/refunds");

    let body = json!({"reference": "rf-1", "amount": 3000});
    let (status, refund) = sim.post(&path, Some("rf-1"), &body).await;
    assert_eq!(status, StatusCode::CREATED, "{refund}");
    assert_eq!(refund["status"], "pending");
    assert_eq!(refund["paymentId"], payment);
    let (status, again) = sim.post(&path, Some("rf-1"), &body).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again["id"], refund["id"]);
    let (status, conflict) = sim
        .post(
            &path,
            Some("rf-1"),
            &json!({"reference": "rf-1", "amount": 4000}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(conflict["id"], refund["id"]);
    let (status, conflict) = sim.post(&path, Some("other"), &body).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(conflict["id"], refund["id"]);

    let settled = eventually(|| async {
        let (_, read) = sim.get("/v1/refunds?reference=rf-1").await;
        (read["status"] != "pending").then_some(read)
    })
    .await;
    assert_eq!(settled["status"], "succeeded");
    let notified = receiver
        .wait_for(refund["id"].as_str().expect("id"), "succeeded")
        .await;
    assert_eq!(notified.body["object"], "refund");
    assert_eq!(notified.body["reference"], "rf-1");

    let (status, declined) = sim
        .post(
            &path,
            Some("rf-2"),
            &json!({"reference": "rf-2", "amount": 1005}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(declined["status"], "pending");
    let failed = eventually(|| async {
        let (_, read) = sim.get("/v1/refunds?reference=rf-2").await;
        (read["status"] != "pending").then_some(read)
    })
    .await;
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["failureCode"], "declined");
    let (status, _) = sim.get("/v1/refunds?reference=nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn refunds_beyond_the_amount_or_of_other_payments_are_422() {
    let sim = TestSim::spawn(&[]).await;
    let payment = paid_payin(&sim, "r-pay2", 10000).await;
    let path = format!("/v1/payments/{payment}/refunds");
    let (status, _) = sim
        .post(&path, Some("a"), &json!({"reference": "a", "amount": 7000}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, error) = sim
        .post(&path, Some("b"), &json!({"reference": "b", "amount": 3001}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error["error"]["code"], "invalid_request");
    let (status, _) = sim.get("/v1/refunds?reference=b").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing created");
    let (status, _) = sim
        .post(&path, Some("c"), &json!({"reference": "c", "amount": 3000}))
        .await;
    assert_eq!(status, StatusCode::CREATED);

    let (_, waiting) = sim
        .create("r-wait", &payin("r-wait", "card", 10000, NOWHERE))
        .await;
    let waiting_path = format!(
        "/v1/payments/{}/refunds",
        waiting["id"].as_str().expect("id")
    );
    let (status, error) = sim
        .post(
            &waiting_path,
            Some("d"),
            &json!({"reference": "d", "amount": 100}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error["error"]["code"], "invalid_request");

    let (_, out) = sim
        .create(
            "r-out",
            &payout("r-out", 10000, json!({"pan": "4111111111111111"}), NOWHERE),
        )
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
