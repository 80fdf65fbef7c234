use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::helpers::*;

const NOWHERE: &str = "http://127.0.0.1:9/notify";

/// `POST /_sim/payments/{reference}/dispute` with the raw `body` (empty allowed).
async fn open_raw(sim: &TestSim, reference: &str, body: &str) -> (StatusCode, Value) {
    let url = format!("{}/_sim/payments/{reference}/dispute", sim.control);
    let request = sim.client.post(url).body(body.to_owned());
    TestSim::answer(request.header("content-type", "application/json")).await
}

/// Opens a dispute of `reference` with `body` and answers its id.
async fn open(sim: &TestSim, reference: &str, body: Value) -> String {
    let (status, answer) = open_raw(sim, reference, &body.to_string()).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let id = answer["disputeId"].as_str().expect("disputeId");
    assert!(id.starts_with("dsp_"), "{answer}");
    id.to_owned()
}

/// `POST /_sim/disputes/{id}/resolve` with `body`.
async fn resolve(sim: &TestSim, id: &str, body: Value) -> (StatusCode, Value) {
    sim.control_post(&format!("/_sim/disputes/{id}/resolve"), &body)
        .await
}

/// `POST /v1/disputes/{id}/evidence` with `body`.
async fn evidence(sim: &TestSim, id: &str, body: &Value) -> (StatusCode, Value) {
    sim.post(&format!("/v1/disputes/{id}/evidence"), None, body)
        .await
}

