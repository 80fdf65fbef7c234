//! `gateway operation show ID [--json]`: the API's read shape of an operation plus its
//! provider attempts, ledger entries and callback deliveries, and the exit codes.

use serde_json::Value;

use crate::helpers::sim::{add_provider, route_to, Sim};
use crate::helpers::{
    card_payout, gateway, on_sqlite_and_postgres, wait_until, Api, CallbackReceiver,
    GatewayProcess, Merchant, Serve, TestDb, DEADLINE,
};

on_sqlite_and_postgres!(
    async sandbox_payout:
    operation_show_tells_a_sandbox_payouts_story_on_sqlite,
    operation_show_tells_a_sandbox_payouts_story_on_postgres
);

/// `operation show ID --json` as JSON; fails the test unless it exits 0.
#[track_caller]
fn show_json(db: &TestDb, id: &str) -> Value {
    let out = gateway(db, &["operation", "show", id, "--json"]);
    out.expect_code(0);
    out.json()
}

/// The read-shape part of `operation show --json`: everything but its own four keys.
fn read_part(shown: &Value) -> Value {
    let mut part = shown.clone();
    if let Some(fields) = part.as_object_mut() {
        for key in ["attempts", "ledger", "callbacks", "discrepancies"] {
            assert!(
                fields.remove(key).is_some_and(|v| v.is_array()),
                "{key} in {shown}"
            );
        }
    }
    part
}

/// Waits until the operation's callback is recorded as delivered; the last `show --json`.
async fn delivered(db: &TestDb, id: &str) -> Value {
    wait_until("the callback recorded as delivered", DEADLINE, || {
        let shown = show_json(db, id);
        let done = shown["callbacks"][0]["state"] == "delivered";
        async move { (done, format!("{shown:#}")) }
    })
    .await;
    show_json(db, id)
}

/// The withdrawal at `path` once it is final: its `data`.
async fn final_read(api: &Api, path: &str) -> Value {
    wait_until("the withdrawal to be final", DEADLINE, || {
        let api = api.clone();
        let path = path.to_string();
        async move {
            let answer = api.get(&path).await;
            let data = answer.body["data"].clone();
            (
                answer.status == 200 && data["status"] != 3,
                data.to_string(),
            )
        }
    })
    .await;
    let answer = api.get(path).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.body["data"].clone()
}

