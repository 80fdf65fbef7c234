use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

const NOWHERE: &str = "http://127.0.0.1:9/notify";
const RETURN_URL: &str = "https://shop.example/return?op=1&x=%20y";

#[tokio::test]
async fn a_card_payin_is_paid_on_its_page_and_the_browser_goes_back() {
    let sim = TestSim::spawn(&[]).await;
    let (status, created) = sim
        .create("in-1", &payin("in-1", "card", 10000, NOWHERE))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(created["status"], "action_required");
    let page = created["action"]["redirectUrl"]
        .as_str()
        .expect("redirectUrl")
        .to_owned();
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
        .client
        .post(&page)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("decision=confirm&pan=4242424242424242")
        .send()
        .await
        .expect("posted");
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    assert_eq!(answer.headers()["location"], RETURN_URL);
    let done = sim.wait_payment("in-1", |_| true).await;
    assert_eq!(done["status"], "succeeded");
    assert!(done.get("action").is_none());
}

#[tokio::test]
async fn the_page_declines_test_cards_and_offers_confirm_reject_for_other_methods() {
    let sim = TestSim::spawn(&[]).await;
    let (_, created) = sim
        .create("in-2", &payin("in-2", "card", 10000, NOWHERE))
        .await;
    let page = created["action"]["redirectUrl"]
        .as_str()
        .expect("redirectUrl")
        .to_owned();
    let answer = sim
        .client
        .post(&page)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("decision=confirm&pan=4000000000009995")
        .send()
        .await
        .expect("posted");
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let done = sim.wait_payment("in-2", |_| true).await;
    assert_eq!(done["status"], "failed");
    assert_eq!(done["failureCode"], "insufficient_funds");

    let (_, sbp) = sim
        .create("in-3", &payin("in-3", "sbp", 10000, NOWHERE))
        .await;
    let page = sbp["action"]["redirectUrl"]
        .as_str()
        .expect("redirectUrl")
        .to_owned();
    let html = sim
        .client
        .get(&page)
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(
        html.contains("Confirm") && html.contains("Reject") && !html.contains("4242424242424242")
    );
    let answer = sim
        .client
        .post(&page)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("decision=reject")
        .send()
        .await
        .expect("posted");
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let done = sim.wait_payment("in-3", |_| true).await;
    assert_eq!(done["failureCode"], "rejected");
}

#[tokio::test]
async fn control_completes_a_payin_once() {
    let sim = TestSim::spawn(&[]).await;
    sim.create("in-4", &payin("in-4", "card", 10000, NOWHERE))
        .await;
    let (status, done) = sim
        .control_post(
            "/_sim/payins/in-4/complete",
            &json!({"decision": "confirm", "pan": "4000000000000002"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["status"], "failed");
    assert_eq!(done["failureCode"], "card_declined");
    let (status, again) = sim
        .control_post(
            "/_sim/payins/in-4/complete",
            &json!({"decision": "confirm"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(again["status"], "failed");
    let (status, _) = sim
        .control_post(
            "/_sim/payins/nope/complete",
            &json!({"decision": "confirm"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    sim.create("in-5", &payin("in-5", "sbp", 10000, NOWHERE))
        .await;
    let (status, done) = sim
        .control_post(
            "/_sim/payins/in-5/complete",
            &json!({"decision": "confirm"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(done["status"], "succeeded");
}

#[tokio::test]
async fn payin_magic_amount_and_expiry() {
    let sim = TestSim::spawn(&[]).await;
    let (status, declined) = sim
        .create("in-6", &payin("in-6", "card", 10005, NOWHERE))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(declined["status"], "failed");
    assert_eq!(declined["failureCode"], "declined");

    let mut body = payin("in-7", "card", 10000, NOWHERE);
    body["expiresAt"] = json!(in_seconds(1));
    let (_, created) = sim.create("in-7", &body).await;
    assert_eq!(created["status"], "action_required");
    let expired = sim
        .wait_payment("in-7", |p| p["status"] != "action_required")
        .await;
    assert_eq!(expired["status"], "failed");
    assert_eq!(expired["failureCode"], "expired");
}
