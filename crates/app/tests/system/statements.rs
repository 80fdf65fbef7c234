//! Issue 44: balance transactions and statements through the real binary on both backends.
//! A day with a manual credit, a deposit with its fee, a refund with its fee, an approved and
//! a declined payout: its statement opens at zero, its lines add up to its closing, the
//! closing is what `GET /balance` shows, and the day's balance transactions add up to the
//! same change; an earlier day stays as it was.

// Amounts in minor units are written as roubles_kopecks: 100_00 is 100.00.
#![allow(clippy::inconsistent_digit_grouping)]

use serde_json::{json, Value};

use crate::helpers::api::{card_payout, deposit};
use crate::helpers::{
    gateway, gateway_line, on_sqlite_and_postgres, Api, GatewayProcess, Merchant, Sandbox, Serve,
    TestDb, DEADLINE,
};

on_sqlite_and_postgres!(async statement_of_a_day: statement_of_a_day_on_sqlite, statement_of_a_day_on_postgres);

/// Minor units of an amount written with two fraction digits (`-30.50`).
fn minor(value: &Value) -> i64 {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("an amount: {value}"));
    let (units, cents) = text.split_once('.').unwrap_or_else(|| panic!("{text}"));
    let sign = if units.starts_with('-') { -1 } else { 1 };
    let units: i64 = units.trim_start_matches('-').parse().expect("units");
    sign * (units * 100 + cents.parse::<i64>().expect("cents"))
}

