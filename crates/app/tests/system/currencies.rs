//! Issue 43: every active ISO 4217 currency with its own minor units, through the real
//! binary on both backends: routes, amounts, balances, refunds, callbacks and the ledger.

use serde_json::{json, Value};

use crate::helpers::api::Answer;
use crate::helpers::{
    gateway, gateway_line, on_sqlite_and_postgres, Api, CallbackReceiver, GatewayProcess, Merchant,
    Sandbox, Serve, TestDb, DEADLINE,
};

on_sqlite_and_postgres!(routes_by_currency: currency_routes_on_sqlite, currency_routes_on_postgres);
on_sqlite_and_postgres!(
    async money_by_currency:
    currencies_end_to_end_on_sqlite,
    currencies_end_to_end_on_postgres
);

/// `route add` takes any active code for card, RUB only for the other methods, bounds in the
/// currency's form; the defaults are one minor unit to 10,000,000 major units.
fn routes_by_currency(db: &TestDb) {
    let yen = gateway_line(
        db,
        "route add --direction deposit --method card --currency JPY --json",
    );
    yen.expect_code(0);
    assert_eq!(yen.json()["currency"], "JPY", "{yen}");
    assert_eq!(yen.json()["min"], "1", "{yen}");
    assert_eq!(yen.json()["max"], "10000000", "{yen}");
    let dinar = gateway_line(
        db,
        "route add --direction withdrawal --method card --currency KWD --min 0.500 --json",
    );
    dinar.expect_code(0);
    assert_eq!(dinar.json()["min"], "0.500", "{dinar}");
    assert_eq!(dinar.json()["max"], "10000000.000", "{dinar}");

    for (line, flag) in [
        (
            "--direction deposit --method sbp --currency USD",
            "--currency",
        ),
        (
            "--direction deposit --method sbp_qr --currency EUR",
            "--currency",
        ),
        (
            "--direction withdrawal --method sbp --currency KZT",
            "--currency",
        ),
        (
            "--direction deposit --method bank_a_pay --currency USD",
            "--currency",
        ),
        (
            "--direction deposit --method card --currency XXX",
            "--currency",
        ),
        (
            "--direction deposit --method card --currency XAU",
            "--currency",
        ),
        (
            "--direction deposit --method card --currency usd",
            "--currency",
        ),
        (
            "--direction deposit --method card --currency JPY --min 1.00",
            "--min",
        ),
        (
            "--direction deposit --method card --currency KWD --max 10.00",
            "--max",
        ),
    ] {
        let refused = gateway_line(db, &format!("route add {line}"));
        refused.expect_code(2);
        assert!(refused.stderr.contains(flag), "{line}: {refused}");
    }
    let listed = gateway(db, &["route", "list", "--json"]);
    listed.expect_code(0);
    let routes = listed.json();
    let of = |code: &str| {
        routes
            .as_array()
            .expect("routes")
            .iter()
            .filter(|r| r["currency"] == code)
            .count()
    };
    assert_eq!((of("JPY"), of("KWD")), (1, 1), "{listed}");
    for code in ["USD", "EUR", "KZT", "XXX", "XAU"] {
        assert_eq!(of(code), 0, "nothing refused was added: {listed}");
    }
}

/// The balance of `code` as `(available, held)`, or `None` if the merchant has none.
async fn balance_in(api: &Api, code: &str) -> Option<(String, String)> {
    let answer = api.get("/api/v1/balance").await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let balances = answer.body["data"]["balances"].as_array().cloned()?;
    let found = balances.into_iter().find(|b| b["currency"] == code)?;
    let field = |name: &str| found[name].as_str().unwrap_or_default().to_string();
    Some((field("available"), field("held")))
}

/// A 400 `InvalidRequest` whose one detail names `amount`.
#[track_caller]
fn refused_naming_amount(answer: &Answer) {
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(
        answer.body["errorCode"], "InvalidRequest",
        "{}",
        answer.body
    );
    assert_eq!(
        answer.body["details"][0]["field"], "amount",
        "{}",
        answer.body
    );
}

fn body(kind: &str, amount: &str, currency: &str, moid: &str, callback: &str) -> Value {
    let mut body = json!({"amount": amount, "currency": currency, "paymentMethod": "card",
                          "userId": "user-43", "merchantOperationId": moid,
                          "callbackUrl": callback});
    if kind == "withdrawal" {
        body["requisites"] = json!({"pan": "4242424242424242", "cardholderName": "IVAN IVANOV"});
    }
    body
}

