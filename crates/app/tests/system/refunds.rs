//! Issue 16: refunds and cancellations on the real binary, on SQLite and PostgreSQL — partial
//! refunds within the deposit's amount, a declined refund freeing its amount, the refund
//! callback, concurrent refunds, and cancels racing the user and payout settlement.

use std::time::Duration;

use domain::merchant::Secret;
use domain::signature::verify;
use serde_json::{json, Value};

use crate::helpers::{
    card_payout, deposit, gateway, gateway_line, on_sqlite_and_postgres, wait_until, Api,
    CallbackReceiver, GatewayProcess, Merchant, Sandbox, Serve, TestDb, DEADLINE,
};

on_sqlite_and_postgres!(
    async refunds_end_to_end:
    refunds_end_to_end_on_sqlite,
    refunds_end_to_end_on_postgres
);

on_sqlite_and_postgres!(
    async concurrent_refunds:
    concurrent_refunds_stay_within_the_amount_on_sqlite,
    concurrent_refunds_stay_within_the_amount_on_postgres
);

on_sqlite_and_postgres!(
    async cancel_races:
    cancels_race_payment_and_settlement_on_sqlite,
    cancels_race_payment_and_settlement_on_postgres
);

/// An approved sandbox card deposit of `amount` with `callback`: its id.
async fn approved_deposit(
    api: &Api,
    sandbox: &mut Sandbox,
    amount: &str,
    moid: &str,
    callback: Option<&str>,
) -> String {
    let id = api
        .create_deposit(&deposit("card", amount, moid, callback))
        .await
        .operation_id();
    sandbox.complete(&id, 1).await;
    id
}

fn refunds_path(deposit: &str) -> String {
    format!("/api/v1/deposits/{deposit}/refunds")
}

/// Waits until the refund is final: its data.
async fn final_refund(api: &Api, deposit: &str, refund: &str) -> Value {
    let path = format!("{}/{refund}", refunds_path(deposit));
    wait_until("the refund is final", DEADLINE, || {
        let api = api.clone();
        let path = path.clone();
        async move {
            let answer = api.get(&path).await;
            assert_eq!(answer.status, 200, "{}", answer.body);
            (answer.body["data"]["status"] != 3, answer.body.to_string())
        }
    })
    .await;
    api.get(&path).await.body["data"].clone()
}

