//! Issue 45: appeals through the real binary on both backends. An expired deposit appealed
//! with a PNG receipt and accepted at 100.00 under a 2 % tariff: the balance gains 98.00 once,
//! one callback per change of the dispute, the deposit still 2. A receipt that is a renamed
//! text file is 400, a second open appeal 409, and the CLI's exit codes follow the contract.

// Amounts in minor units are written as roubles_kopecks: 100_00 is 100.00.
#![allow(clippy::inconsistent_digit_grouping)]

use serde_json::{json, Value};

use crate::helpers::api::deposit;
use crate::helpers::{
    gateway, gateway_line, on_sqlite_and_postgres, wait_until, Api, CallbackReceiver,
    GatewayProcess, Merchant, Sandbox, Serve, TestDb, DEADLINE,
};

on_sqlite_and_postgres!(async appeal_accepted: appeal_accepted_on_sqlite, appeal_accepted_on_postgres);

/// A PNG's signature and the start of its header chunk, base64: enough for the type check.
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUg==";

/// "just some text" renamed to receipt.png, base64.
const TEXT_BASE64: &str = "anVzdCBzb21lIHRleHQ=";

fn appeal(paid: &str, data: &str) -> Value {
    json!({
        "reason": "paid_not_credited",
        "paidAmount": paid,
        "comment": "paid by SBP at 10:02",
        "receipt": {"fileName": "receipt.png", "contentType": "image/png", "data": data}
    })
}

/// The callbacks of type `dispute` received so far, in order.
fn dispute_callbacks(receiver: &CallbackReceiver) -> Vec<Value> {
    receiver
        .captured()
        .into_iter()
        .map(|c| c.json())
        .filter(|body| body["data"]["type"] == "dispute")
        .collect()
}

async fn declined_deposit(api: &Api, sandbox: &mut Sandbox, moid: &str, cb: &str) -> String {
    let id = api
        .create_deposit(&deposit("card", "100.00", moid, Some(cb)))
        .await
        .operation_id();
    sandbox.complete(&id, 2).await;
    id
}

async fn appeal_accepted(db: TestDb) {
    let shop = Merchant::create(&db, "appeal-shop");
    shop.set_card_tariff(&db, "deposit", "--percent 2");
    let stranger = Merchant::create(&db, "appeal-stranger");
    let receiver = CallbackReceiver::start();
    let gw = GatewayProcess::start("appeals", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let mut sandbox = Sandbox::new(&gw, &db).await;
    let cb = receiver.url("/cb");
    let dep = declined_deposit(&api, &mut sandbox, "ap-1", &cb).await;
    let path = format!("/api/v1/deposits/{dep}/appeals");

    let renamed = api.post(&path, &appeal("100.00", TEXT_BASE64)).await;
    assert_eq!(renamed.status, 400, "{}", renamed.body);
    assert_eq!(
        renamed.body["errorCode"], "InvalidRequest",
        "{}",
        renamed.body
    );

    let opened = api.post(&path, &appeal("100.00", PNG_BASE64)).await;
    assert_eq!(opened.status, 200, "{}", opened.body);
    let dispute = opened.body["data"].clone();
    assert_eq!(dispute["kind"], "appeal");
    assert_eq!(dispute["status"], "open");
    assert_eq!(dispute["amount"], "100.00");
    assert_eq!(dispute["operationId"], dep.as_str());
    assert_eq!(dispute["dueBy"], Value::Null);
    let id = dispute["disputeId"].as_str().expect("an id").to_string();

    let second = api.post(&path, &appeal("100.00", PNG_BASE64)).await;
    assert_eq!(
        (second.status, &second.body["errorCode"]),
        (409, &json!("InvalidState")),
        "{}",
        second.body
    );

    let listed = gateway_line(&db, &format!("dispute list --merchant {} --json", shop.id));
    listed.expect_code(0);
    let listed = listed.json();
    assert_eq!(listed[0]["disputeId"], id.as_str(), "{listed}");
    assert_eq!(listed[0]["merchantId"], shop.id.as_str(), "{listed}");

    let accepted = gateway_line(
        &db,
        &format!("dispute accept {id} --amount 100.00 --reason receipt-checked"),
    );
    accepted.expect_code(0);
    assert_eq!(
        api.balance().await,
        ("98.00".to_string(), "0.00".to_string()),
        "100.00 less the deposit's 2 %"
    );
    gateway_line(&db, &format!("dispute accept {id} --reason again")).expect_code(4);
    gateway_line(&db, &format!("dispute reject {id} --reason again")).expect_code(4);
    gateway_line(
        &db,
        "dispute accept 00000000-0000-4000-8000-000000000000 --reason none",
    )
    .expect_code(3);
    gateway(&db, &["dispute", "accept", &id, "--reason", " "]).expect_code(2);
    assert_eq!(api.balance().await.0, "98.00", "the money moved once");

    let read = api.get(&format!("/api/v1/disputes/{id}")).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.body["data"]["status"], "accepted");
    assert_eq!(read.body["data"]["resolution"], "receipt-checked");
    let theirs = Api::new(&gw, &stranger)
        .get(&format!("/api/v1/disputes/{id}"))
        .await;
    assert_eq!(theirs.status, 404, "{}", theirs.body);

    let deposit = api.get(&format!("/api/v1/deposits/{dep}")).await;
    assert_eq!(
        deposit.body["data"]["status"], 2,
        "the deposit's status never changes"
    );
    let disputes = &deposit.body["data"]["disputes"];
    assert_eq!(disputes.as_array().map(Vec::len), Some(1), "{disputes}");
    assert_eq!(disputes[0]["status"], "accepted");

    wait_until("the appeal's two callbacks", DEADLINE, || {
        let seen = dispute_callbacks(&receiver);
        async move { (seen.len() >= 2, format!("{seen:?}")) }
    })
    .await;
    let seen = dispute_callbacks(&receiver);
    // Each change is a callback of its own, delivered apart: they may arrive in any order.
    let mut statuses: Vec<&str> = seen
        .iter()
        .filter_map(|b| b["data"]["status"].as_str())
        .collect();
    statuses.sort_unstable();
    statuses.dedup();
    assert_eq!(
        statuses,
        vec!["accepted", "open"],
        "one callback per change"
    );
    for body in &seen {
        assert_eq!(body["data"]["disputeId"], id.as_str());
    }
    let signed = receiver
        .captured()
        .into_iter()
        .find(|c| c.json()["data"]["type"] == "dispute")
        .expect("a dispute callback");
    signed
        .signed_with(&shop.deposit_secret)
        .expect("signed with the deposit secret");

    let transactions = api.get("/api/v1/balance/transactions?currency=RUB").await;
    assert_eq!(transactions.status, 200, "{}", transactions.body);
    let types: Vec<&Value> = transactions.body["data"]["transactions"]
        .as_array()
        .expect("transactions")
        .iter()
        .map(|t| &t["type"])
        .collect();
    assert_eq!(types, vec!["fee", "appeal"], "newest first");
    gateway_line(&db, "ledger verify").expect_code(0);
}
