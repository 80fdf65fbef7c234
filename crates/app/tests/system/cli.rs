//! Issue 7: the operator's command line (docs/operations.md), run as the real binary.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::helpers::cli::{keys_of, Output};
use crate::helpers::{gateway, gateway_line, on_sqlite_and_postgres, Merchant, TestDb};

fn is_hex64(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

on_sqlite_and_postgres!(operator_session: cli_on_sqlite, cli_on_postgres);

/// One operator's session on a fresh database: migrate, merchants, balances, ledger.
fn operator_session(db: &TestDb) {
    gateway(db, &["migrate"]).expect_code(0);
    // Migrating twice is harmless.
    gateway(db, &["migrate"]).expect_code(0);

    merchants(db);
    let shop = Merchant::create(db, "balance-shop");
    balances(db, &shop);
    ledger(db, &shop);
}

fn merchants(db: &TestDb) {
    let out = gateway(db, &["merchant", "create", "--name", "Shop X", "--json"]);
    out.expect_code(0);
    let json = out.json();
    let keys: BTreeSet<&str> = keys_of(&json).into_iter().collect();
    assert_eq!(
        keys,
        BTreeSet::from(["merchantId", "depositSecret", "withdrawalSecret"]),
        "{out}"
    );
    let id = json["merchantId"].as_str().expect("merchantId").to_string();
    let deposit = json["depositSecret"].as_str().expect("depositSecret");
    let withdrawal = json["withdrawalSecret"].as_str().expect("withdrawalSecret");
    assert!(!id.is_empty());
    assert!(is_hex64(deposit), "{deposit}");
    assert!(is_hex64(withdrawal), "{withdrawal}");
    assert_ne!(deposit, withdrawal);

    // Names are unique: refused with exit 4 and a message saying why, nothing printed.
    let again = gateway(db, &["merchant", "create", "--name", "Shop X", "--json"]);
    again.expect_code(4);
    assert!(
        again.stderr.contains("already exists") && again.stderr.contains("Shop X"),
        "{again}"
    );
    assert!(again.stdout.trim().is_empty(), "{again}");

    // The plain form prints the id and both secrets too.
    let plain = gateway(db, &["merchant", "create", "--name", "Shop Y"]);
    plain.expect_code(0);
    assert!(plain.stdout.contains("deposit secret"), "{plain}");
    assert!(plain.stdout.contains("withdrawal secret"), "{plain}");

    let limited = gateway(
        db,
        &[
            "merchant",
            "create",
            "--name",
            "Shop Z",
            "--methods",
            "deposit:card,withdrawal:sbp",
            "--json",
        ],
    );
    limited.expect_code(0);
    let limited_id = limited.json()["merchantId"]
        .as_str()
        .expect("merchantId")
        .to_string();
    let bad_methods = gateway(
        db,
        &[
            "merchant",
            "create",
            "--name",
            "Shop W",
            "--methods",
            "deposit:cash",
        ],
    );
    assert_ne!(bad_methods.code, 0, "{bad_methods}");
    assert!(bad_methods.stderr.contains("--methods"), "{bad_methods}");

    let list = merchant_list(db);
    assert_eq!(list.len(), 3, "{list:?}");
    let x = find(&list, "merchantId", &id);
    assert_eq!(x["name"], "Shop X");
    assert_eq!(x["enabled"], true);
    assert_eq!(x["methods"].as_array().map(Vec::len), Some(8), "{x}");
    assert!(x.get("depositSecret").is_none() && x.get("withdrawalSecret").is_none());
    let methods: BTreeSet<&str> = find(&list, "merchantId", &limited_id)["methods"]
        .as_array()
        .expect("methods")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(methods, BTreeSet::from(["deposit:card", "withdrawal:sbp"]));
    let text = gateway(db, &["merchant", "list"]);
    text.expect_code(0);
    assert!(text.stdout.contains("Shop X"), "{text}");
    assert!(!text.stdout.contains(deposit), "a secret in merchant list");

    gateway(db, &["merchant", "disable", &id]).expect_code(0);
    let list = merchant_list(db);
    assert_eq!(find(&list, "merchantId", &id)["enabled"], false);
    assert_eq!(find(&list, "merchantId", &limited_id)["enabled"], true);
    let unknown = gateway(db, &["merchant", "disable", "no-such-merchant"]);
    unknown.expect_code(3);
    assert!(unknown.stderr.contains("no-such-merchant"), "{unknown}");
}

fn merchant_list(db: &TestDb) -> Vec<Value> {
    let out = gateway(db, &["merchant", "list", "--json"]);
    out.expect_code(0);
    out.json().as_array().cloned().expect("a JSON array")
}

#[track_caller]
fn find<'a>(rows: &'a [Value], key: &str, value: &str) -> &'a Value {
    rows.iter()
        .find(|row| row[key] == value)
        .unwrap_or_else(|| panic!("no row with {key} = {value} in {rows:?}"))
}

fn balance_sql(shop: &Merchant, column: &str) -> String {
    format!(
        "SELECT {column} AS n FROM balances WHERE merchant_id = '{}' AND currency = 'RUB'",
        shop.id
    )
}

