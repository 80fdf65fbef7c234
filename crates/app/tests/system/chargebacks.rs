//! Issue 45: chargebacks on the real binaries, against `acquirer-sim`, on SQLite and
//! PostgreSQL — the hold when the bank opens one (even below zero), payouts refused while
//! the money is held, evidence forwarded once and resolved by a read when its answer is
//! lost, won and lost outcomes, the loss at `dueBy`, and the ledger verifying at the end.

use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::sim::{add_provider, route_to, Sim};
use crate::helpers::{
    card_payout, deposit, gateway, on_sqlite_and_postgres, wait_until, Api, CallbackReceiver,
    GatewayProcess, Merchant, Serve, TestDb, DEADLINE,
};

const PROVIDER: &str = "bank";

/// `%PDF-1.7\n` in base64: a file whose first bytes are a PDF's.
const PDF_BASE64: &str = "JVBERi0xLjcK";

on_sqlite_and_postgres!(
    async chargebacks_end_to_end:
    chargebacks_end_to_end_on_sqlite,
    chargebacks_end_to_end_on_postgres
);

/// The simulator's control API, as a bank's staff would use it.
pub(crate) struct Bank<'a> {
    pub(crate) sim: &'a Sim,
    pub(crate) http: reqwest::Client,
}

impl Bank<'_> {
    /// Opens a chargeback of the payin `reference` for `amount` minor units: its id.
    pub(crate) async fn open(&self, reference: &str, amount: i64, due_in: Option<i64>) -> String {
        let mut body = json!({"amount": amount});
        if let Some(secs) = due_in {
            body["dueInSeconds"] = json!(secs);
        }
        let answer = self
            .http
            .post(format!(
                "{}/_sim/payments/{reference}/dispute",
                self.sim.control
            ))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect("the simulator's control answers");
        assert_eq!(answer.status().as_u16(), 201);
        let text = answer.text().await.expect("a body");
        let body: Value = serde_json::from_str(&text).expect("json");
        body["disputeId"].as_str().expect("an id").to_string()
    }

    /// Decides the chargeback `id` with `status`.
    pub(crate) async fn resolve(&self, id: &str, status: &str) {
        let answer = self
            .http
            .post(format!("{}/_sim/disputes/{id}/resolve", self.sim.control))
            .header("content-type", "application/json")
            .body(json!({"status": status}).to_string())
            .send()
            .await
            .expect("the simulator's control answers");
        assert_eq!(answer.status().as_u16(), 200);
    }

    /// How many evidence calls the simulator processed for `id`.
    async fn evidence(&self, id: &str) -> u64 {
        self.sim.stats().await["disputes"][id]["evidence"]
            .as_u64()
            .unwrap_or(0)
    }
}

