//! Callbacks the gateway really sends (through the outbox worker of `adapters-callback`, to a
//! receiver on loopback) against the document's `operationFinished` webhook.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use adapters_callback::{CallbackConfig, CallbackWorker};
use domain::signature::verify;
use domain::testkit::WallClock;
use serde_json::{json, Value};
use testkit::CallbackReceiver;

use super::flows::complete;
use super::Checked;
use crate::helpers::{deposit_body, sbp_withdrawal};

/// One callback as received: lower-case header names and the raw body.
type Received = (BTreeMap<String, String>, String);

/// An approved deposit, a deposit declined at creation and a payout declined when it
/// settles, each with a `callbackUrl`: their callbacks match the webhook, are signed with the
/// secret of their direction, and are first attempts.
pub async fn callbacks_are_sent_as_documented(api: &Checked<'_>) {
    let app = api.app;
    // A merchant's callback endpoint on loopback that answers 200 and keeps what it got.
    let receiver = CallbackReceiver::start();
    let url = receiver.url("/callbacks");
    let with_callback = |mut body: Value| {
        body["callbackUrl"] = json!(url);
        body["merchantOperationId"] = json!(uuid::Uuid::new_v4().to_string());
        body
    };
    let paid = api
        .post(
            "/api/v1/deposits",
            &with_callback(deposit_body("card", "10.00")),
        )
        .await;
    complete(api, &paid.operation_id(), &json!({"status": 1})).await;
    let declined = api
        .post(
            "/api/v1/deposits",
            &with_callback(deposit_body("card", "10.05")),
        )
        .await;
    assert_eq!(declined.data()["status"], 2, "{}", declined.text);
    app.credit("100.00").await;
    let payout = with_callback(sbp_withdrawal("10.00", "+70000000002"));
    let payout = api.post("/api/v1/withdrawals", &payout).await;
    payout.assert_ok();
    app.settle_payouts().await;

    let config = CallbackConfig {
        allow_private: true,
        ..CallbackConfig::default()
    };
    let store = Arc::new(app.db.clone());
    let worker = CallbackWorker::new(store.clone(), store, Arc::new(WallClock), config, "openapi")
        .expect("a worker");
    let mut received = Vec::new();
    for _ in 0..50 {
        worker.run_once().await.expect("delivered");
        received = receiver
            .captured()
            .into_iter()
            .map(|c| {
                let body = String::from_utf8_lossy(&c.body).into_owned();
                (c.headers.into_iter().collect(), body)
            })
            .collect::<Vec<Received>>();
        if received.len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(received.len(), 3, "{received:?}");

    for (headers, body) in &received {
        api.spec.check_callback("operationFinished", headers, body);
        let data: Value = serde_json::from_str(body).expect("JSON");
        let secret = match data["data"]["type"].as_str() {
            Some("withdrawal") => app.shop.withdrawal_secret(),
            _ => app.shop.deposit_secret(),
        };
        let signature = headers.get("x-signature").map(String::as_str).unwrap_or("");
        assert!(
            verify(secret, body.as_bytes(), signature),
            "{headers:?} {body}"
        );
        assert_eq!(
            headers.get("merchant-id").map(String::as_str),
            Some(app.shop.id())
        );
        assert_eq!(
            headers.get("x-callback-attempt").map(String::as_str),
            Some("1")
        );
    }
    let codes: Vec<Value> = received
        .iter()
        .map(|(_, body)| {
            serde_json::from_str::<Value>(body).unwrap_or_default()["data"]["errorCode"].clone()
        })
        .collect();
    assert!(codes.contains(&json!("ProviderDeclined")), "{codes:?}");
    assert!(codes.contains(&json!("RecipientNotFound")), "{codes:?}");
}

/// The merchant's callbacks as `/api/v1/callbacks` lists them (after
/// [`callbacks_are_sent_as_documented`]: two deposits' and a payout's, delivered), one sent
/// again by its id, a replay, and the refusals of each.
pub async fn callbacks_are_read_and_sent_again_as_documented(api: &Checked<'_>) {
    let listed = api.get("/api/v1/callbacks?direction=deposit").await;
    listed.assert_ok();
    let callbacks = listed.data()["callbacks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(callbacks.len(), 2, "{}", listed.text);
    assert!(callbacks
        .iter()
        .all(|c| c["type"] == "deposit" && c["sequence"] == 1));
    let first = api.get("/api/v1/callbacks?direction=deposit&limit=1").await;
    let next = first.data()["next"]
        .as_str()
        .expect("a next page")
        .to_string();
    let rest = api
        .get(&format!(
            "/api/v1/callbacks?direction=deposit&limit=1&after={next}"
        ))
        .await;
    assert_eq!(
        rest.data()["callbacks"][0]["callbackId"],
        callbacks[1]["callbackId"]
    );
    let payouts = api
        .get("/api/v1/callbacks?direction=withdrawal&status=delivered")
        .await;
    assert_eq!(
        payouts.data()["callbacks"].as_array().map(Vec::len),
        Some(1)
    );
    api.get("/api/v1/callbacks")
        .await
        .assert_error(400, "InvalidRequest");
    api.get("/api/v1/callbacks?direction=deposit&status=sent&limit=0")
        .await
        .assert_error(400, "InvalidRequest");

    let id = callbacks[0]["callbackId"].as_str().expect("an id");
    let retry = format!("/api/v1/callbacks/{id}/retry?direction=deposit");
    let sent = api.post(&retry, &json!({})).await;
    assert_eq!(sent.data()["requeued"], 1, "{}", sent.text);
    api.post(&retry, &json!({"now": true}))
        .await
        .assert_error(400, "InvalidRequest");
    let elsewhere = format!("/api/v1/callbacks/{id}/retry?direction=withdrawal");
    api.post(&elsewhere, &json!({}))
        .await
        .assert_error(404, "NotFound");

    let replay = "/api/v1/callbacks/replay?direction=withdrawal";
    let none = api
        .post(
            replay,
            &json!({"since": "2026-01-01T00:00:00Z", "status": "failed"}),
        )
        .await;
    assert_eq!(none.data()["requeued"], 0, "{}", none.text);
    api.refused_by_both(
        replay,
        json!({"since": "2026-01-01T00:00:00Z", "status": "delivered"}),
    )
    .await;
    api.post("/api/v1/callbacks/replay", &json!({}))
        .await
        .assert_error(400, "InvalidRequest");
}
