use serde_json::json;
use sha2::{Digest, Sha256};

use crate::helpers::*;

const NOWHERE: &str = "http://127.0.0.1:9/notify";

fn key(recipient: &str) -> String {
    hex::encode(Sha256::digest(recipient.as_bytes()))
}

#[tokio::test]
async fn stats_count_succeeded_payouts_and_refunds_by_reference_and_recipient() {
    let sim = TestSim::spawn(&[]).await;
    let pan = "4111111111111111";
    let phone = "+79990000001";
    sim.create("s-1", &payout("s-1", 10000, json!({"pan": pan}), NOWHERE))
        .await;
    sim.create("s-2", &payout("s-2", 2500, json!({"pan": pan}), NOWHERE))
        .await;
    sim.create(
        "s-3",
        &payout(
            "s-3",
            700,
            json!({"phone": phone, "bank": "Bank A"}),
            NOWHERE,
        ),
    )
    .await;
    sim.create("s-4", &payout("s-4", 10005, json!({"pan": pan}), NOWHERE))
        .await;
    for reference in ["s-1", "s-2", "s-3"] {
        sim.wait_payment(reference, |p| p["status"] == "succeeded")
            .await;
    }
    let (_, paid) = sim
        .create("s-in", &payin("s-in", "card", 5000, NOWHERE))
        .await;
    sim.control_post(
        "/_sim/payins/s-in/complete",
        &json!({"decision": "confirm"}),
    )
    .await;
    let path = format!("/v1/payments/{}/refunds", paid["id"].as_str().expect("id"));
    sim.post(
        &path,
        Some("s-rf"),
        &json!({"reference": "s-rf", "amount": 1200}),
    )
    .await;
    eventually(|| async {
        let (_, read) = sim.get("/v1/refunds?reference=s-rf").await;
        (read["status"] == "succeeded").then_some(())
    })
    .await;

    let stats = sim.stats().await;
    assert_eq!(stats["payouts"], json!({"count": 3, "amount": 13200}));
    assert_eq!(stats["refunds"], json!({"count": 1, "amount": 1200}));
    assert_eq!(
        stats["byReference"]["s-1"],
        json!({"payouts": 1, "refunds": 0})
    );
    assert_eq!(
        stats["byReference"]["s-rf"],
        json!({"payouts": 0, "refunds": 1})
    );
    assert!(
        stats["byReference"].get("s-4").is_none(),
        "failed payouts do not count"
    );
    assert_eq!(
        stats["byRecipient"][key(pan)],
        json!({"payouts": 2, "amount": 12500})
    );
    assert_eq!(
        stats["byRecipient"][key(phone)],
        json!({"payouts": 1, "amount": 700})
    );
}

#[tokio::test]
async fn stats_count_the_payment_reads_answered_by_reference() {
    let sim = TestSim::spawn(&[]).await;
    let (_, created) = sim
        .create("r-1", &payin("r-1", "card", 5000, NOWHERE))
        .await;
    let id = created["id"].as_str().expect("id").to_string();
    for _ in 0..3 {
        assert_eq!(sim.get("/v1/payments?reference=r-1").await.0, 200);
    }
    for _ in 0..2 {
        assert_eq!(sim.get(&format!("/v1/payments/{id}")).await.0, 200);
    }
    assert_eq!(sim.get("/v1/payments?reference=r-none").await.0, 404);
    assert_eq!(sim.get("/v1/payments/acq_none").await.0, 404);
    // Creating and the control API's completion are not reads.
    sim.control_post("/_sim/payins/r-1/complete", &json!({"decision": "confirm"}))
        .await;

    let stats = sim.stats().await;
    assert_eq!(
        stats["reads"],
        json!({"count": 6, "byReference": {"r-1": 5, "r-none": 1}}),
        "an unknown id names no reference"
    );
}
