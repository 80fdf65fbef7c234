//! Issue 47 through the real binary on both backends: one deposit's callbacks (its own, a
//! refund's, a dispute's two changes) numbered 1, 2, 3, 4 in the order they were queued and
//! listed newest first by `GET /api/v1/callbacks`; a replay since T of the failed callbacks
//! re-sends exactly those queued since T; a retry by id sends one again; 404 for another
//! merchant's or direction's, 400 before 401 for a missing `direction`, 401 for a version-1
//! signature on a POST.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::helpers::api::deposit;
use crate::helpers::{
    card_payout, gateway_line, on_sqlite_and_postgres, wait_until, Api, CallbackReceiver,
    GatewayProcess, Merchant, Sandbox, Serve, TestDb, DEADLINE,
};
use testkit::signing::Scheme;

on_sqlite_and_postgres!(
    async numbered_listed_replayed:
    callbacks_are_numbered_listed_and_replayed_on_sqlite,
    callbacks_are_numbered_listed_and_replayed_on_postgres
);

/// An approved card deposit of `amount` whose callbacks go to `cb`.
async fn approved(api: &Api, sandbox: &mut Sandbox, amount: &str, moid: &str, cb: &str) -> String {
    let id = api
        .create_deposit(&deposit("card", amount, moid, Some(cb)))
        .await
        .operation_id();
    sandbox.complete(&id, 1).await;
    id
}