/// `gateway balance VERB --merchant MERCHANT REST...`.
fn balance(db: &TestDb, verb: &str, merchant: &str, rest: &str) -> Output {
    gateway_line(db, &format!("balance {verb} --merchant {merchant} {rest}"))
}

fn balances(db: &TestDb, shop: &Merchant) {
    let credit = balance(db, "credit", &shop.id, "--currency RUB --amount 100.00");
    credit.expect_code(0);
    assert!(credit.stdout.contains("100.00"), "{credit}");
    assert_eq!(db.count(&balance_sql(shop, "available")), 10_000);
    let entries = db.count("SELECT count(*) AS n FROM ledger");

    // More than available: refused with exit 4, and nothing changes.
    let debit = balance(db, "debit", &shop.id, "--currency RUB --amount 100.01");
    debit.expect_code(4);
    assert!(debit.stderr.contains("available balance"), "{debit}");
    assert_eq!(db.count(&balance_sql(shop, "available")), 10_000);
    assert_eq!(db.count("SELECT count(*) AS n FROM ledger"), entries);

    let debit = balance(db, "debit", &shop.id, "--amount 40.00 --json");
    debit.expect_code(0);
    assert_eq!(debit.json()["available"], "60.00", "{debit}");
    assert_eq!(debit.json()["held"], "0.00", "{debit}");
    assert_eq!(db.count("SELECT count(*) AS n FROM ledger"), entries + 1);

    let unknown = balance(
        db,
        "credit",
        "no-such-merchant",
        "--currency RUB --amount 1.00",
    );
    unknown.expect_code(3);
    assert!(unknown.stderr.contains("no-such-merchant"), "{unknown}");

    for (amount, currency, named) in [
        ("100", "RUB", "--amount"),
        ("0.00", "RUB", "--amount"),
        ("1.00", "rub", "--currency"),
    ] {
        let args = [
            "balance",
            "credit",
            "--merchant",
            &shop.id,
            "--amount",
            amount,
            "--currency",
            currency,
        ];
        let bad = gateway(db, &args);
        bad.expect_code(1);
        assert!(bad.stderr.contains(named), "{args:?}: {bad}");
    }
    assert_eq!(db.count(&balance_sql(shop, "available")), 6_000);
}

fn ledger(db: &TestDb, shop: &Merchant) {
    let ok = gateway(db, &["ledger", "verify"]);
    ok.expect_code(0);
    let json = gateway(db, &["ledger", "verify", "--json"]);
    json.expect_code(0);
    assert_eq!(json.json()["ok"], true, "{json}");

    // A balance changed behind the ledger's back is caught.
    db.exec(&format!(
        "UPDATE balances SET available = available + 1 WHERE merchant_id = '{}'",
        shop.id
    ));
    let bad = gateway(db, &["ledger", "verify"]);
    bad.expect_code(1);
    assert!(
        bad.stdout.contains("MISMATCH") && bad.stdout.contains(&shop.id),
        "{bad}"
    );
    let bad = gateway(db, &["ledger", "verify", "--json"]);
    bad.expect_code(1);
    assert_eq!(bad.json()["ok"], false, "{bad}");
    assert_eq!(bad.json()["mismatches"][0]["merchantId"], shop.id.as_str());
    assert_eq!(bad.json()["mismatches"][0]["balance"]["available"], "60.01");
    assert_eq!(bad.json()["mismatches"][0]["ledger"]["available"], "60.00");

    db.exec(&format!(
        "UPDATE balances SET available = available - 1 WHERE merchant_id = '{}'",
        shop.id
    ));
    gateway(db, &["ledger", "verify"]).expect_code(0);

    // Money that came from nowhere: a deposit's entry and its balance, but no deposit. The
    // balance equals its ledger, yet RUB's flows do not balance.
    let entry = |kind: &str, delta: i64| {
        db.exec(&format!(
            "INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, \
             created_at, available_after, held_after) VALUES ('{}', 'RUB', '{kind}', {delta}, 0, \
             4102444800000, {}, 0)",
            shop.id,
            6_000 + delta.max(0)
        ));
        db.exec(&format!(
            "UPDATE balances SET available = available + {delta} WHERE merchant_id = '{}'",
            shop.id
        ));
    };
    entry("deposit_approved", 100);
    let bad = gateway(db, &["ledger", "verify"]);
    bad.expect_code(1);
    assert!(bad.stdout.contains("UNBALANCED RUB"), "{bad}");
    assert!(!bad.stdout.contains("MISMATCH"), "{bad}");
    let bad = gateway(db, &["ledger", "verify", "--json"]);
    assert_eq!(bad.json()["ok"], false, "{bad}");
    let rub = &bad.json()["flows"][0];
    assert_eq!(
        (&rub["currency"], &rub["balanced"], &rub["merchants"]),
        (
            &serde_json::json!("RUB"),
            &serde_json::json!(false),
            &serde_json::json!("61.00")
        ),
        "{bad}"
    );
    // Taken back out the same way, the flows balance again.
    entry("fee", -100);
    gateway(db, &["ledger", "verify"]).expect_code(0);
}
