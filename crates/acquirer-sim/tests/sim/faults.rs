use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

const NOWHERE: &str = "http://127.0.0.1:9/notify";

fn card() -> serde_json::Value {
    json!({"pan": "4111111111111111", "name": "A"})
}

#[tokio::test]
async fn fault_updates_are_partial_and_answer_the_whole_set() {
    let sim = TestSim::spawn(&["--latency-ms", "1"]).await;
    let all = sim.faults(json!({"failRate": 0.5})).await;
    assert_eq!(all["failRate"], 0.5);
    assert_eq!(all["latencyMs"], 1);
    assert_eq!(all["declineCode"], "provider_unavailable");
    assert_eq!(all["down"], false);
    let (status, error) = sim
        .control_post("/_sim/faults", &json!({"timeoutRate": 3}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("timeoutRate")));
}

#[tokio::test]
async fn fail_rate_answers_503_and_changes_nothing() {
    let sim = TestSim::spawn(&["--fail-rate", "1"]).await;
    let (status, error) = sim
        .create("f-1", &payout("f-1", 10000, card(), NOWHERE))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(error["error"]["code"].is_string());
    sim.faults(json!({"failRate": 0})).await;
    let (status, _) = sim.get("/v1/payments?reference=f-1").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn decline_rate_fails_creations_with_the_decline_code() {
    let sim = TestSim::spawn(&[]).await;
    sim.faults(json!({"declineRate": 1, "declineCode": "issuer_unavailable"}))
        .await;
    let (status, answer) = sim
        .create("d-1", &payout("d-1", 10000, card(), NOWHERE))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(answer["status"], "failed");
    assert_eq!(answer["failureCode"], "issuer_unavailable");
}

#[tokio::test]
async fn ambiguous_rate_processes_then_answers_502() {
    let sim = TestSim::spawn(&[]).await;
    sim.faults(json!({"ambiguousRate": 1})).await;
    let (status, _) = sim
        .create("a-1", &payout("a-1", 10000, card(), NOWHERE))
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    sim.faults(json!({"ambiguousRate": 0})).await;
    let (status, read) = sim.get("/v1/payments?reference=a-1").await;
    assert_eq!(status, StatusCode::OK, "created despite the 502");
    assert_eq!(read["reference"], "a-1");
}

#[tokio::test]
async fn timeout_rate_processes_then_holds_the_answer() {
    let sim = TestSim::spawn(&["--hold-ms", "60000"]).await;
    sim.faults(json!({"timeoutRate": 1})).await;
    let gave_up = sim
        .api_post("/v1/payments")
        .header("idempotency-key", "t-1")
        .json_body(&payout("t-1", 10000, card(), NOWHERE))
        .timeout(Duration::from_secs(2))
        .send()
        .await;
    assert!(gave_up.is_err_and(|e| e.is_timeout()), "the answer is held");
    sim.faults(json!({"timeoutRate": 0})).await;
    let read = sim.wait_payment("t-1", |_| true).await;
    assert_eq!(read["reference"], "t-1");
}

#[tokio::test]
async fn down_refuses_connections_and_cuts_open_ones_until_lifted() {
    let sim = TestSim::spawn(&["--hold-ms", "120000"]).await;
    let receiver = Receiver::start(0).await;
    sim.faults(json!({"timeoutRate": 1})).await;
    let held = {
        let request = sim
            .api_post("/v1/payments")
            .header("idempotency-key", "dn-1")
            .json_body(&payout("dn-1", 10000, card(), &receiver.url))
            .timeout(Duration::from_secs(100));
        tokio::spawn(async move { request.send().await })
    };
    // The held call has been processed once its creation is notified.
    eventually(|| async {
        receiver
            .received()
            .first()
            .map(|n| n.body["reference"].clone())
    })
    .await;
    let all = sim.faults(json!({"down": true})).await;
    assert_eq!(all["down"], true);

    let cut = tokio::time::timeout(Duration::from_secs(60), held)
        .await
        .expect("the open connection is cut well before the hold ends")
        .expect("task");
    assert!(cut.is_err(), "no answer on a cut connection");
    let refused = sim
        .client
        .get(format!("{}/v1/payments?reference=dn-1", sim.api))
        .send()
        .await;
    assert!(
        refused.is_err_and(|e| e.is_connect()),
        "connection refused while down"
    );
    assert!(sim.stats().await.is_object(), "control stays up");

    sim.faults(json!({"down": false, "timeoutRate": 0})).await;
    let (status, read) = sim.get("/v1/payments?reference=dn-1").await;
    assert_eq!(status, StatusCode::OK, "processed before the cut");
    assert_eq!(read["reference"], "dn-1");
}

#[tokio::test]
async fn starting_down_still_reports_the_port() {
    let sim = TestSim::spawn(&["--down"]).await;
    let refused = sim
        .client
        .get(format!("{}/v1/payments?reference=x", sim.api))
        .send()
        .await;
    assert!(refused.is_err_and(|e| e.is_connect()));
    sim.faults(json!({"down": false})).await;
    let (status, _) = sim.get("/v1/payments?reference=x").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn faults_can_start_from_environment_variables() {
    let env = [
        ("ACQUIRER_SIM_DECLINE_RATE", "1"),
        ("ACQUIRER_SIM_DECLINE_CODE", "issuer_unavailable"),
    ];
    let sim = TestSim::spawn_with_env(&[], &env).await;
    let (status, answer) = sim
        .create("e-1", &payout("e-1", 10000, card(), NOWHERE))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(answer["failureCode"], "issuer_unavailable");
    let all = sim.faults(json!({})).await;
    assert_eq!(all["declineRate"], 1.0);
}