async fn refunds_end_to_end(db: TestDb) {
    let shop = Merchant::funded(&db, "refund-shop", "1000.00");
    let receiver = CallbackReceiver::start();
    let gw = GatewayProcess::start("a", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let mut sandbox = Sandbox::new(&gw, &db).await;
    let cb = receiver.url("/cb");
    let dep = approved_deposit(&api, &mut sandbox, "100.00", "dep-1", Some(&cb)).await;
    let path = refunds_path(&dep);

    // A refund answers 3 with its own id; the same merchantRefundId and body replays it.
    let body = json!({"amount": "30.00", "merchantRefundId": "r-1"});
    let first = api.post(&path, &body).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let r1 = first.body["data"]["refundId"]
        .as_str()
        .expect("present")
        .to_string();
    assert_eq!(first.body["data"]["status"], 3);
    assert_eq!(first.body["data"]["operationId"], dep.as_str());
    assert_eq!(first.body["data"]["merchantRefundId"], "r-1");
    let replay = api.post(&path, &body).await;
    assert_eq!(replay.status, 200, "{}", replay.body);
    assert_eq!(replay.body["data"]["refundId"], r1.as_str());
    // The same id with another body, or on another deposit, is a duplicate.
    let other = api
        .post(
            &path,
            &json!({"amount": "31.00", "merchantRefundId": "r-1"}),
        )
        .await;
    assert_eq!(
        (other.status, &other.body["errorCode"]),
        (409, &json!("DuplicateOperation"))
    );
    let dep2 = approved_deposit(&api, &mut sandbox, "50.00", "dep-2", None).await;
    let elsewhere = api.post(&refunds_path(&dep2), &body).await;
    assert_eq!(elsewhere.status, 409, "{}", elsewhere.body);

    // An amount ending in 05 settles declined, and its amount counts no more.
    let declined = api.post(&path, &json!({"amount": "60.05"})).await;
    assert_eq!(declined.status, 200, "{}", declined.body);
    let r2 = declined.body["data"]["refundId"]
        .as_str()
        .expect("present")
        .to_string();
    let over = api.post(&path, &json!({"amount": "10.00"})).await;
    assert_eq!(over.status, 422, "{}", over.body);
    assert_eq!(over.body["errorCode"], "RefundExceedsAmount");
    let r2_final = final_refund(&api, &dep, &r2).await;
    assert_eq!(r2_final["status"], 2);
    assert_eq!(r2_final["errorCode"], "ProviderDeclined");

    // Two more partial refunds bring the sum to the amount; a fourth is refused.
    let r3 = api.post(&path, &json!({"amount": "50.00"})).await;
    let r4 = api.post(&path, &json!({"amount": "20.00"})).await;
    assert_eq!(
        (r3.status, r4.status),
        (200, 200),
        "{} {}",
        r3.body,
        r4.body
    );
    let fourth = api.post(&path, &json!({"amount": "0.01"})).await;
    assert_eq!(
        fourth.body["errorCode"], "RefundExceedsAmount",
        "{}",
        fourth.body
    );
    for refund in [
        &r1,
        r3.body["data"]["refundId"].as_str().expect("present"),
        r4.body["data"]["refundId"].as_str().expect("present"),
    ] {
        assert_eq!(final_refund(&api, &dep, refund).await["status"], 1);
    }

    // The deposit's read shape carries them, oldest first.
    let read = api.get(&format!("/api/v1/deposits/{dep}")).await;
    let data = &read.body["data"];
    assert_eq!(data["refundedAmount"], "100.00", "{data}");
    let refunds = data["refunds"].as_array().expect("present");
    assert_eq!(refunds.len(), 4, "{data}");
    assert_eq!(refunds[0]["refundId"], r1.as_str());

    // Refunds of a deposit that is not approved are 409; more than the balance is 422.
    let waiting = api
        .create_deposit(&deposit("card", "10.00", "dep-3", None))
        .await
        .operation_id();
    let not_approved = api
        .post(&refunds_path(&waiting), &json!({"amount": "1.00"}))
        .await;
    assert_eq!(
        (not_approved.status, &not_approved.body["errorCode"]),
        (409, &json!("InvalidState"))
    );
    let (available, _) = api.balance().await;
    let big = approved_deposit(&api, &mut sandbox, "5000.00", "dep-big", None).await;
    let debit = format!(
        "balance debit --merchant {} --currency RUB --amount 5000.00",
        shop.id
    );
    gateway_line(&db, &debit).expect_code(0);
    let too_much = api
        .post(&refunds_path(&big), &json!({"amount": "5000.00"}))
        .await;
    assert_eq!(too_much.status, 422, "{}", too_much.body);
    assert_eq!(too_much.body["errorCode"], "InsufficientBalance");
    assert_eq!(
        api.balance().await.0,
        available,
        "a refused refund holds nothing"
    );

    // Each final refund has its own callback, signed with the deposit secret.
    receiver
        .wait_delivered(std::slice::from_ref(&dep), DEADLINE)
        .await;
    wait_until("four refund callbacks", DEADLINE, || {
        let n = refund_callbacks(&receiver).len();
        async move { (n >= 4, format!("{n} refund callbacks")) }
    })
    .await;
    let callbacks = refund_callbacks(&receiver);
    let first = callbacks
        .iter()
        .find(|c| c.json()["data"]["refundId"] == r1.as_str())
        .expect("r-1's callback");
    let json = first.json();
    let data = &json["data"];
    assert_eq!(data["type"], "refund");
    assert_eq!(data["status"], 1);
    assert_eq!(data["amount"], "30.00");
    assert_eq!(data["currency"], "RUB");
    assert_eq!(data["operationId"], dep.as_str());
    assert_eq!(data["merchantRefundId"], "r-1");
    let signature = first.header("x-signature");
    assert!(verify(
        &Secret::new(&shop.deposit_secret),
        &first.body,
        signature
    ));
    assert!(!verify(
        &Secret::new(&shop.withdrawal_secret),
        &first.body,
        signature
    ));
    let declined_cb = callbacks
        .iter()
        .find(|c| c.json()["data"]["refundId"] == r2.as_str())
        .expect("the declined refund's callback");
    assert_eq!(declined_cb.json()["data"]["errorCode"], "ProviderDeclined");

    gateway(&db, &["ledger", "verify"]).expect_code(0);
}

fn refund_callbacks(receiver: &CallbackReceiver) -> Vec<testkit::Captured> {
    receiver
        .captured()
        .into_iter()
        .filter(|c| c.json()["data"]["type"] == "refund")
        .collect()
}

async fn concurrent_refunds(db: TestDb) {
    let shop = Merchant::funded(&db, "refund-race-shop", "1000.00");
    let gw = GatewayProcess::start("a", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let mut sandbox = Sandbox::new(&gw, &db).await;
    let dep = approved_deposit(&api, &mut sandbox, "100.00", "dep-race", None).await;
    let path = refunds_path(&dep);
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let api = api.clone();
            let path = path.clone();
            tokio::spawn(async move { api.post(&path, &json!({"amount": "10.00"})).await })
        })
        .collect();
    let mut ok = 0;
    for task in tasks {
        let answer = task.await.expect("present");
        match answer.status {
            200 => ok += 1,
            422 => assert_eq!(answer.body["errorCode"], "RefundExceedsAmount"),
            other => panic!("{other}: {}", answer.body),
        }
    }
    assert_eq!(ok, 10, "exactly the deposit's amount is refunded");
    // The ten refunds hold 100.00 out of the available balance until the sandbox settles
    // each (approved: 10.00 does not end in 05); some may settle while the others are
    // still answered, so held is at most 100.00 and reaches 0.00, never more taken.
    let settled = std::time::Instant::now();
    loop {
        let (available, held) = api.balance().await;
        assert_eq!(available, "1000.00", "held {held}");
        let held: f64 = held.parse().expect("an amount");
        assert!(held <= 100.0, "held {held}");
        if held == 0.0 {
            break;
        }
        assert!(settled.elapsed() < DEADLINE, "refunds still held: {held}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    gateway(&db, &["ledger", "verify"]).expect_code(0);
}

async fn cancel_races(db: TestDb) {
    let shop = Merchant::funded(&db, "cancel-shop", "1000.00");
    let serve = Serve::default().with("GATEWAY_SANDBOX_SETTLE_MS", "1500");
    let gw = GatewayProcess::start("a", &db, &serve);
    let api = Api::new(&gw, &shop);
    let sandbox = Sandbox::new(&gw, &db).await;

    // A waiting deposit is canceled; again is 409. The body must be {}.
    let dep = api
        .create_deposit(&deposit("card", "10.00", "c-1", None))
        .await
        .operation_id();
    let cancel = format!("/api/v1/deposits/{dep}/cancel");
    let bad = api.post(&cancel, &json!({"reason": "x"})).await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    let canceled = api.post(&cancel, &json!({})).await;
    assert_eq!(canceled.status, 200, "{}", canceled.body);
    assert_eq!(canceled.body["data"]["status"], 2);
    assert_eq!(canceled.body["data"]["errorCode"], "Canceled");
    assert_eq!(canceled.body["data"]["refunds"], json!([]));
    assert_eq!(api.post(&cancel, &json!({})).await.status, 409);

    // Cancel against the user paying: exactly one wins, and the other is refused.
    for i in 0..5 {
        let dep = api
            .create_deposit(&deposit("card", "10.00", &format!("race-{i}"), None))
            .await
            .operation_id();
        let cancel = format!("/api/v1/deposits/{dep}/cancel");
        let empty = json!({});
        let (canceled, paid) =
            tokio::join!(api.post(&cancel, &empty), sandbox.post_complete(&dep, 1));
        let read = api.get(&format!("/api/v1/deposits/{dep}")).await;
        let status = &read.body["data"]["status"];
        match (canceled.status, paid.status) {
            (200, 409) => assert_eq!(status, 2),
            (409, 200) => assert_eq!(status, 1),
            other => panic!(
                "both or neither won: {other:?} {} {}",
                canceled.body, paid.body
            ),
        }
    }

    // A payout before it settles: canceled, the hold released.
    let before = api.balance().await;
    let payout = api
        .create_withdrawal(&card_payout("100.00", "4242424242424242", "p-1", None))
        .await
        .operation_id();
    let cancel = format!("/api/v1/withdrawals/{payout}/cancel");
    let canceled = api.post(&cancel, &json!({})).await;
    assert_eq!(canceled.status, 200, "{}", canceled.body);
    assert_eq!(canceled.body["data"]["errorCode"], "Canceled");
    assert_eq!(api.balance().await, before, "the hold is released");

    // After: its settle time has passed, so it was paid; cancel is 409.
    let payout = api
        .create_withdrawal(&card_payout("100.00", "4242424242424242", "p-2", None))
        .await
        .operation_id();
    tokio::time::sleep(Duration::from_millis(1700)).await;
    let late = api
        .post(&format!("/api/v1/withdrawals/{payout}/cancel"), &json!({}))
        .await;
    assert_eq!(
        (late.status, &late.body["errorCode"]),
        (409, &json!("InvalidState"))
    );
    let read = api.get(&format!("/api/v1/withdrawals/{payout}")).await;
    assert_eq!(read.body["data"]["status"], 1, "{}", read.body);

    // Cancels racing settlement: each payout ends once, paid or canceled, never both.
    let mut payouts = Vec::new();
    for i in 0..6 {
        let id = api
            .create_withdrawal(&card_payout(
                "10.00",
                "4242424242424242",
                &format!("pr-{i}"),
                None,
            ))
            .await
            .operation_id();
        payouts.push(id);
    }
    tokio::time::sleep(Duration::from_millis(1400)).await;
    for id in &payouts {
        let answer = api
            .post(&format!("/api/v1/withdrawals/{id}/cancel"), &json!({}))
            .await;
        let read = api
            .final_state(&format!("/api/v1/withdrawals/{id}"), DEADLINE, &gw)
            .await;
        match answer.status {
            200 => assert_eq!(read["errorCode"], "Canceled", "{read}"),
            409 => assert_eq!(read["status"], 1, "{read}"),
            other => panic!("{other}: {}", answer.body),
        }
    }
    gateway(&db, &["ledger", "verify"]).expect_code(0);
}
