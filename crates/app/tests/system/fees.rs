//! Issue 44: tariffs and fees through the real binary on both backends: `tariff set`, a
//! deposit credited its amount less the fee, a payout holding its amount and fee, a tariff
//! change that leaves open operations alone, `AmountTooSmall`, and concurrent payouts that
//! never overdraw the gross amounts.

use serde_json::{json, Value};

use crate::helpers::api::card_payout;
use crate::helpers::{
    gateway, gateway_line, on_sqlite_and_postgres, Api, GatewayProcess, Merchant, Sandbox, Serve,
    TestDb,
};

on_sqlite_and_postgres!(tariff_commands: tariff_commands_on_sqlite, tariff_commands_on_postgres);
on_sqlite_and_postgres!(async fees_end_to_end: fees_end_to_end_on_sqlite, fees_end_to_end_on_postgres);

/// `tariff set|list|remove`: whole tariffs, every bad flag named (exit 2), an unknown
/// merchant 3, each change audited.
fn tariff_commands(db: &TestDb) {
    let shop = Merchant::create(db, "tariff-shop");
    let set = gateway_line(
        db,
        &format!(
            "tariff set --merchant {} --direction deposit --method card --currency RUB \
             --percent 2.5 --fixed 10.00 --min 15.00 --json",
            shop.id
        ),
    );
    set.expect_code(0);
    assert_eq!(
        set.json(),
        json!({"merchantId": shop.id, "direction": "deposit", "method": "card",
               "currency": "RUB", "percent": "2.50", "fixed": "10.00", "min": "15.00",
               "max": null}),
        "{set}"
    );
    let listed = gateway(db, &["tariff", "list", "--merchant", &shop.id, "--json"]);
    listed.expect_code(0);
    assert_eq!(listed.json(), json!([set.json()]), "{listed}");

    // `set` replaces the whole tariff: what it leaves out is gone.
    let again = gateway_line(
        db,
        &format!(
            "tariff set --merchant {} --direction deposit --method card --currency RUB --percent 3",
            shop.id
        ),
    );
    again.expect_code(0);
    assert!(again.stdout.contains("3.00%"), "{again}");
    let listed = gateway(db, &["tariff", "list", "--json"]);
    assert_eq!(listed.json()[0]["min"], Value::Null, "{listed}");
    assert_eq!(listed.json()[0]["fixed"], "0.00", "{listed}");

    let key = |rest: &str| format!("--merchant {} {rest}", shop.id);
    for (line, flag) in [
        (
            key("--direction payout --method card --currency RUB"),
            "--direction",
        ),
        (
            key("--direction deposit --method cash --currency RUB"),
            "--method",
        ),
        (
            key("--direction withdrawal --method sbp_qr --currency RUB"),
            "--method",
        ),
        (
            key("--direction deposit --method sbp --currency USD"),
            "--currency",
        ),
        (
            key("--direction deposit --method card --currency XXX"),
            "--currency",
        ),
        (
            key("--direction deposit --method card --currency RUB --percent 100.01"),
            "--percent",
        ),
        (
            key("--direction deposit --method card --currency RUB --percent 2.555"),
            "--percent",
        ),
        (
            key("--direction deposit --method card --currency RUB --fixed 10"),
            "--fixed",
        ),
        (
            key("--direction deposit --method card --currency JPY --fixed 1.00"),
            "--fixed",
        ),
        (
            key("--direction deposit --method card --currency RUB --min 5.00 --max 4.00"),
            "--min",
        ),
        (
            "--merchant bad!id --direction deposit --method card --currency RUB".to_string(),
            "--merchant",
        ),
    ] {
        let refused = gateway_line(db, &format!("tariff set {line}"));
        refused.expect_code(2);
        assert!(refused.stderr.contains(flag), "{line}: {refused}");
    }
    let unknown = gateway_line(
        db,
        "tariff set --merchant nobody --direction deposit --method card --currency RUB",
    );
    unknown.expect_code(3);

    let removed = gateway_line(
        db,
        &format!(
            "tariff remove {}",
            key("--direction deposit --method card --currency RUB")
        ),
    );
    removed.expect_code(0);
    let twice = gateway_line(
        db,
        &format!(
            "tariff remove {}",
            key("--direction deposit --method card --currency RUB")
        ),
    );
    twice.expect_code(3);
    assert_eq!(gateway(db, &["tariff", "list", "--json"]).json(), json!([]));
    let audited = db.count(
        "SELECT COUNT(*) AS n FROM audit_log WHERE action IN ('tariff.set', 'tariff.remove')",
    );
    assert_eq!(audited, 3, "two sets and one removal");
}

/// The RUB fee account: the sum of its `fee_income` entries.
fn fee_account(db: &TestDb) -> i64 {
    db.count(
        "SELECT CAST(COALESCE(SUM(available_delta), 0) AS BIGINT) AS n FROM ledger \
         WHERE kind = 'fee_income' AND currency = 'RUB'",
    )
}

