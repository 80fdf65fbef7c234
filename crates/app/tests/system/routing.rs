//! Issue 15: routing across two acquirers (two `acquirer-sim` processes) — failover on
//! definite failures only, each provider tried once, the circuit breaker, and every
//! attempt shown by `gateway operation show`.

use std::time::{Duration, Instant};

use futures::future::join_all;
use serde_json::{json, Value};

use crate::helpers::sim::{add_provider, pan, recipient, route_to, Sim};
use crate::helpers::{
    card_payout, deposit, gateway, on_sqlite_and_postgres, Api, GatewayProcess, Merchant, Serve,
    TestDb,
};

const PRIMARY: &str = "primary";
const SECONDARY: &str = "secondary";
const DEADLINE: Duration = Duration::from_secs(90);

/// A gateway on `db` with card payouts and card payins routed to two simulators: the
/// primary first (priority 500), then a second route to the primary (450), then the
/// secondary (400).
struct Pair {
    db: TestDb,
    primary: Sim,
    secondary: Sim,
    gateway: GatewayProcess,
    api: Api,
}

impl Pair {
    /// A pair on SQLite whose simulators hold each call `hold_ms` before they answer (and
    /// settle in 300 ms), the primary given up on after `timeout`.
    fn with_slow_primary(hold_ms: &str, timeout: &str) -> Pair {
        let sim_args = ["--settle-ms", "300", "--hold-ms", hold_ms];
        Pair::start(TestDb::sqlite(), &sim_args, &["--timeout", timeout])
    }

    /// Makes every call to the primary time out, or none.
    async fn primary_times_out(&self, always: bool) {
        let rate = if always { 1.0 } else { 0.0 };
        self.primary.faults(json!({ "timeoutRate": rate })).await;
    }

    /// Both simulators with `sim_args`; the primary's record with `primary_args` (e.g.
    /// `--timeout 1s`); a merchant with 100,000.00 RUB.
    fn start(db: TestDb, sim_args: &[&str], primary_args: &[&str]) -> Pair {
        let primary = Sim::start(sim_args);
        let secondary = Sim::start(sim_args);
        add_provider(&db, PRIMARY, &primary, primary_args);
        add_provider(&db, SECONDARY, &secondary, &[]);
        for direction in ["withdrawal", "deposit"] {
            route_to(&db, PRIMARY, direction, "card", &["--priority", "500"]);
            route_to(&db, PRIMARY, direction, "card", &["--priority", "450"]);
            route_to(&db, SECONDARY, direction, "card", &["--priority", "400"]);
        }
        let shop = Merchant::funded(&db, "routing-shop", "100000.00");
        let serve = Serve::default()
            .with("GATEWAY_RECONCILE_AFTER", "1s")
            .log("info");
        let gateway = GatewayProcess::start("a", &db, &serve);
        let api = Api::new(&gateway, &shop);
        Pair {
            db,
            primary,
            secondary,
            gateway,
            api,
        }
    }

    /// A 10.00 card payout to card `i` (amount `amount` if given); the answer's data.
    async fn payout(&self, i: usize, amount: &str) -> Value {
        let body = card_payout(amount, &pan(i), &format!("out-{i}"), None);
        let answer = self.api.create_withdrawal(&body).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        answer.body["data"].clone()
    }

    /// A card payin; the answer's data.
    async fn payin(&self, i: usize) -> Value {
        let body = deposit("card", "150.00", &format!("in-{i}"), None);
        let answer = self.api.create_deposit(&body).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        answer.body["data"].clone()
    }

    /// Waits until the operation is final; its data.
    async fn final_state(&self, data: &Value) -> Value {
        let kind = if data.get("redirectUrl").is_some() {
            "deposits"
        } else {
            "withdrawals"
        };
        let path = format!("/api/v1/{kind}/{}", id_of(data));
        self.api.final_state(&path, DEADLINE, &self.gateway).await
    }