/// Every balance transaction of `api`'s merchant in RUB within `[from, to)`, newest first.
async fn transactions(api: &Api, from: &str, to: &str) -> Vec<Value> {
    let base = format!("/api/v1/balance/transactions?currency=RUB&from={from}&to={to}&limit=3");
    let mut all = Vec::new();
    let mut path = base.clone();
    loop {
        let page = api.get(&path).await;
        assert_eq!(page.status, 200, "{}", page.body);
        all.extend(
            page.body["data"]["transactions"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        );
        match page.body["data"]["next"].as_str() {
            Some(next) => path = format!("{base}&after={next}"),
            None => return all,
        }
    }
}

fn statement(
    db: &TestDb,
    shop: &Merchant,
    from: &str,
    to: &str,
    format: &str,
) -> crate::helpers::cli::Output {
    let run = gateway_line(
        db,
        &format!(
            "statement --merchant {} --currency RUB --from {from} --to {to} {format}",
            shop.id
        ),
    );
    run.expect_code(0);
    run
}

async fn statement_of_a_day(db: TestDb) {
    let shop = Merchant::create(&db, "statement-shop");
    shop.set_card_tariff(&db, "deposit", "--percent 2.5 --fixed 10.00 --min 15.00");
    shop.set_card_tariff(&db, "withdrawal", "--percent 1");
    shop.set_card_tariff(&db, "refund", "--fixed 0.50");
    shop.credit(&db, "500.00");
    let gw = GatewayProcess::start("statements", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let mut sandbox = Sandbox::new(&gw, &db).await;

    let dep = api
        .create_deposit(&deposit("card", "100.00", "st-dep", None))
        .await
        .operation_id();
    sandbox.complete(&dep, 1).await;
    let refund = api
        .post(
            &format!("/api/v1/deposits/{dep}/refunds"),
            &json!({"amount": "30.00"}),
        )
        .await;
    assert_eq!(refund.status, 200, "{}", refund.body);
    let paid = api
        .create_withdrawal(&card_payout("200.00", "4242424242424242", "st-paid", None))
        .await
        .operation_id();
    let declined = api
        .create_withdrawal(&card_payout(
            "50.00",
            "4000000000000002",
            "st-declined",
            None,
        ))
        .await
        .operation_id();
    for (id, status) in [(&paid, 1), (&declined, 2)] {
        let done = api
            .final_state(&format!("/api/v1/withdrawals/{id}"), DEADLINE, &gw)
            .await;
        assert_eq!(done["status"], status, "{done}");
    }
    let refund_id = refund.body["data"]["refundId"]
        .as_str()
        .expect("an id")
        .to_string();
    testkit::wait_until("the refund is approved", DEADLINE, || {
        let api = api.clone();
        let path = format!("/api/v1/deposits/{dep}/refunds/{refund_id}");
        async move {
            let read = api.get(&path).await;
            (read.body["data"]["status"] == 1, read.body.to_string())
        }
    })
    .await;

    // 500.00 + 100.00 - 15.00 - (30.00 + 0.50) - (200.00 + 2.00); the declined payout's hold
    // came back whole.
    assert_eq!(api.balance().await, ("352.50".into(), "0.00".into()));
    let all = transactions(&api, "2000-01-01T00:00:00Z", "2100-01-01T00:00:00Z").await;
    let first_day = all.last().expect("rows")["createdAt"]
        .as_str()
        .expect("a time")[..10]
        .to_string();
    let last_day = all[0]["createdAt"].as_str().expect("a time")[..10].to_string();
    assert_eq!(
        (&all[0]["availableAfter"], &all[0]["heldAfter"]),
        (&json!("352.50"), &json!("0.00")),
        "the newest row left what GET /balance shows"
    );

    let report = statement(&db, &shop, &first_day, &last_day, "--json").json();
    assert_eq!(
        report["opening"],
        json!({"available": "0.00", "held": "0.00"}),
        "{report}"
    );
    assert_eq!(
        report["closing"],
        json!({"available": "352.50", "held": "0.00"}),
        "{report}"
    );
    let days = report["days"].as_array().expect("days");
    let total =
        |field: &str, part: &str| -> i64 { days.iter().map(|d| minor(&d[field][part])).sum() };
    let count = |field: &str| -> i64 {
        days.iter()
            .map(|d| d[field]["count"].as_i64().expect("n"))
            .sum()
    };
    assert_eq!(
        (
            count("deposits"),
            total("deposits", "amount"),
            total("deposits", "fee")
        ),
        (1, 100_00, 15_00)
    );
    assert_eq!(
        (
            count("withdrawals"),
            total("withdrawals", "amount"),
            total("withdrawals", "fee")
        ),
        (1, 200_00, 2_00)
    );
    assert_eq!(
        (
            count("refunds"),
            total("refunds", "amount"),
            total("refunds", "fee")
        ),
        (1, 30_00, 50)
    );
    let manual: i64 = days.iter().map(|d| minor(&d["manual"])).sum();
    let disputes: i64 = days.iter().map(|d| minor(&d["disputes"])).sum();
    assert_eq!((manual, disputes), (500_00, 0));
    // Opening plus the lines is the closing, day by day.
    let mut opening = 0;
    for day in days {
        let net = minor(&day["deposits"]["amount"])
            - minor(&day["deposits"]["fee"])
            - minor(&day["withdrawals"]["amount"])
            - minor(&day["withdrawals"]["fee"])
            - minor(&day["refunds"]["amount"])
            - minor(&day["refunds"]["fee"])
            + minor(&day["manual"])
            + minor(&day["disputes"]);
        let closing = minor(&day["closing"]["available"]) + minor(&day["closing"]["held"]);
        assert_eq!(opening + net, closing, "{day}");
        opening = closing;
    }
    // The day's balance transactions add up to the same change.
    let sum: i64 = all.iter().map(|t| minor(&t["amount"])).sum();
    assert_eq!(sum, 352_50);
    let types: Vec<&str> = all
        .iter()
        .map(|t| t["type"].as_str().unwrap_or(""))
        .collect();
    for (kind, n) in [
        ("manual", 1),
        ("deposit", 1),
        ("fee", 3),
        ("hold", 3),
        ("refund", 1),
        ("withdrawal", 1),
        ("release", 1),
    ] {
        assert_eq!(
            types.iter().filter(|t| **t == kind).count(),
            n,
            "{kind}: {types:?}"
        );
    }

    // CSV and text say the same; an earlier day is all zeros and stays so.
    let csv = statement(&db, &shop, &first_day, &last_day, "--csv").stdout;
    let last_row = csv.trim_end().lines().last().expect("a row");
    assert!(last_row.ends_with(",352.50,0.00"), "{csv}");
    assert!(csv.starts_with("merchant_id,currency,date,"), "{csv}");
    let text = statement(&db, &shop, &first_day, &last_day, "").stdout;
    assert!(
        text.contains("closing     available 352.50  held 0.00"),
        "{text}"
    );
    assert!(
        text.contains("the last day is not final yet"),
        "today is not over: {text}"
    );
    let earlier = "2026-01-01";
    let before = statement(&db, &shop, earlier, earlier, "--json").json();
    shop.credit(&db, "1.00");
    assert_eq!(
        statement(&db, &shop, earlier, earlier, "--json").json(),
        before
    );
    assert_eq!(
        before["closing"],
        json!({"available": "0.00", "held": "0.00"})
    );
    let closed = statement(&db, &shop, earlier, earlier, "").stdout;
    assert!(!closed.contains("not final"), "{closed}");

    // Bad flags are named; an unknown merchant is 3.
    for (line, flag) in [
        (
            format!(
                "--merchant {} --currency RUB --from 2026-13-01 --to 2026-12-01",
                shop.id
            ),
            "--from",
        ),
        (
            format!(
                "--merchant {} --currency RUB --from 2026-12-02 --to 2026-12-01",
                shop.id
            ),
            "--to",
        ),
        (
            format!(
                "--merchant {} --currency RUB --from 2025-01-01 --to 2026-12-01",
                shop.id
            ),
            "--to",
        ),
        (
            format!(
                "--merchant {} --currency XXX --from 2026-12-01 --to 2026-12-01",
                shop.id
            ),
            "--currency",
        ),
    ] {
        let refused = gateway_line(&db, &format!("statement {line}"));
        refused.expect_code(2);
        assert!(refused.stderr.contains(flag), "{line}: {refused}");
    }
    gateway_line(
        &db,
        "statement --merchant nobody --currency RUB --from 2026-12-01 --to 2026-12-01",
    )
    .expect_code(3);
    gateway(&db, &["ledger", "verify"]).expect_code(0);
}
