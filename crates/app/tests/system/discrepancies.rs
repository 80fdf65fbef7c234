//! Discrepancies resolved through the CLI, with the real binary against `acquirer-sim`: the
//! acquirer reports `succeeded` for payouts the gateway declined; an operator lists them,
//! resolves one with a note, and settles the other with a manual debit that names its
//! operation.

use std::time::Duration;

use domain::merchant::Secret;
use domain::signature::sign;
use serde_json::{json, Value};

use crate::helpers::sim::{add_provider, route_to, Sim, SIM_WEBHOOK_SECRET};
use crate::helpers::{
    card_payout, gateway, on_sqlite_and_postgres, wait_until, Api, GatewayProcess, Merchant, Serve,
    TestDb,
};

const PROVIDER: &str = "bank";
const DEADLINE: Duration = Duration::from_secs(60);

/// The simulator declines payouts to this card when they settle.
const DECLINED_CARD: &str = "4000000000000002";

on_sqlite_and_postgres!(
    async resolved_through_the_cli:
    discrepancies_are_resolved_through_the_cli_on_sqlite,
    discrepancies_are_resolved_through_the_cli_on_postgres
);

/// A payout the gateway declined, and the acquirer's notification that it succeeded: a
/// discrepancy. The operation's id.
async fn contradicted_payout(gw: &GatewayProcess, api: &Api, sim: &Sim, moid: &str) -> String {
    let created = api
        .create_withdrawal(&card_payout("100.00", DECLINED_CARD, moid, None))
        .await;
    let id = created.operation_id();
    let done = api
        .final_state(&format!("/api/v1/withdrawals/{id}"), DEADLINE, gw)
        .await;
    assert_eq!(done["errorCode"], "CardDeclined", "{done}");
    let (_, payment) = sim.payment(&id).await;
    let body = json!({"object": "payment", "id": payment["id"], "reference": id,
                      "status": "succeeded", "updatedAt": "2026-11-23T00:00:00Z"})
    .to_string();
    let signature = sign(&Secret::new(SIM_WEBHOOK_SECRET), body.as_bytes());
    let answered = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
        .post(gw.url(&format!("/providers/{PROVIDER}/notifications")))
        .header("x-acquirer-signature", signature)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("the gateway answers")
        .status()
        .as_u16();
    assert_eq!(answered, 200);
    id
}

/// `gateway discrepancy list --json` with `flags`.
fn listed(db: &TestDb, flags: &[&str]) -> Vec<Value> {
    crate::helpers::cli::json_list(db, "discrepancy", flags)
}

/// The discrepancy recorded for operation `id`.
fn of_operation(db: &TestDb, id: &str) -> Value {
    listed(db, &[])
        .into_iter()
        .find(|d| d["operationId"] == id)
        .unwrap_or_else(|| panic!("no discrepancy of {id}"))
}