async fn money_by_currency(db: TestDb) {
    for line in [
        "route add --direction deposit --method card --currency JPY",
        "route add --direction withdrawal --method card --currency KWD",
    ] {
        gateway_line(&db, line).expect_code(0);
    }
    let shop = Merchant::create(&db, "currency-shop");
    let credit = |currency: &str, amount: &str| {
        gateway_line(
            &db,
            &format!(
                "balance credit --merchant {} --currency {currency} --amount {amount}",
                shop.id
            ),
        )
    };
    credit("KWD", "10.000").expect_code(0);
    // The amount has its currency's digits, on the CLI too; a code that is not active has no
    // balance.
    let two_digits = credit("KWD", "10.00");
    two_digits.expect_code(1);
    assert!(two_digits.stderr.contains("--amount"), "{two_digits}");
    let no_currency = credit("XXX", "10.00");
    no_currency.expect_code(1);
    assert!(no_currency.stderr.contains("--currency"), "{no_currency}");

    let receiver = CallbackReceiver::start();
    let cb = receiver.url("/cb");
    let gw = GatewayProcess::start("currencies", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let mut sandbox = Sandbox::new(&gw, &db).await;

    // A JPY deposit of 1500 yen: no fraction digits, in the answer, the read and the callback.
    let created = api
        .create_deposit(&body("deposit", "1500", "JPY", "jpy-1", &cb))
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    assert_eq!(created.body["data"]["amount"], "1500", "{}", created.body);
    assert_eq!(created.body["data"]["currency"], "JPY");
    let yen = created.operation_id();
    sandbox.complete(&yen, 1).await;
    receiver
        .wait_delivered(std::slice::from_ref(&yen), DEADLINE)
        .await;
    let callback = receiver.for_operation(&yen)[0].json()["data"].clone();
    assert_eq!(callback["amount"], "1500", "{callback}");
    assert_eq!(callback["currency"], "JPY", "{callback}");
    assert_eq!(callback["status"], 1, "{callback}");
    let read = api.get(&format!("/api/v1/deposits/{yen}")).await;
    assert_eq!(read.body["data"]["amount"], "1500", "{}", read.body);
    assert_eq!(read.body["data"]["refundedAmount"], "0", "{}", read.body);
    assert_eq!(
        balance_in(&api, "JPY").await,
        Some(("1500".into(), "0".into()))
    );

    // Two fraction digits in JPY are refused naming amount; a code that is not active (or
    // has no route) is NoRouteFound, its amount read with two digits.
    let refused = api
        .create_deposit(&body("deposit", "1500.00", "JPY", "jpy-2", &cb))
        .await;
    refused_naming_amount(&refused);
    for currency in ["XXX", "ABC", "USD"] {
        let moid = format!("none-{currency}");
        let answer = api
            .create_deposit(&body("deposit", "10.00", currency, &moid, &cb))
            .await;
        assert_eq!(answer.status, 422, "{currency}: {}", answer.body);
        assert_eq!(answer.body["errorCode"], "NoRouteFound", "{currency}");
    }

    // A refund of the yen deposit: in yen, never in kopecks.
    let path = format!("/api/v1/deposits/{yen}/refunds");
    let wrong = api.post(&path, &json!({"amount": "5.00"})).await;
    refused_naming_amount(&wrong);
    let refund = api.post(&path, &json!({"amount": "500"})).await;
    assert_eq!(refund.status, 200, "{}", refund.body);
    assert_eq!(refund.body["data"]["amount"], "500", "{}", refund.body);
    assert_eq!(refund.body["data"]["currency"], "JPY", "{}", refund.body);
    assert_eq!(
        balance_in(&api, "JPY").await,
        Some(("1000".into(), "500".into()))
    );

    // A KWD payout of 1.250 dinars holds 1250 fils: three digits everywhere.
    let payout = api
        .create_withdrawal(&body("withdrawal", "1.250", "KWD", "kwd-1", &cb))
        .await;
    assert_eq!(payout.status, 200, "{}", payout.body);
    assert_eq!(payout.body["data"]["amount"], "1.250", "{}", payout.body);
    let dinars = payout.operation_id();
    assert_eq!(
        balance_in(&api, "KWD").await,
        Some(("8.750".into(), "1.250".into()))
    );
    // The CLI shows dinars: the amount and the hold of the ledger.
    let shown = gateway(&db, &["operation", "show", &dinars, "--json"]);
    shown.expect_code(0);
    let story = shown.json();
    assert_eq!(story["amount"], "1.250", "{shown}");
    let hold = &story["ledger"][0];
    assert_eq!(
        (&hold["currency"], &hold["available"], &hold["held"]),
        (&json!("KWD"), &json!("-1.250"), &json!("1.250")),
        "{shown}"
    );
    let two_digits = api
        .create_withdrawal(&body("withdrawal", "1.25", "KWD", "kwd-2", &cb))
        .await;
    refused_naming_amount(&two_digits);
    let data = api
        .final_state(&format!("/api/v1/withdrawals/{dinars}"), DEADLINE, &gw)
        .await;
    assert_eq!(data["status"], 1, "{data}");
    receiver
        .wait_delivered(std::slice::from_ref(&dinars), DEADLINE)
        .await;
    let callback = receiver.for_operation(&dinars)[0].json()["data"].clone();
    assert_eq!(callback["amount"], "1.250", "{callback}");
    assert_eq!(
        balance_in(&api, "KWD").await,
        Some(("8.750".into(), "0.000".into()))
    );

    // The ledger holds per currency.
    let verified = gateway(&db, &["ledger", "verify", "--json"]);
    verified.expect_code(0);
    assert_eq!(verified.json()["ok"], true, "{verified}");
}
