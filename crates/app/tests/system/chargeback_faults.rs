//! Issue 45: chargebacks under notification faults and a crash, on the real binaries, on
//! SQLite and PostgreSQL — doubled notifications change nothing, dropped ones (and those
//! sent to the killed process) are found by the reconciler's reads, and money moves once:
//! the ledger verifies and the balance is what the deposits brought less the lost
//! chargebacks, with nothing held.

use serde_json::json;

use crate::chargebacks::{dispute_of, wait_balance, Bank};
use crate::helpers::sim::{add_provider, route_to, Sim};
use crate::helpers::{
    deposit, gateway, on_sqlite_and_postgres, Api, CallbackReceiver, GatewayProcess, Merchant,
    Serve, TestDb, DEADLINE,
};

const PROVIDER: &str = "bank";

/// How each deposit's chargeback ends, and its amount in minor units.
const OUTCOMES: [(&str, i64); 6] = [
    ("won", 10_00),
    ("lost", 20_00),
    ("won", 30_00),
    ("lost", 40_00),
    ("won", 50_00),
    ("lost", 60_00),
];

on_sqlite_and_postgres!(
    async chargebacks_under_faults:
    chargebacks_under_faults_and_a_crash_move_money_once_on_sqlite,
    chargebacks_under_faults_and_a_crash_move_money_once_on_postgres
);

fn serve() -> Serve {
    Serve::default()
        .with("GATEWAY_RECONCILE_AFTER", "1s")
        .log("warn,app=info,domain=info")
}

async fn chargebacks_under_faults(db: TestDb) {
    let sim = Sim::start(&[
        "--settle-ms",
        "300",
        "--duplicate-notify-rate",
        "0.3",
        "--seed",
        "45",
    ]);
    add_provider(&db, PROVIDER, &sim, &["--timeout", "1s"]);
    route_to(&db, PROVIDER, "deposit", "card", &[]);
    let shop = Merchant::create(&db, "cb-faults");
    let receiver = CallbackReceiver::start();
    let cb = receiver.url("/cb");
    let mut first = GatewayProcess::start("a", &db, &serve());
    let api = Api::new(&first, &shop);
    let bank = Bank {
        sim: &sim,
        http: reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("client"),
    };

    // Six 100.00 payins, paid at the bank, each with a chargeback the gateway knows.
    let mut deposits = Vec::new();
    for i in 0..OUTCOMES.len() {
        let dep = api
            .create_deposit(&deposit("card", "100.00", &format!("f-{i}"), Some(&cb)))
            .await
            .operation_id();
        assert!((200..400).contains(&sim.complete_payin(&dep, "confirm").await));
        let done = api
            .final_state(&format!("/api/v1/deposits/{dep}"), DEADLINE, &first)
            .await;
        assert_eq!(done["status"], 1, "{done}");
        deposits.push(dep);
    }
    let mut at_bank = Vec::new();
    for (dep, (_, amount)) in deposits.iter().zip(OUTCOMES) {
        at_bank.push(bank.open(dep, amount, None).await);
    }
    for dep in &deposits {
        dispute_of(&api, dep, 1, "open").await;
    }
    wait_balance(&api, "390.00", "210.00").await;

    // From now on, notifications are also dropped; half are decided before the crash.
    sim.faults(json!({"dropNotifyRate": 0.3})).await;
    for (id, (outcome, _)) in at_bank.iter().zip(OUTCOMES).take(3) {
        bank.resolve(id, outcome).await;
    }
    first.crash();
    let second = GatewayProcess::start("b", &db, &serve());
    let api = Api::new(&second, &shop);
    for (id, (outcome, _)) in at_bank.iter().zip(OUTCOMES).skip(3) {
        bank.resolve(id, outcome).await;
    }

    // Every chargeback ends as the bank decided it, found by notification or by a read.
    for (dep, (outcome, _)) in deposits.iter().zip(OUTCOMES) {
        let done = dispute_of(&api, dep, 1, outcome).await;
        assert_eq!(done["kind"], "chargeback");
    }
    let stats = sim.stats().await;
    for (id, (outcome, _)) in at_bank.iter().zip(OUTCOMES) {
        assert_eq!(stats["disputes"][id]["status"], outcome, "{stats}");
    }
    // 600.00 in, 120.00 lost, nothing held; each deposit has one dispute (none doubled).
    wait_balance(&api, "480.00", "0.00").await;
    for dep in &deposits {
        let read = api.get(&format!("/api/v1/deposits/{dep}")).await;
        assert_eq!(
            read.body["data"]["disputes"].as_array().map(Vec::len),
            Some(1)
        );
    }
    gateway(&db, &["ledger", "verify"]).expect_code(0);
    drop(first);
}