async fn resolved_through_the_cli(db: TestDb) {
    let sim = Sim::start(&["--settle-ms", "200"]);
    add_provider(&db, PROVIDER, &sim, &[]);
    route_to(&db, PROVIDER, "withdrawal", "card", &[]);
    let shop = Merchant::funded(&db, "disputed-shop", "1000.00");
    let other = Merchant::create(&db, "other-shop");
    let gw = GatewayProcess::start("a", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let first = contradicted_payout(&gw, &api, &sim, "d-1").await;
    let second = contradicted_payout(&gw, &api, &sim, "d-2").await;
    wait_until("both discrepancies listed", DEADLINE, || {
        let open = listed(&db, &["--open"]);
        async move { (open.len() == 2, format!("{open:?}")) }
    })
    .await;
    let found = of_operation(&db, &first);
    assert_eq!(
        (&found["provider"], &found["reported"], &found["resolved"]),
        (&json!("bank"), &json!("succeeded"), &json!(false)),
        "{found}"
    );
    assert!(
        found["resolvedBy"].is_null() && found["note"].is_null(),
        "{found}"
    );
    let id = found["id"].as_i64().expect("a numeric id").to_string();

    // Resolving by hand: a note is required; an unknown id is 3; once only (4 after).
    gateway(&db, &["discrepancy", "resolve", &id, "--note", "  "]).expect_code(2);
    gateway(&db, &["discrepancy", "resolve", "999999", "--note", "x"]).expect_code(3);
    gateway(&db, &["discrepancy", "resolve", "one", "--note", "x"]).expect_code(2);
    let note = "the bank confirmed the recipient was paid; merchant agreed";
    let done = gateway(&db, &["discrepancy", "resolve", &id, "--note", note]);
    done.expect_code(0);
    assert!(done.stdout.contains(&first), "{done}");
    let again = gateway(&db, &["discrepancy", "resolve", &id, "--note", "again"]);
    again.expect_code(4);
    assert!(again.stderr.contains("already resolved"), "{again}");
    let found = of_operation(&db, &first);
    assert_eq!(found["resolved"], true, "{found}");
    assert_eq!(found["note"], note, "{found}");
    assert!(
        found["resolvedBy"]
            .as_str()
            .unwrap_or("")
            .starts_with("cli:"),
        "{found}"
    );
    assert!(found["resolvedAt"].is_string() && found["ledgerEntry"].is_null());

    // The money: the recipient of the second was paid, so the merchant is debited, the
    // entry naming the operation, which resolves its discrepancy with it.
    let debit = |merchant: &str, operation: &str, currency: &str| {
        gateway(
            &db,
            &[
                "balance",
                "debit",
                "--merchant",
                merchant,
                "--currency",
                currency,
                "--amount",
                "100.00",
                "--reason",
                "recipient paid at the bank",
                "--operation",
                operation,
                "--json",
            ],
        )
    };
    debit(&shop.id, &uuid::Uuid::new_v4().to_string(), "RUB").expect_code(3);
    debit(&shop.id, "not-an-id", "RUB").expect_code(2);
    debit(&other.id, &second, "RUB").expect_code(2);
    debit(&shop.id, &second, "USD").expect_code(2);
    assert_eq!(
        listed(&db, &["--open"]).len(),
        1,
        "nothing refused resolved anything"
    );
    let written = debit(&shop.id, &second, "RUB");
    written.expect_code(0);
    let written = written.json();
    let open = of_operation(&db, &second);
    // Both payouts were declined, their holds given back: 1000.00 less this debit.
    assert_eq!(written["available"], "900.00", "{written}");
    assert_eq!(written["operationId"], second.as_str(), "{written}");
    assert_eq!(
        written["resolvedDiscrepancies"],
        json!([open["id"]]),
        "{written}"
    );
    let entry = written["ledgerEntry"].clone();
    assert_eq!(open["resolved"], true, "{open}");
    assert_eq!(open["ledgerEntry"], entry, "{open}");
    assert_eq!(open["note"], "recipient paid at the bank", "{open}");
    assert!(listed(&db, &["--open"]).is_empty());

    // The operation's story shows the entry, who made it and why, and both resolutions.
    let shown = gateway(&db, &["operation", "show", &second, "--json"]);
    shown.expect_code(0);
    let story = shown.json();
    let manual: Vec<&Value> = story["ledger"]
        .as_array()
        .map(|all| all.iter().filter(|e| e["kind"] == "manual_debit").collect())
        .unwrap_or_default();
    assert_eq!(manual.len(), 1, "{story}");
    assert_eq!(manual[0]["id"], entry);
    assert_eq!(manual[0]["reason"], "recipient paid at the bank");
    assert_eq!(story["discrepancies"][0]["resolved"], true, "{story}");
    gateway(&db, &["ledger", "verify"]).expect_code(0);
    for (action, count) in [("discrepancy.resolve", 1), ("balance.debit", 1)] {
        let sql = format!("SELECT COUNT(*) AS n FROM audit_log WHERE action = '{action}'");
        assert_eq!(db.count(&sql), count, "{action}");
    }
    let audited = format!(
        "SELECT COUNT(*) AS n FROM audit_log WHERE action = 'balance.debit' \
         AND after_value LIKE '%\"operationId\":\"{second}\"%'"
    );
    assert_eq!(db.count(&audited), 1);
}
