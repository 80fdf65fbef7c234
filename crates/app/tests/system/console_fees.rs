//! Issue 44: fees and statements in the operator console, through the real binary on both
//! backends. An admin sets a tariff with the console's form (its CSRF token), the command
//! line lists it and the audit log holds it as the command line writes it; a deposit pays
//! the fee; the overview shows today's fee income; the statement page and its CSV close at
//! what `GET /api/v1/balance` shows.

use adapters_db::Database;
use domain::console::AuditRecord;
use domain::ports::ConsoleStore;
use serde_json::{json, Value};

use crate::helpers::console::{create_operator, Visitor};
use crate::helpers::{
    deposit, gateway, gateway_line, on_sqlite_and_postgres, Api, GatewayProcess, Merchant, Sandbox,
    Serve, TestDb,
};

const PASSWORD: &str = "correct horse battery staple";

on_sqlite_and_postgres!(async fees_in_the_console: console_fees_on_sqlite, console_fees_on_postgres);

/// The audit entries with `action`, oldest first.
async fn audited(db: &TestDb, action: &str) -> Vec<AuditRecord> {
    let store = Database::connect(&db.url).expect("the test database");
    let mut found: Vec<AuditRecord> = store
        .audit_log(None, 100)
        .await
        .expect("the audit log")
        .into_iter()
        .filter(|r| r.entry.action == action)
        .collect();
    found.reverse();
    found
}

/// An audit entry's `before` or `after` as JSON.
fn json_of(text: &Option<String>) -> Value {
    text.as_deref()
        .map_or(Value::Null, |t| serde_json::from_str(t).expect("JSON"))
}

/// The console's tile `label` holds `value`.
fn tile(page: &str, value: &str, label: &str) -> bool {
    page.contains(&format!(
        r#"<div class="n">{value}</div><div class="l">{label}</div>"#
    ))
}

async fn fees_in_the_console(db: TestDb) {
    let shop = Merchant::create(&db, "console-fees-shop");
    create_operator(&db, "ada", "admin", PASSWORD);
    let serve = Serve::default().with("GATEWAY_ADMIN", "on");
    let gw = GatewayProcess::start("console-fees", &db, &serve);
    let api = Api::new(&gw, &shop);
    let mut ada = Visitor::new(&gw.url(""));
    assert_eq!(ada.sign_in("ada", PASSWORD).await.status, 303);
    let overview = ada.get("/admin").await;
    assert!(
        tile(&overview.body, "—", "fee income today"),
        "{}",
        overview.body
    );

    set_through_the_form(&db, &shop, &mut ada).await;

    let mut sandbox = Sandbox::new(&gw, &db).await;
    let id = api
        .create_deposit(&deposit("card", "100.00", "fees-1", None))
        .await
        .operation_id();
    sandbox.complete(&id, 1).await;
    // 2.5 % of 100.00 and 10.00 is 12.50, raised to the minimum 15.00.
    assert_eq!(api.balance().await, ("85.00".into(), "0.00".into()));
    let overview = ada.get("/admin").await;
    assert_eq!(overview.status, 200);
    assert!(
        tile(&overview.body, "15.00 RUB", "fee income today"),
        "{}",
        overview.body
    );

    let read = api.get(&format!("/api/v1/deposits/{id}")).await;
    let date = |field: &str| read.body["data"][field].as_str().expect("a time")[..10].to_string();
    let query = format!(
        "merchant={}&currency=RUB&from={}&to={}",
        shop.id,
        date("createdAt"),
        date("updatedAt")
    );
    statement_closes_at_the_balance(&mut ada, &api, &query).await;
    let exports = audited(&db, "statement.export").await;
    assert_eq!(exports.len(), 1, "{exports:?}");
    assert_eq!(exports[0].entry.target, query);
    assert_eq!(exports[0].entry.actor.as_str(), "operator:ada");
}

