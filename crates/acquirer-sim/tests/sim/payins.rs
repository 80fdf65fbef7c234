use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

const NOWHERE: &str = "http://127.0.0.1:9/notify";
const RETURN_URL: &str = "https://shop.example/return?op=1&x=%20y";

#[tokio::test]
async fn a_card_payin_is_paid_on_its_page_and_the_browser_goes_back() {
    let sim = TestSim::spawn(&[]).await;
    let (status, created) = sim.submit(&payin("in-1", "card", 10000, NOWHERE)).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(created["status"], "action_required");
    let page = page_of(&created);
    assert!(
        page.starts_with(&sim.api),
        "{page} is served by the simulator"
    );
    // The read shows the action too.
    let read = sim.wait_payment("in-1", |_| true).await;
    assert_eq!(read["action"]["redirectUrl"], page.as_str());

    let html = sim.client.get(&page).send().await.expect("page");
    assert_eq!(html.status(), StatusCode::OK);
    let html = html.text().await.expect("html");
    assert!(
        html.contains("<form")
            && html.contains("4242424242424242")
            && html.contains("4000000000000002")
    );

    let answer = sim
        .choose(&page, "decision=confirm&pan=4242424242424242")
        .await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    assert_eq!(answer.headers()["location"], RETURN_URL);
    let done = sim.wait_payment("in-1", |_| true).await;
    assert_eq!(done["status"], "succeeded");
    assert!(done.get("action").is_none());
}

#[tokio::test]
async fn the_page_declines_test_cards_and_offers_confirm_reject_for_other_methods() {
    let sim = TestSim::spawn(&[]).await;
    let (_, created) = sim.submit(&payin("in-2", "card", 10000, NOWHERE)).await;
    let page = page_of(&created);
    let answer = sim
        .choose(&page, "decision=confirm&pan=4000000000009995")
        .await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let done = sim.wait_payment("in-2", |_| true).await;
    assert_failed(&done, "insufficient_funds");

    let (_, sbp) = sim.submit(&payin("in-3", "sbp", 10000, NOWHERE)).await;
    let page = page_of(&sbp);
    let html = sim.page_html(&page).await;
    assert!(
        html.contains("Confirm") && html.contains("Reject") && !html.contains("4242424242424242")
    );
    let answer = sim.choose(&page, "decision=reject").await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let done = sim.wait_payment("in-3", |_| true).await;
    assert_eq!(done["failureCode"], "rejected");
}

#[tokio::test]
async fn control_completes_a_payin_once() {
    let sim = TestSim::spawn(&[]).await;
    sim.submit(&payin("in-4", "card", 10000, NOWHERE)).await;
    let (status, done) = sim
        .complete(
            "in-4",
            json!({"decision": "confirm", "pan": "4000000000000002"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_failed(&done, "card_declined");
    let (status, again) = sim.complete("in-4", json!({"decision": "confirm"})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(again["status"], "failed");
    let (status, _) = sim.complete("nope", json!({"decision": "confirm"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    sim.submit(&payin("in-5", "sbp", 10000, NOWHERE)).await;
    let (status, done) = sim.complete("in-5", json!({"decision": "confirm"})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(done["status"], "succeeded");
}

#[tokio::test]
async fn payin_magic_amount_and_expiry() {
    let sim = TestSim::spawn(&[]).await;
    let (status, declined) = sim.submit(&payin("in-6", "card", 10005, NOWHERE)).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_failed(&declined, "declined");

    let mut body = payin("in-7", "card", 10000, NOWHERE);
    body["expiresAt"] = json!(in_seconds(1));
    let (_, created) = sim.create("in-7", &body).await;
    assert_eq!(created["status"], "action_required");
    let expired = sim
        .wait_payment("in-7", |p| p["status"] != "action_required")
        .await;
    assert_failed(&expired, "expired");
}