    /// The operation's attempts as `gateway operation show --json` lists them:
    /// `(provider, state)` by number.
    fn attempts(&self, data: &Value) -> Vec<(String, String)> {
        let shown = gateway(&self.db, &["operation", "show", id_of(data), "--json"]);
        shown.expect_code(0);
        shown.json()["attempts"]
            .as_array()
            .unwrap_or_else(|| panic!("attempts in {}", shown.json()))
            .iter()
            .map(|a| {
                (
                    a["provider"].as_str().unwrap_or_default().to_string(),
                    a["state"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    /// Whether `sim` knows a payment with the operation's id as its reference.
    async fn knows(sim: &Sim, data: &Value) -> bool {
        sim.payment(id_of(data)).await.0 == 200
    }

    /// The gateway's `/metrics` text.
    async fn metrics(&self) -> String {
        reqwest::get(self.gateway.url("/metrics"))
            .await
            .expect("metrics")
            .text()
            .await
            .expect("metrics text")
    }
}

fn id_of(data: &Value) -> &str {
    data["operationId"].as_str().unwrap_or_default()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(p, s)| (p.to_string(), s.to_string()))
        .collect()
}

/// How many payouts `sim` executed for the operation (by reference) and to card `i`.
async fn executed(sim: &Sim, data: &Value, i: usize) -> (u64, u64) {
    let stats = sim.stats().await;
    let by_reference = stats["byReference"][id_of(data)]["payouts"]
        .as_u64()
        .unwrap_or(0);
    let by_recipient = stats["byRecipient"][recipient(&pan(i))]["payouts"]
        .as_u64()
        .unwrap_or(0);
    (by_reference, by_recipient)
}

on_sqlite_and_postgres!(
    async primary_down:
    a_primary_that_is_down_is_routed_around_for_payouts_and_payins_on_sqlite,
    a_primary_that_is_down_is_routed_around_for_payouts_and_payins_on_postgres
);

async fn primary_down(db: TestDb) {
    routed_around(db, json!({"down": true})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_primary_answering_503_is_routed_around_for_payouts_and_payins() {
    routed_around(TestDb::sqlite(), json!({"failRate": 1.0})).await;
}

/// With the primary failing as `fault` says, every payout and payin is served by the
/// secondary: the first five through failover (the primary tried once, its second route
/// skipped), the rest skipping the primary at once because its circuit opened.
async fn routed_around(db: TestDb, fault: Value) {
    let pair = Pair::start(db, &["--settle-ms", "300"], &[]);
    pair.primary.faults(fault).await;
    let mut payouts = Vec::new();
    for i in 0..4 {
        payouts.push(pair.payout(i, "10.00").await);
    }
    let mut payins = Vec::new();
    for i in 0..2 {
        payins.push(pair.payin(i).await);
    }
    // Back up, so that it can be asked what it knows (nothing).
    pair.primary
        .faults(json!({"down": false, "failRate": 0.0}))
        .await;

    for (i, data) in payouts.iter().enumerate() {
        let done = pair.final_state(data).await;
        assert_eq!(done["status"], 1, "{done}");
        assert_eq!(executed(&pair.secondary, data, i).await, (1, 1));
        assert!(!Pair::knows(&pair.primary, data).await);
    }
    for data in &payins {
        assert_eq!(data["status"], 3, "{data}");
        assert_eq!(
            pair.secondary.complete_payin(id_of(data), "confirm").await,
            200
        );
        let done = pair.final_state(data).await;
        assert_eq!(done["status"], 1, "{done}");
    }
    let failed_over = pairs(&[
        (PRIMARY, "unavailable"),
        (PRIMARY, "skipped"),
        (SECONDARY, "ok"),
    ]);
    assert_eq!(pair.attempts(&payouts[0]), failed_over);
    assert_eq!(pair.attempts(&payins[0]), failed_over, "the fifth failure");
    // After five failures in a row the primary's circuit is open: not even tried.
    let skipped = pairs(&[
        (PRIMARY, "skipped"),
        (PRIMARY, "skipped"),
        (SECONDARY, "ok"),
    ]);
    assert_eq!(pair.attempts(&payins[1]), skipped);
    let stats = pair.primary.stats().await;
    assert_eq!(stats["payouts"]["count"], 0, "{stats}");
    assert_eq!(pair.secondary.stats().await["payouts"]["count"], 4);
    gateway(&pair.db, &["ledger", "verify"]).expect_code(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_primary_is_never_followed_by_the_secondary_and_nothing_is_paid_twice() {
    let pair = Pair::with_slow_primary("3000", "1s");
    pair.primary_times_out(true).await;
    let payouts = join_all((0..4).map(|i| pair.payout(i, "10.00"))).await;
    pair.primary_times_out(false).await;

    for (i, data) in payouts.iter().enumerate() {
        assert_eq!(data["status"], 3, "unknown outcome: processing {data}");
        // One attempt only, at the primary (unknown until the reconciler's first read).
        let attempts = pair.attempts(data);
        assert!(
            matches!(attempts.as_slice(), [(p, state)] if p == PRIMARY && (state == "unknown" || state == "ok")),
            "{attempts:?}"
        );
        let done = pair.final_state(data).await;
        assert_eq!(done["status"], 1, "resolved by reading the primary: {done}");
        assert_eq!(executed(&pair.primary, data, i).await, (1, 1));
        assert!(!Pair::knows(&pair.secondary, data).await, "{data}");
    }
    assert_eq!(pair.secondary.stats().await["payouts"]["count"], 0);
    assert_eq!(pair.primary.stats().await["payouts"]["count"], 4);
    gateway(&pair.db, &["ledger", "verify"]).expect_code(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decline_or_a_502_after_creation_at_the_primary_is_not_retried_elsewhere() {
    let pair = Pair::start(TestDb::sqlite(), &["--settle-ms", "300"], &[]);
    // Minor units ending in 05: the bank declines.
    let declined = pair.payout(0, "10.05").await;
    assert_eq!(declined["status"], 2, "{declined}");
    assert_ne!(declined["errorCode"], "ProviderUnavailable", "{declined}");
    assert_eq!(pair.attempts(&declined), pairs(&[(PRIMARY, "declined")]));

    pair.primary.faults(json!({"ambiguousRate": 1.0})).await;
    let ambiguous = pair.payout(1, "10.00").await;
    pair.primary.faults(json!({"ambiguousRate": 0.0})).await;
    assert_eq!(ambiguous["status"], 3, "{ambiguous}");
    let done = pair.final_state(&ambiguous).await;
    assert_eq!(done["status"], 1, "{done}");
    assert_eq!(executed(&pair.primary, &ambiguous, 1).await, (1, 1));

    for data in [&declined, &ambiguous] {
        assert!(!Pair::knows(&pair.secondary, data).await, "{data}");
    }
    assert_eq!(pair.secondary.stats().await["payouts"]["count"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_circuit_opens_after_five_failures_and_lets_exactly_one_trial_through_after_thirty_seconds(
) {
    let pair = Pair::with_slow_primary("4000", "2s");
    // Five unknown outcomes in a row (each waits the primary's whole timeout).
    pair.primary_times_out(true).await;
    let unknown = join_all((0..5).map(|i| pair.payout(i, "10.00"))).await;
    let opened = Instant::now();
    pair.primary_times_out(false).await;
    for data in &unknown {
        assert_eq!(data["status"], 3, "{data}");
    }

    // Open: the primary is skipped at once, without waiting for its timeout.
    let skipping = pair.payout(5, "10.00").await;
    assert_eq!(
        pair.attempts(&skipping),
        pairs(&[
            (PRIMARY, "skipped"),
            (PRIMARY, "skipped"),
            (SECONDARY, "ok")
        ])
    );
    assert!(!Pair::knows(&pair.primary, &skipping).await);
    wait_for(
        &pair,
        r#"gateway_provider_circuit_open{provider="primary"} 1"#,
    )
    .await;
    let listed = gateway(&pair.db, &["provider", "list", "--json"]);
    listed.expect_code(0);
    let primary = listed
        .json()
        .as_array()
        .and_then(|all| all.iter().find(|p| p["name"] == PRIMARY).cloned())
        .unwrap_or_default();
    assert_eq!(primary["circuits"][0]["state"], "open", "{primary}");

    // 30 s later one creation may try the primary; while that trial is under way (the
    // primary answers slowly), the others skip it.
    tokio::time::sleep(Duration::from_secs(31).saturating_sub(opened.elapsed())).await;
    pair.primary.faults(json!({"latencyMs": 1200})).await;
    let racing = join_all((6..9).map(|i| pair.payout(i, "10.00"))).await;
    pair.primary.faults(json!({"latencyMs": 0})).await;
    let mut at_primary = 0;
    for data in &racing {
        if Pair::knows(&pair.primary, data).await {
            at_primary += 1;
        } else {
            assert!(Pair::knows(&pair.secondary, data).await, "{data}");
        }
    }
    assert_eq!(at_primary, 1, "exactly one trial: {racing:?}");

    // The trial answered: closed again, the primary takes the next ones.
    for i in 9..11 {
        let data = pair.payout(i, "10.00").await;
        assert_eq!(pair.attempts(&data), pairs(&[(PRIMARY, "ok")]));
    }
    wait_for(
        &pair,
        r#"gateway_provider_circuit_open{provider="primary"} 0"#,
    )
    .await;

    // Nothing paid twice: every payout executed once, at one of the two.
    let all: Vec<&Value> = unknown
        .iter()
        .chain([&skipping])
        .chain(racing.iter())
        .collect();
    for (i, data) in all.into_iter().enumerate() {
        let done = pair.final_state(data).await;
        assert_eq!(done["status"], 1, "{done}");
        let (p, s) = (
            executed(&pair.primary, data, i).await,
            executed(&pair.secondary, data, i).await,
        );
        assert_eq!(p.1 + s.1, 1, "card {i} paid once: {p:?} {s:?}");
    }
    gateway(&pair.db, &["ledger", "verify"]).expect_code(0);
}

/// Waits (up to 15 s: gauges are refreshed every 5 s) until `/metrics` shows `line`.
async fn wait_for(pair: &Pair, line: &str) {
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let metrics = pair.metrics().await;
        if metrics.contains(line) {
            return;
        }
        assert!(Instant::now() < until, "no {line} in:\n{metrics}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