/// Sets the card deposit tariff through the console's form, refuses a bad one naming its
/// field, and checks the command line's list and the audit log.
async fn set_through_the_form(db: &TestDb, shop: &Merchant, ada: &mut Visitor) {
    let token = ada.token("/admin/tariffs").await;
    let form = |percent: &'static str| {
        [
            ("csrf", token.as_str()),
            ("merchant", shop.id.as_str()),
            ("direction", "deposit"),
            ("method", "card"),
            ("currency", "RUB"),
            ("percent", percent),
            ("fixed", "10.00"),
            ("min", "15.00"),
            ("max", ""),
        ]
    };
    let page = ada.post("/admin/tariffs", &form("100.01")).await;
    assert_eq!(page.status, 400, "{page:?}");
    assert!(page.body.contains("percent:"), "{}", page.body);
    let none = gateway(db, &["tariff", "list", "--json"]);
    assert_eq!(none.json(), json!([]), "a refusal writes nothing");

    let page = ada.post("/admin/tariffs", &form("2.5")).await;
    assert_eq!(page.status, 303, "{page:?}");
    assert_eq!(
        page.location.as_deref(),
        Some("/admin/tariffs?done=tariff_set")
    );
    let listed = gateway(db, &["tariff", "list", "--merchant", &shop.id, "--json"]);
    listed.expect_code(0);
    let expected = json!({
        "merchantId": shop.id, "direction": "deposit", "method": "card", "currency": "RUB",
        "percent": "2.50", "fixed": "10.00", "min": "15.00", "max": null,
    });
    assert_eq!(listed.json(), json!([expected]), "{listed}");
    let shown = ada.get("/admin/tariffs").await;
    assert!(shown.body.contains("2.50%") && shown.body.contains(&shop.id));

    // The command line changes the same tariff: its entry's `before` is the console's
    // `after`, the same shape, under the same target.
    gateway_line(
        db,
        &format!(
            "tariff set --merchant {} --direction deposit --method card --currency RUB \
             --percent 2.5 --fixed 10.00 --min 15.00",
            shop.id
        ),
    )
    .expect_code(0);
    let sets = audited(db, "tariff.set").await;
    assert_eq!(sets.len(), 2, "{sets:?}");
    let (console, cli) = (&sets[0].entry, &sets[1].entry);
    assert_eq!(console.actor.as_str(), "operator:ada");
    assert_eq!(console.target, format!("{}/deposit/card/RUB", shop.id));
    assert_eq!(cli.target, console.target);
    assert_eq!(json_of(&console.before), Value::Null, "there was none");
    assert_eq!(json_of(&console.after), expected);
    assert_eq!(json_of(&cli.before), expected);
    assert_eq!(json_of(&cli.after), expected);
}

/// The statement page and its CSV over `query`: the fee on the day's row, and a closing
/// balance that is what `GET /api/v1/balance` shows.
async fn statement_closes_at_the_balance(ada: &mut Visitor, api: &Api, query: &str) {
    let (available, held) = api.balance().await;
    let page = ada.get(&format!("/admin/statements?{query}")).await;
    assert_eq!(page.status, 200, "{page:?}");
    assert!(
        page.body
            .contains(&format!("Available {available} · Held {held}")),
        "the closing balance: {}",
        page.body
    );
    assert!(page.body.contains("15.00"), "the fee: {}", page.body);

    let csv = ada.get(&format!("/admin/statements.csv?{query}")).await;
    assert_eq!(csv.status, 200, "{csv:?}");
    let header = |name: &str| {
        csv.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(header("content-type"), "text/csv; charset=utf-8");
    let named = query
        .split('&')
        .map(|pair| pair.split_once('=').expect("a pair").1)
        .collect::<Vec<_>>()
        .join("-");
    assert_eq!(
        header("content-disposition"),
        format!(r#"attachment; filename="statement-{named}.csv""#)
    );
    let rows: Vec<Vec<&str>> = csv
        .body
        .split_terminator("\r\n")
        .map(|line| line.split(',').collect())
        .collect();
    assert_eq!(rows[0][16..], ["closing_available", "closing_held"]);
    let last = rows.last().expect("a day");
    assert_eq!(
        last[16..],
        [available.as_str(), held.as_str()],
        "{}",
        csv.body
    );
    let fees: Vec<&str> = rows[1..].iter().map(|r| r[7]).collect();
    assert!(fees.contains(&"15.00"), "the deposit's fee: {}", csv.body);
}
