//! Callbacks the gateway really sends (through the outbox worker of `adapters-callback`, to a
//! receiver on loopback) against the document's `operationFinished` webhook.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use adapters_callback::{CallbackConfig, CallbackWorker};
use domain::signature::verify;
use domain::testkit::WallClock;
use serde_json::{json, Value};

use super::flows::complete;
use super::Checked;
use crate::helpers::{deposit_body, sbp_withdrawal, SETTLE};

/// One callback as received: lower-case header names and the raw body.
type Received = (BTreeMap<String, String>, String);

/// A merchant's callback endpoint on loopback that answers 200 and keeps what it got.
async fn receiver() -> (
    String,
    Arc<Mutex<Vec<Received>>>,
    actix_web::dev::ServerHandle,
) {
    let got: Arc<Mutex<Vec<Received>>> = Arc::default();
    let sink = got.clone();
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let url = format!("http://{}/callbacks", listener.local_addr().expect("bound"));
    let server = HttpServer::new(move || {
        let sink = sink.clone();
        App::new().default_service(web::to(move |req: HttpRequest, body: web::Bytes| {
            let sink = sink.clone();
            async move {
                let headers = req
                    .headers()
                    .iter()
                    .map(|(n, v)| (n.as_str().to_string(), v.to_str().unwrap_or("").into()))
                    .collect();
                let body = String::from_utf8_lossy(&body).into_owned();
                sink.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((headers, body));
                HttpResponse::Ok().finish()
            }
        }))
    })
    .workers(1)
    .listen(listener)
    .expect("listen")
    .run();
    let handle = server.handle();
    tokio::spawn(server);
    (url, got, handle)
}

/// An approved deposit, a deposit declined at creation and a payout declined when it
/// settles, each with a `callbackUrl`: their callbacks match the webhook, are signed with the
/// secret of their direction, and are first attempts.
pub async fn callbacks_are_sent_as_documented(api: &Checked<'_>) {
    let app = api.app;
    let (url, got, handle) = receiver().await;
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
    assert_eq!(payout.status, 200, "{}", payout.text);
    tokio::time::sleep(SETTLE * 3).await;
    app.gateway.settle_due_payouts().await.expect("settled");

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
        received = got.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if received.len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    handle.stop(false).await;
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