/// `GET /v1/disputes/{id}`, which must answer 200.
async fn read(sim: &TestSim, id: &str) -> Value {
    let (status, dispute) = sim.get(&format!("/v1/disputes/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{dispute}");
    dispute
}

/// The dispute's entry in `/_sim/stats`.
async fn stats_of(sim: &TestSim, id: &str) -> Value {
    sim.stats().await["disputes"][id].clone()
}

/// A time the simulator wrote: RFC 3339 in UTC with three fractional digits.
#[track_caller]
fn millis_time(value: &Value) -> OffsetDateTime {
    let text = value.as_str().expect("a time");
    let fraction = text.rsplit('.').next().unwrap_or_default();
    assert!(
        fraction.len() == 4 && fraction.ends_with('Z'),
        "not millisecond UTC: {text}"
    );
    OffsetDateTime::parse(text, &Rfc3339).expect("RFC 3339")
}

/// Notifications received about dispute `id`.
fn notified(receiver: &Receiver, id: &str) -> Vec<Received> {
    let mut received = receiver.received();
    received.retain(|n| n.body["disputeId"] == id);
    received
}

/// Waits for the notification of dispute `id` with `status`, checks its signature.
async fn wait_notified(receiver: &Receiver, id: &str, status: &str) -> Value {
    let received = eventually(|| async {
        notified(receiver, id)
            .into_iter()
            .find(|n| n.body["status"] == status)
    })
    .await;
    assert_eq!(received.signature, expected_signature(&received.raw));
    received.body
}

/// Asserts that `time` is `seconds` after `from`, give or take a minute.
#[track_caller]
fn about(time: OffsetDateTime, from: OffsetDateTime, seconds: i64) {
    let off = (time - from - time::Duration::seconds(seconds)).abs();
    assert!(
        off < time::Duration::minutes(1),
        "{time} is not {from} + {seconds} s"
    );
}

#[tokio::test]
async fn a_succeeded_payin_is_disputed_for_its_amount_or_part_and_notified() {
    let sim = TestSim::spawn(&[]).await;
    let receiver = Receiver::start(0).await;
    let payment = paid_payin(&sim, "dp-1", 10000, &receiver.url).await;
    let start = OffsetDateTime::now_utc();

    let (status, answer) = open_raw(&sim, "dp-1", "").await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let whole = answer["disputeId"].as_str().expect("id").to_owned();
    let dispute = read(&sim, &whole).await;
    assert_eq!(dispute["id"], whole);
    assert_eq!(dispute["paymentId"], payment);
    assert_eq!(dispute["reference"], "dp-1");
    assert_eq!(dispute["amount"], 10000);
    assert_eq!(dispute["currency"], "RUB");
    assert_eq!(dispute["status"], "open");
    assert_eq!(dispute["evidence"], 0);
    about(millis_time(&dispute["dueBy"]), start, 7 * 24 * 3600);
    about(millis_time(&dispute["updatedAt"]), start, 0);

    let braces = open(&sim, "dp-1", json!({})).await;
    assert_eq!(read(&sim, &braces).await["amount"], 10000);
    let part = open(&sim, "dp-1", json!({"amount": 2500, "dueInSeconds": 3600})).await;
    let dispute = read(&sim, &part).await;
    assert_eq!(dispute["amount"], 2500);
    about(millis_time(&dispute["dueBy"]), start, 3600);

    let body = wait_notified(&receiver, &part, "open").await;
    assert_eq!(
        body,
        json!({
            "event": "dispute", "object": "dispute", "disputeId": part, "paymentId": payment,
            "reference": "dp-1", "amount": 2500, "currency": "RUB", "status": "open",
            "dueBy": dispute["dueBy"], "updatedAt": dispute["updatedAt"],
        })
    );
    wait_notified(&receiver, &whole, "open").await;
    assert_eq!(
        stats_of(&sim, &whole).await,
        json!({"status": "open", "evidence": 0})
    );
}

#[tokio::test]
async fn only_a_succeeded_payin_with_a_fitting_amount_is_disputed() {
    let sim = TestSim::spawn(&[]).await;
    let _ = paid_payin(&sim, "dr-paid", 10000, NOWHERE).await;
    let refused = |reference: &'static str, body: &'static str| {
        let sim = &sim;
        async move {
            let (status, answer) = open_raw(sim, reference, body).await;
            assert!(answer["error"]["code"].is_string(), "{answer}");
            (status, answer["error"]["code"].clone())
        }
    };
    let not_found = (StatusCode::NOT_FOUND, json!("not_found"));
    assert_eq!(refused("dr-none", "").await, not_found);

    sim.submit(&payin("dr-wait", "card", 10000, NOWHERE)).await;
    let wrong_state = (StatusCode::CONFLICT, json!("invalid_state"));
    assert_eq!(refused("dr-wait", "{}").await, wrong_state);
    sim.submit(&payin("dr-no", "card", 10000, NOWHERE)).await;
    sim.complete("dr-no", json!({"decision": "reject"})).await;
    assert_eq!(refused("dr-no", "{}").await, wrong_state);
    let to = json!({"pan": "4111111111111111"});
    sim.submit(&payout("dr-out", 10000, to, NOWHERE)).await;
    sim.wait_payment("dr-out", |p| p["status"] == "succeeded")
        .await;
    assert_eq!(refused("dr-out", "{}").await, wrong_state);

    let bad = (StatusCode::UNPROCESSABLE_ENTITY, json!("invalid_request"));
    assert_eq!(refused("dr-paid", r#"{"amount": 0}"#).await, bad);
    assert_eq!(refused("dr-paid", r#"{"amount": 10001}"#).await, bad);
    assert_eq!(refused("dr-paid", r#"{"dueInSeconds": -1}"#).await, bad);
    let malformed = (StatusCode::BAD_REQUEST, json!("invalid_request"));
    assert_eq!(refused("dr-paid", r#"{"amount": "#).await, malformed);
    assert_eq!(sim.stats().await["disputes"], json!({}), "nothing opened");
}

#[tokio::test]
async fn a_dispute_is_resolved_once_and_the_outcome_notified() {
    let sim = TestSim::spawn(&[]).await;
    let receiver = Receiver::start(0).await;
    let _ = paid_payin(&sim, "dv-1", 10000, &receiver.url).await;
    let won = open(&sim, "dv-1", json!({})).await;
    let lost = open(&sim, "dv-1", json!({"amount": 100})).await;

    let (status, dispute) = resolve(&sim, &won, json!({"status": "won"})).await;
    assert_eq!(status, StatusCode::OK, "{dispute}");
    assert_eq!(
        (&dispute["id"], &dispute["status"]),
        (&json!(won), &json!("won"))
    );
    let (status, again) = resolve(&sim, &won, json!({"status": "lost"})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(again["status"], "won", "unchanged");
    let (status, dispute) = resolve(&sim, &lost, json!({"status": "lost"})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(dispute["status"], "lost");
    let (status, _) = resolve(&sim, &lost, json!({"status": "won"})).await;
    assert_eq!(status, StatusCode::CONFLICT);

    for bad in [json!({"status": "open"}), json!({"status": 1}), json!({})] {
        let (status, error) = resolve(&sim, &won, bad).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{error}");
    }
    let (status, _) = resolve(&sim, "dsp_nope", json!({"status": "won"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let notice = wait_notified(&receiver, &won, "won").await;
    assert_eq!(notice["amount"], 10000);
    wait_notified(&receiver, &lost, "lost").await;
    let statuses: Vec<Value> = notified(&receiver, &won)
        .iter()
        .map(|n| n.body["status"].clone())
        .collect();
    assert_eq!(statuses, ["open", "won"], "one notification per change");
    assert_eq!(stats_of(&sim, &won).await["status"], "won");
    assert_eq!(stats_of(&sim, &lost).await["status"], "lost");
}

/// About 3 MiB of file, in base64.
fn large_file() -> Value {
    let data = "QUJD".repeat(3 * 1024 * 1024 / 4);
    json!({"fileName": "statement.pdf", "contentType": "application/pdf", "data": data})
}

#[tokio::test]
async fn evidence_is_counted_until_the_dispute_is_decided() {
    let sim = TestSim::spawn(&[]).await;
    let _ = paid_payin(&sim, "de-1", 10000, NOWHERE).await;
    let id = open(&sim, "de-1", json!({})).await;

    let (status, dispute) = evidence(&sim, &id, &json!({"text": "delivered"})).await;
    assert_eq!(status, StatusCode::OK, "{dispute}");
    assert_eq!(
        (&dispute["status"], &dispute["evidence"]),
        (&json!("open"), &json!(1))
    );
    let file = json!({"fileName": "a.txt", "contentType": "text/plain", "data": "aGk="});
    let body = json!({"text": "signed receipt", "files": [file]});
    let (status, dispute) = evidence(&sim, &id, &body).await;
    assert_eq!(status, StatusCode::OK, "{dispute}");
    assert_eq!(dispute["evidence"], 2, "a repeat counts too");
    let (status, dispute) = evidence(&sim, &id, &json!({"files": [large_file()]})).await;
    assert_eq!(status, StatusCode::OK, "{dispute}");
    assert_eq!(dispute["evidence"], 3);

    let bad = json!({"files": [{"fileName": "a", "contentType": "text/plain", "data": "hi!"}]});
    let (status, _) = evidence(&sim, &id, &bad).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let keyless = sim
        .client
        .post(format!("{}/v1/disputes/{id}/evidence", sim.api))
        .json_body(&json!({}))
        .send()
        .await
        .expect("answered");
    assert_eq!(keyless.status(), StatusCode::UNAUTHORIZED);
    let (status, _) = evidence(&sim, "dsp_nope", &json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = sim.get("/v1/disputes/dsp_nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        read(&sim, &id).await["evidence"],
        3,
        "refused calls not counted"
    );

    resolve(&sim, &id, json!({"status": "won"})).await;
    let (status, dispute) = evidence(&sim, &id, &json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        (&dispute["status"], &dispute["evidence"]),
        (&json!("won"), &json!(3))
    );
    assert_eq!(
        stats_of(&sim, &id).await,
        json!({"status": "won", "evidence": 3})
    );
}

#[tokio::test]
async fn without_evidence_a_dispute_is_lost_at_due_by_by_itself() {
    let sim = TestSim::spawn(&[]).await;
    let receiver = Receiver::start(0).await;
    let _ = paid_payin(&sim, "dl-1", 10000, &receiver.url).await;
    let opened = Instant::now();
    let bare = open(&sim, "dl-1", json!({"dueInSeconds": 1})).await;
    let argued = open(&sim, "dl-1", json!({"dueInSeconds": 1})).await;
    let (status, _) = evidence(&sim, &argued, &json!({"text": "see attached"})).await;
    assert_eq!(status, StatusCode::OK);

    let lost = wait_notified(&receiver, &bare, "lost").await;
    assert!(opened.elapsed() < Duration::from_secs(5), "lost in time");
    assert!(millis_time(&lost["updatedAt"]) >= millis_time(&lost["dueBy"]));
    assert_eq!(read(&sim, &bare).await["status"], "lost");
    let (status, _) = evidence(&sim, &bare, &json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "too late");

    tokio::time::sleep(Duration::from_millis(1500)).await;
    let dispute = read(&sim, &argued).await;
    assert_eq!(
        (&dispute["status"], &dispute["evidence"]),
        (&json!("open"), &json!(1))
    );
    let statuses: Vec<Value> = notified(&receiver, &argued)
        .iter()
        .map(|n| n.body["status"].clone())
        .collect();
    assert_eq!(statuses, ["open"]);
}

#[tokio::test]
async fn api_faults_apply_to_evidence_and_a_held_answer_still_counts() {
    let sim = TestSim::spawn(&["--hold-ms", "60000"]).await;
    let _ = paid_payin(&sim, "df-1", 10000, NOWHERE).await;
    let id = open(&sim, "df-1", json!({})).await;
    let path = format!("/v1/disputes/{id}/evidence");

    sim.faults(json!({"failRate": 1})).await;
    let (status, _) = sim.post(&path, None, &json!({})).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    sim.faults(json!({"failRate": 0, "timeoutRate": 1})).await;
    let gave_up = sim
        .api_post(&path)
        .json_body(&json!({"text": "x"}))
        .timeout(Duration::from_secs(2))
        .send()
        .await;
    assert!(gave_up.is_err_and(|e| e.is_timeout()), "the answer is held");
    sim.faults(json!({"timeoutRate": 0})).await;
    assert_eq!(
        stats_of(&sim, &id).await,
        json!({"status": "open", "evidence": 1}),
        "processed though the caller timed out; the 503 was not"
    );
    sim.faults(json!({"ambiguousRate": 1})).await;
    let (status, _) = sim.post(&path, None, &json!({})).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    sim.faults(json!({"ambiguousRate": 0})).await;
    assert_eq!(read(&sim, &id).await["evidence"], 2);
}

#[tokio::test]
async fn notification_faults_apply_to_disputes() {
    let sim = TestSim::spawn(&[]).await;
    let receiver = Receiver::start(0).await;
    let _ = paid_payin(&sim, "dn-1", 10000, &receiver.url).await;
    sim.faults(json!({"duplicateNotifyRate": 1})).await;
    let twice = open(&sim, "dn-1", json!({})).await;
    eventually(|| async { (notified(&receiver, &twice).len() >= 2).then_some(()) }).await;

    sim.faults(json!({"duplicateNotifyRate": 0, "dropNotifyRate": 1}))
        .await;
    let dropped = open(&sim, "dn-1", json!({})).await;
    sim.faults(json!({"dropNotifyRate": 0})).await;
    let later = open(&sim, "dn-1", json!({})).await;
    wait_notified(&receiver, &later, "open").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(notified(&receiver, &dropped).is_empty());
}
