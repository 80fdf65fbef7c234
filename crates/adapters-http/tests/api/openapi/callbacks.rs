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