/// Waits until deposit `deposit` has `n` disputes and the newest is in `status`: its data.
pub(crate) async fn dispute_of(api: &Api, deposit: &str, n: usize, status: &str) -> Value {
    let path = format!("/api/v1/deposits/{deposit}");
    wait_until("the chargeback is applied", DEADLINE, || {
        let (api, path) = (api.clone(), path.clone());
        async move {
            let body = api.get(&path).await.body;
            let disputes = body["data"]["disputes"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let done = disputes.len() == n && disputes[n - 1]["status"] == status;
            (done, body.to_string())
        }
    })
    .await;
    api.get(&path).await.body["data"]["disputes"][n - 1].clone()
}

/// Waits until the dispute `id` is in `status`.
async fn dispute_becomes(api: &Api, id: &str, status: &str) {
    let path = format!("/api/v1/disputes/{id}");
    wait_until("the dispute changes", DEADLINE, || {
        let (api, path) = (api.clone(), path.clone());
        async move {
            let answer = api.get(&path).await;
            (
                answer.body["data"]["status"] == status,
                answer.body.to_string(),
            )
        }
    })
    .await;
}

pub(crate) async fn wait_balance(api: &Api, available: &str, held: &str) {
    wait_until("the balance", DEADLINE, || {
        let api = api.clone();
        async move {
            let balance = api.balance().await;
            (
                balance == (available.to_string(), held.to_string()),
                format!("{balance:?}"),
            )
        }
    })
    .await;
}

async fn chargebacks_end_to_end(db: TestDb) {
    let sim = Sim::start(&["--settle-ms", "300", "--hold-ms", "4000"]);
    add_provider(&db, PROVIDER, &sim, &["--timeout", "1s"]);
    route_to(&db, PROVIDER, "deposit", "card", &[]);
    route_to(&db, PROVIDER, "withdrawal", "card", &[]);
    let shop = Merchant::create(&db, "cb-shop");
    let receiver = CallbackReceiver::start();
    let serve = Serve::default()
        .with("GATEWAY_RECONCILE_AFTER", "1s")
        .log("info");
    let gw = GatewayProcess::start("a", &db, &serve);
    let api = Api::new(&gw, &shop);
    let bank = Bank {
        sim: &sim,
        http: reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("client"),
    };

    // A 100.00 payin, approved at the bank.
    let cb = receiver.url("/cb");
    let dep = api
        .create_deposit(&deposit("card", "100.00", "cb-1", Some(&cb)))
        .await
        .operation_id();
    assert!((200..400).contains(&sim.complete_payin(&dep, "confirm").await));
    let done = api
        .final_state(&format!("/api/v1/deposits/{dep}"), DEADLINE, &gw)
        .await;
    assert_eq!(done["status"], 1, "{done}");
    wait_balance(&api, "100.00", "0.00").await;

    // The bank opens a chargeback of 60.00: held, with an `open` callback.
    let first = bank.open(&dep, 60_00, None).await;
    let opened = dispute_of(&api, &dep, 1, "open").await;
    assert_eq!(opened["kind"], "chargeback");
    assert_eq!(opened["amount"], "60.00");
    wait_balance(&api, "40.00", "60.00").await;
    let dispute = opened["disputeId"].as_str().expect("id").to_string();
    wait_until("the open callback", DEADLINE, || {
        let captured = receiver.captured();
        let dispute = dispute.clone();
        async move {
            let seen = captured.iter().any(|c| {
                let body = c.json();
                body["data"]["type"] == "dispute"
                    && body["data"]["disputeId"] == dispute.as_str()
                    && body["data"]["status"] == "open"
            });
            (seen, format!("{} callbacks", captured.len()))
        }
    })
    .await;

    // A payout that needs the held money is refused.
    let payout = api
        .create_withdrawal(&card_payout("50.00", "4111111111111111", "p-1", None))
        .await;
    assert_eq!(payout.status, 422, "{}", payout.body);
    assert_eq!(payout.body["errorCode"], "InsufficientBalance");

    // Evidence whose answer never comes back: still open, then under review after the read,
    // sent exactly once.
    sim.faults(json!({"timeoutRate": 1.0})).await;
    let evidence = json!({"text": "Delivered on 2 January.",
        "files": [{"fileName": "receipt.pdf", "contentType": "application/pdf", "data": PDF_BASE64}]});
    let sent = api
        .post(&format!("/api/v1/disputes/{dispute}/evidence"), &evidence)
        .await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    assert_eq!(sent.body["data"]["status"], "open");
    sim.faults(json!({"timeoutRate": 0.0})).await;
    let again = api
        .post(&format!("/api/v1/disputes/{dispute}/evidence"), &evidence)
        .await;
    assert_eq!(
        again.status, 409,
        "pending evidence is not sent again: {}",
        again.body
    );
    dispute_becomes(&api, &dispute, "under_review").await;
    assert_eq!(bank.evidence(&first).await, 1);

    // Won: the hold returns.
    bank.resolve(&first, "won").await;
    dispute_becomes(&api, &dispute, "won").await;
    wait_balance(&api, "100.00", "0.00").await;
    assert_eq!(bank.evidence(&first).await, 1, "never sent twice");

    // A second chargeback, lost: the held money leaves.
    let second = bank.open(&dep, 30_00, None).await;
    dispute_of(&api, &dep, 2, "open").await;
    wait_balance(&api, "70.00", "30.00").await;
    bank.resolve(&second, "lost").await;
    dispute_of(&api, &dep, 2, "lost").await;
    wait_balance(&api, "70.00", "0.00").await;

    // A third, due in 2 s without evidence: lost at dueBy.
    bank.open(&dep, 10_00, Some(2)).await;
    dispute_of(&api, &dep, 3, "open").await;
    dispute_of(&api, &dep, 3, "lost").await;
    wait_balance(&api, "60.00", "0.00").await;

    // Another merchant's dispute is not found.
    let other = Merchant::create(&db, "cb-other");
    let stranger = Api::new(&gw, &other);
    assert_eq!(
        stranger
            .get(&format!("/api/v1/disputes/{dispute}"))
            .await
            .status,
        404
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    gateway(&db, &["ledger", "verify"]).expect_code(0);
}