async fn fees_end_to_end(db: TestDb) {
    let shop = Merchant::create(&db, "fee-shop");
    shop.set_card_tariff(&db, "deposit", "--percent 2.5 --fixed 10.00 --min 15.00");
    shop.set_card_tariff(&db, "withdrawal", "--percent 1");
    // Payouts wait for the test to finish them.
    let mut serve = Serve::default();
    serve
        .env
        .push(("GATEWAY_SANDBOX_SETTLE_MS".into(), "600000".into()));
    let gw = GatewayProcess::start("fees", &db, &serve);
    let api = Api::new(&gw, &shop);
    let mut sandbox = Sandbox::new(&gw, &db).await;

    // 100.00 at 2.5 % + 10.00, at least 15.00: 12.50 raised to 15.00, 85.00 credited.
    let deposit = json!({"amount": "100.00", "currency": "RUB", "paymentMethod": "card",
                         "userId": "user-44", "merchantOperationId": "fee-1"});
    let created = api.create_deposit(&deposit).await;
    assert_eq!(created.status, 200, "{}", created.body);
    assert_eq!(
        (
            &created.body["data"]["fee"],
            &created.body["data"]["creditedAmount"]
        ),
        (&json!("15.00"), &json!("85.00")),
        "{}",
        created.body
    );
    let id = created.operation_id();
    // A tariff change after creation changes nothing of the open deposit.
    shop.set_card_tariff(&db, "deposit", "--percent 50");
    sandbox.complete(&id, 1).await;
    let read = api.get(&format!("/api/v1/deposits/{id}")).await;
    assert_eq!(read.body["data"]["fee"], "15.00", "{}", read.body);
    assert_eq!(api.balance().await, ("85.00".into(), "0.00".into()));
    assert_eq!(fee_account(&db), 15_00);
    // A replay answers as the first request did.
    let replay = api.create_deposit(&deposit).await;
    assert_eq!(replay.body["data"]["fee"], "15.00", "{}", replay.body);

    // A fee of at least the amount refuses the deposit, and creates nothing.
    shop.set_card_tariff(&db, "deposit", "--fixed 1.00");
    let small = json!({"amount": "1.00", "currency": "RUB", "paymentMethod": "card",
                       "userId": "user-44", "merchantOperationId": "fee-2"});
    let refused = api.create_deposit(&small).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(
        refused.body["errorCode"], "AmountTooSmall",
        "{}",
        refused.body
    );

    // 1,000.00 at 1 % holds 1,010.00: refused at 1,009.99 available, taken at 1,010.00.
    shop.credit(&db, "924.99");
    let payout = card_payout("1000.00", "4242424242424242", "pay-1", None);
    let short = api.create_withdrawal(&payout).await;
    assert_eq!(short.status, 422, "{}", short.body);
    assert_eq!(short.body["errorCode"], "InsufficientBalance");
    shop.credit(&db, "0.01");
    let held = api.create_withdrawal(&payout).await;
    assert_eq!(held.status, 200, "{}", held.body);
    assert_eq!(
        (
            &held.body["data"]["fee"],
            &held.body["data"]["debitedAmount"]
        ),
        (&json!("10.00"), &json!("1010.00")),
        "{}",
        held.body
    );
    assert_eq!(api.balance().await, ("0.00".into(), "1010.00".into()));
    // Declined: all of it comes back, the fee included.
    sandbox.complete(&held.operation_id(), 2).await;
    assert_eq!(api.balance().await, ("1010.00".into(), "0.00".into()));
    assert_eq!(fee_account(&db), 15_00);

    // 40 payouts of 100.00 at once (101.00 each with the fee) against 1,010.00: exactly 10.
    let answers = futures::future::join_all((0..40).map(|n| {
        let api = api.clone();
        async move {
            let body = card_payout("100.00", "4242424242424242", &format!("many-{n}"), None);
            api.create_withdrawal(&body).await
        }
    }))
    .await;
    let taken = answers.iter().filter(|a| a.status == 200).count();
    let refused = answers
        .iter()
        .filter(|a| a.status == 422 && a.body["errorCode"] == "InsufficientBalance")
        .count();
    assert_eq!((taken, refused), (10, 30), "{answers:?}");
    assert_eq!(api.balance().await, ("0.00".into(), "1010.00".into()));
    for answer in answers.iter().filter(|a| a.status == 200).take(3) {
        sandbox.complete(&answer.operation_id(), 1).await;
    }
    assert_eq!(fee_account(&db), 15_00 + 3 * 1_00);
    assert_eq!(api.balance().await, ("0.00".into(), "707.00".into()));
    let verified = gateway(&db, &["ledger", "verify"]);
    verified.expect_code(0);
}