/// Every callback received so far for `operation`: `(type, status, sequence)` by arrival.
fn received(receiver: &CallbackReceiver, operation: &str) -> Vec<(String, Value, u64)> {
    receiver
        .for_operation(operation)
        .iter()
        .map(|c| {
            let data = c.json()["data"].clone();
            let kind = data["type"].as_str().unwrap_or_default().to_string();
            (
                kind,
                data["status"].clone(),
                data["sequence"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// The merchant's deposit callbacks, a page of `query`: the answer's data.
async fn listed(api: &Api, query: &str) -> Value {
    let answer = api
        .get(&format!("/api/v1/callbacks?direction=deposit{query}"))
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.body["data"].clone()
}

/// How many attempts the receiver had for each operation.
fn hits(receiver: &CallbackReceiver, ids: &[&String]) -> Vec<usize> {
    let counts: HashMap<String, usize> = receiver.per_operation();
    ids.iter()
        .map(|id| counts.get(*id).copied().unwrap_or(0))
        .collect()
}

async fn numbered_listed_replayed(db: TestDb) {
    let shop = Merchant::funded(&db, "sequence-shop", "1000.00");
    let stranger = Merchant::create(&db, "sequence-stranger");
    let receiver = CallbackReceiver::start();
    receiver.set_status("/down", 503);
    let gw = GatewayProcess::start("a", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let mut sandbox = Sandbox::new(&gw, &db).await;
    let cb = receiver.url("/cb");

    // One deposit: approved (1), refunded in part (2), appealed for a wrong amount (3) and the
    // appeal rejected (4). Each waits for the one before, so the order is the queue's.
    let dep = approved(&api, &mut sandbox, "100.00", "seq-1", &cb).await;
    receiver
        .wait_delivered(std::slice::from_ref(&dep), DEADLINE)
        .await;
    let refund = api
        .post(
            &format!("/api/v1/deposits/{dep}/refunds"),
            &json!({"amount": "30.00"}),
        )
        .await;
    assert_eq!(refund.status, 200, "{}", refund.body);
    let refund_id = refund.body["data"]["refundId"]
        .as_str()
        .expect("an id")
        .to_string();
    wait_until("the refund's callback", DEADLINE, || {
        let seen = received(&receiver, &dep);
        async move { (seen.iter().any(|s| s.0 == "refund"), format!("{seen:?}")) }
    })
    .await;
    let appeal = json!({"reason": "wrong_amount", "paidAmount": "120.00"});
    let opened = api
        .post(&format!("/api/v1/deposits/{dep}/appeals"), &appeal)
        .await;
    assert_eq!(opened.status, 200, "{}", opened.body);
    let dispute = opened.body["data"]["disputeId"]
        .as_str()
        .expect("an id")
        .to_string();
    wait_until("the appeal's callback", DEADLINE, || {
        let seen = received(&receiver, &dep);
        async move { (seen.iter().any(|s| s.0 == "dispute"), format!("{seen:?}")) }
    })
    .await;
    gateway_line(&db, &format!("dispute reject {dispute} --reason not-paid")).expect_code(0);
    wait_until("the rejection's callback", DEADLINE, || {
        let seen = received(&receiver, &dep);
        async move { (seen.len() >= 4, format!("{seen:?}")) }
    })
    .await;
    let seen = received(&receiver, &dep);
    assert_eq!(
        seen,
        [
            ("deposit".to_string(), json!(1), 1),
            ("refund".to_string(), json!(1), 2),
            ("dispute".to_string(), json!("open"), 3),
            ("dispute".to_string(), json!("rejected"), 4),
        ],
        "one count per deposit, in the order queued"
    );

    // Listed newest first, with their ids, sequence and attempts.
    let page = listed(&api, "").await;
    let rows = page["callbacks"].as_array().expect("callbacks");
    let shown: Vec<(Value, Value, Value)> = rows
        .iter()
        .map(|r| {
            (
                r["type"].clone(),
                r["sequence"].clone(),
                r["status"].clone(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            (json!("dispute"), json!(4), json!("delivered")),
            (json!("dispute"), json!(3), json!("delivered")),
            (json!("refund"), json!(2), json!("delivered")),
            (json!("deposit"), json!(1), json!("delivered")),
        ],
        "{page}"
    );
    assert_eq!(rows[3]["callbackId"], dep.as_str());
    assert_eq!(rows[2]["callbackId"], refund_id.as_str());
    assert_eq!(rows[2]["refundId"], refund_id.as_str());
    assert_eq!(rows[0]["disputeId"], dispute.as_str());
    assert_eq!(rows[3]["refundId"], Value::Null);
    assert!(
        rows.iter().all(|r| r["operationId"] == dep.as_str()),
        "{page}"
    );
    let webhook_ids: Vec<String> = receiver
        .for_operation(&dep)
        .iter()
        .map(|c| c.header("webhook-id").to_string())
        .collect();
    for row in rows {
        let id = row["callbackId"].as_str().expect("an id");
        assert!(webhook_ids.iter().any(|w| w == id), "{id} is a webhook-id");
        assert_eq!(row["attempts"][0]["httpStatus"], 200, "{row}");
    }
    assert!(page.get("next").is_none(), "one page: {page}");
    let first = listed(&api, "&limit=3").await;
    let next = first["next"].as_str().expect("a next cursor").to_string();
    let rest = listed(&api, &format!("&limit=3&after={next}")).await;
    assert_eq!(rest["callbacks"][0]["sequence"], 1, "{rest}");
    assert!(rest.get("next").is_none(), "{rest}");
    let payouts = api.get("/api/v1/callbacks?direction=withdrawal").await;
    assert_eq!(payouts.status, 200, "{}", payouts.body);
    assert_eq!(payouts.body["data"]["callbacks"], json!([]));

    // Callbacks to a target that is down: one before T, two after; all fail (1 + 3 attempts).
    let down = receiver.url("/down");
    let before = approved(&api, &mut sandbox, "10.00", "down-0", &down).await;
    let failed = |ids: Vec<String>| {
        let api = api.clone();
        async move {
            let page = listed(&api, "&status=failed").await;
            let found: Vec<String> = page["callbacks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["operationId"].as_str().map(str::to_string))
                .collect();
            (ids.iter().all(|id| found.contains(id)), format!("{page}"))
        }
    };
    wait_until("the first failure", DEADLINE, || {
        failed(vec![before.clone()])
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let since = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .expect("a time");
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let after_a = approved(&api, &mut sandbox, "11.00", "down-1", &down).await;
    let after_b = approved(&api, &mut sandbox, "12.00", "down-2", &down).await;
    // A withdrawal's failed callback is another direction's: never replayed here.
    let payout = api
        .create_withdrawal(&card_payout(
            "5.00",
            "4242424242424242",
            "down-3",
            Some(&down),
        ))
        .await
        .operation_id();
    wait_until("the failures after T", DEADLINE, || {
        failed(vec![after_a.clone(), after_b.clone()])
    })
    .await;
    wait_until("the payout's failure", DEADLINE, || {
        let hits = receiver.for_operation(&payout).len();
        async move { (hits >= 4, format!("{hits} attempts")) }
    })
    .await;
    let ids = [&before, &after_a, &after_b, &payout];
    assert_eq!(hits(&receiver, &ids), [4, 4, 4, 4]);

    // The replay re-sends exactly the two failed since T, on a fresh schedule.
    receiver.set_status("/down", 200);
    let replay = "/api/v1/callbacks/replay?direction=deposit";
    let body = json!({"since": since, "status": "failed"});
    let answer = api.post(replay, &body).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body, json!({"data": {"requeued": 2}}));
    receiver
        .wait_delivered(&[after_a.clone(), after_b.clone()], DEADLINE)
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    assert_eq!(hits(&receiver, &ids), [4, 5, 5, 4], "exactly those re-sent");
    let again = api.post(replay, &body).await;
    assert_eq!(
        again.body,
        json!({"data": {"requeued": 0}}),
        "none failed now"
    );
    let replayed = &receiver.for_operation(&after_a)[4];
    assert_eq!(replayed.attempt(), 5, "attempt numbers go on");
    assert_eq!(
        replayed.header("webhook-id"),
        receiver.for_operation(&after_a)[0].header("webhook-id"),
        "the same callback"
    );

    // A retry by id: 404 for another direction's or merchant's, else it is sent again.
    let retry =
        |direction: &str, id: &str| format!("/api/v1/callbacks/{id}/retry?direction={direction}");
    let wrong_direction = api.post(&retry("withdrawal", &before), &json!({})).await;
    assert_eq!(wrong_direction.status, 404, "{}", wrong_direction.body);
    let theirs = Api::new(&gw, &stranger)
        .post(&retry("deposit", &before), &json!({}))
        .await;
    assert_eq!(theirs.status, 404, "{}", theirs.body);
    let unknown = api.post(&retry("deposit", "not-an-id"), &json!({})).await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    let sent = api.post(&retry("deposit", &before), &json!({})).await;
    assert_eq!(sent.body, json!({"data": {"requeued": 1}}), "{}", sent.body);
    receiver
        .wait_delivered(std::slice::from_ref(&before), DEADLINE)
        .await;
    let payout_retry = api.post(&retry("withdrawal", &payout), &json!({})).await;
    assert_eq!(
        payout_retry.body,
        json!({"data": {"requeued": 1}}),
        "{}",
        payout_retry.body
    );
    receiver
        .wait_delivered(std::slice::from_ref(&payout), DEADLINE)
        .await;

    // Bad requests: the direction first (400 before any signature is read), then a
    // version-1 signature on a POST (401), then the body (400).
    let client = reqwest::Client::new();
    let unsigned = client
        .get(gw.url("/api/v1/callbacks"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(unsigned.status(), 400);
    let refused: Value =
        serde_json::from_str(&unsigned.text().await.expect("a body")).expect("JSON");
    assert_eq!(refused["errorCode"], "InvalidRequest", "{refused}");
    assert_eq!(refused["details"][0]["field"], "direction", "{refused}");
    let v1 = api.signature(Scheme::V1, "POST", replay, body.to_string().as_bytes());
    let old_scheme = api.post_raw(replay, &body, &v1).await;
    assert_eq!(old_scheme.status, 401, "{}", old_scheme.body);
    let bad = api
        .post(
            replay,
            &json!({"since": "yesterday", "status": "delivered"}),
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    let fields: Vec<&str> = bad.body["details"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["field"].as_str())
        .collect();
    assert_eq!(fields, ["since", "status"], "{}", bad.body);
    let bad_status = api
        .get("/api/v1/callbacks?direction=deposit&status=sent")
        .await;
    assert_eq!(bad_status.status, 400, "{}", bad_status.body);
}
