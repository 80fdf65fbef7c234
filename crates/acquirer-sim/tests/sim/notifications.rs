use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

/// A payout to an ordinary card.
fn card_payout(reference: &str, amount: i64, notify_url: &str) -> serde_json::Value {
    payout(
        reference,
        amount,
        json!({"pan": "4111111111111111"}),
        notify_url,
    )
}

#[tokio::test]
async fn every_status_is_notified_signed_and_retried_until_2xx() {
    let sim = TestSim::spawn(&[]).await;
    let receiver = Receiver::start(3).await;
    let body = payout(
        "n-1",
        10000,
        json!({"pan": "4111111111111111", "name": "A"}),
        &receiver.url,
    );
    let (status, created) = sim.create("n-1", &body).await;
    assert_eq!(status, StatusCode::CREATED);
    let id = created["id"].as_str().expect("id");

    let pending = receiver.wait_for(id, "pending").await;
    let succeeded = receiver.wait_for(id, "succeeded").await;
    assert!(receiver.attempts() >= 5, "the 500s were retried");
    for notification in [&pending, &succeeded] {
        assert_eq!(
            notification.signature,
            expected_signature(&notification.raw)
        );
        assert_eq!(notification.body["object"], "payment");
        assert_eq!(notification.body["reference"], "n-1");
        assert!(notification.body["updatedAt"].is_string());
        assert!(notification.body.get("failureCode").is_some());
    }
}

#[tokio::test]
async fn a_payin_notifies_its_creation_and_its_outcome_before_the_redirect() {
    let sim = TestSim::spawn(&[]).await;
    let receiver = Receiver::start(0).await;
    let (_, created) = sim
        .submit(&payin("n-2", "card", 10000, &receiver.url))
        .await;
    let id = created["id"].as_str().expect("id");
    receiver.wait_for(id, "action_required").await;
    let page = page_of(&created);
    let answer = sim
        .choose(&page, "decision=confirm&pan=4000000000000002")
        .await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    // The page makes the first attempt before redirecting; polling keeps a slow machine
    // (where that attempt may outlast the page's wait) from failing the test.
    let failed = receiver.wait_for(id, "failed").await;
    assert_eq!(failed.body["failureCode"], "card_declined");
}

#[tokio::test]
async fn duplicate_and_drop_faults_apply_to_notifications() {
    let sim = TestSim::spawn(&[]).await;
    let receiver = Receiver::start(0).await;
    sim.faults(json!({"duplicateNotifyRate": 1})).await;
    let (_, created) = sim.submit(&card_payout("n-3", 10005, &receiver.url)).await;
    let id = created["id"].as_str().expect("id").to_owned();
    eventually(|| async { (receiver.received_for(&id).len() >= 2).then_some(()) }).await;

    sim.faults(json!({"duplicateNotifyRate": 0, "dropNotifyRate": 1}))
        .await;
    let (_, dropped) = sim.submit(&card_payout("n-4", 10005, &receiver.url)).await;
    // A later notification arriving proves the dropped one had its chance.
    sim.faults(json!({"dropNotifyRate": 0})).await;
    let (_, later) = sim.submit(&card_payout("n-5", 10005, &receiver.url)).await;
    receiver
        .wait_for(later["id"].as_str().expect("id"), "failed")
        .await;
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert!(receiver
        .received()
        .iter()
        .all(|n| n.body["id"] != dropped["id"]));
}

#[tokio::test]
async fn reorder_delivers_a_payment_s_pending_notifications_newest_first() {
    let sim = TestSim::spawn(&[]).await;
    let receiver = Receiver::start(0).await;
    sim.faults(json!({"reorderNotify": true})).await;
    let (_, created) = sim.submit(&card_payout("n-6", 10000, &receiver.url)).await;
    let id = created["id"].as_str().expect("id").to_owned();
    receiver.wait_for(&id, "pending").await;
    let statuses: Vec<String> = receiver
        .received_for(&id)
        .iter()
        .map(|n| n.body["status"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(statuses, ["succeeded", "pending"]);
}