async fn sandbox_payout(db: TestDb) {
    let shop = Merchant::funded(&db, "show-shop", "1000.00");
    let receiver = CallbackReceiver::start();
    let mut gw = GatewayProcess::start("a", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let cb = receiver.url("/cb");
    let body = card_payout("250.00", "4242424242424242", "show-1", Some(&cb));
    let created = api.create_withdrawal(&body).await;
    let id = created.operation_id();
    assert_eq!(created.body["data"]["status"], 3, "{}", created.body);

    // Whenever it is shown, the hold comes first.
    let early = show_json(&db, &id);
    assert_eq!(early["ledger"][0]["kind"], "withdrawal_hold", "{early:#}");

    let read = final_read(&api, &format!("/api/v1/withdrawals/{id}")).await;
    assert_eq!(read["status"], 1, "{read}");
    let shown = delivered(&db, &id).await;

    // The read shape is exactly what the API answers.
    assert_eq!(read_part(&shown), read, "{shown:#}");

    let ledger = shown["ledger"].as_array().expect("ledger");
    let entries: Vec<(&str, &str, &str, &str)> = ledger
        .iter()
        .map(|e| {
            let text = |key: &str| e[key].as_str().unwrap_or_default();
            (
                text("kind"),
                text("currency"),
                text("available"),
                text("held"),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("withdrawal_hold", "RUB", "-250.00", "250.00"),
            ("withdrawal_paid", "RUB", "0.00", "-250.00"),
        ],
        "{shown:#}"
    );
    assert!(ledger
        .iter()
        .all(|e| e["id"].is_i64() && e["createdAt"].is_string()));
    assert!(
        ledger
            .iter()
            .all(|e| e["actor"].is_null() && e["reason"].is_null()),
        "no manual entry names it: {shown:#}"
    );

    let callbacks = shown["callbacks"].as_array().expect("callbacks");
    assert_eq!(callbacks.len(), 1, "{shown:#}");
    let callback = &callbacks[0];
    assert_eq!(callback["url"], cb.as_str());
    assert_eq!(callback["attempts"], 1, "{callback:#}");
    assert_eq!(callback["nextAttemptAt"], Value::Null);
    let deliveries = callback["deliveries"].as_array().expect("deliveries");
    assert_eq!(deliveries.len(), 1, "{callback:#}");
    assert_eq!(
        (&deliveries[0]["attempt"], &deliveries[0]["httpStatus"]),
        (&Value::from(1), &Value::from(200)),
        "{callback:#}"
    );
    assert!(deliveries[0]["durationMs"].is_i64() && deliveries[0]["at"].is_string());
    assert!(shown["attempts"].is_array(), "{shown:#}");

    // The text form: the status, then the three tables.
    let text = gateway(&db, &["operation", "show", &id]);
    text.expect_code(0);
    for expected in [
        id.as_str(),
        "status:    approved",
        "Attempts",
        "Ledger",
        "withdrawal_hold",
        "withdrawal_paid",
        "Callbacks",
        "delivered",
        "HTTP 200",
    ] {
        assert!(text.stdout.contains(expected), "{expected:?} in\n{text}");
    }

    // An unknown operation exits 3, an id that is not one exits 2; both say so.
    let unknown = uuid::Uuid::new_v4().to_string();
    for args in [vec![unknown.as_str()], vec![unknown.as_str(), "--json"]] {
        let out = gateway(&db, &[&["operation", "show"][..], &args[..]].concat());
        out.expect_code(3);
        assert!(
            out.stderr.contains(&unknown) && out.stdout.is_empty(),
            "{out}"
        );
    }
    let malformed = gateway(&db, &["operation", "show", "not-an-id", "--json"]);
    malformed.expect_code(2);
    assert!(malformed.stderr.contains("ID"), "{malformed}");
    gw.terminate();
}

/// A payout at an acquirer: its one attempt is `ok` at the acquirer's route and provider,
/// with the acquirer's payment id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operation_show_lists_the_acquirer_attempt_of_a_routed_payout() {
    let db = TestDb::sqlite();
    let sim = Sim::start(&["--settle-ms", "300"]);
    add_provider(&db, "bank", &sim, &[]);
    let route = route_to(&db, "bank", "withdrawal", "card", &[]);
    let shop = Merchant::funded(&db, "show-acq-shop", "1000.00");
    let serve = Serve::default().with("GATEWAY_RECONCILE_AFTER", "1s");
    let mut gw = GatewayProcess::start("a", &db, &serve);
    let api = Api::new(&gw, &shop);
    let body = card_payout("100.00", "4111111111111111", "show-acq-1", None);
    let id = api.create_withdrawal(&body).await.operation_id();

    let read = final_read(&api, &format!("/api/v1/withdrawals/{id}")).await;
    assert_eq!(read["status"], 1, "{read}");
    let shown = show_json(&db, &id);
    assert_eq!(read_part(&shown), read, "{shown:#}");

    let attempts = shown["attempts"].as_array().expect("attempts");
    assert_eq!(attempts.len(), 1, "{shown:#}");
    let attempt = &attempts[0];
    assert_eq!(attempt["number"], 1, "{attempt:#}");
    assert_eq!(attempt["routeId"], route, "{attempt:#}");
    assert_eq!(attempt["provider"], "bank", "{attempt:#}");
    assert_eq!(attempt["state"], "ok", "{attempt:#}");
    assert!(attempt["acquirerId"].is_string(), "{attempt:#}");
    assert_eq!(attempt["failureCode"], Value::Null, "{attempt:#}");
    assert!(attempt["latencyMs"].is_i64(), "{attempt:#}");
    for key in ["createdAt", "updatedAt"] {
        assert!(
            attempt[key].as_str().is_some_and(|t| t.ends_with('Z')),
            "{attempt:#}"
        );
    }
    // No callbackUrl: nothing queued.
    assert_eq!(shown["callbacks"], Value::Array(vec![]), "{shown:#}");
    let text = gateway(&db, &["operation", "show", &id]);
    text.expect_code(0);
    assert!(
        text.stdout.contains("bank") && text.stdout.contains(" ok "),
        "{text}"
    );
    gw.terminate();
}
