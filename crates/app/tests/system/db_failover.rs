//! Issue 46's fault test: two gateways on a pg_auto_failover cluster (a primary and a
//! synchronous secondary, TLS everywhere; `scripts/ha-cluster.sh`), deposits at a steady
//! rate and payouts through a faulty `acquirer-sim`, each request retried with its
//! `merchantOperationId` after every 503 and timeout. Midway a planned failover, later a
//! `kill -9` of the primary's keeper and postmaster. No answer is a 500; every operation
//! answered 200 exists afterwards with the status it was answered with, none twice; no
//! payout is paid twice at the bank (by reference and by recipient); every callback is
//! delivered; the ledger verifies. The time from the kill to the first write is printed.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::helpers::db::several_postgres_gateways;
use crate::helpers::sim::{
    add_provider, paid_at_most_once, pan, recipient, route_to, wait_all_final, Sim,
};
use crate::helpers::{
    card_payout, deposit, gateway, gateway_line, Api, CallbackReceiver, GatewayProcess, Merchant,
    Serve, TestDb,
};

const PROVIDER: &str = "bank";
/// How long the payouts may take to become final once the load stopped.
const SETTLE_DEADLINE: Duration = Duration::from_secs(600);
/// How long one request may take before the client gives up on it and sends it again.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The lifetime of the SBP deposit created just before the primary is killed: it passes
/// while no primary answers, so only an expiry worker that resumed by itself declines it.
const EXPIRING_LIFETIME_SECS: u32 = 20;

/// `scripts/ha-cluster.sh` with `args`; its standard output. A failure fails the test.
fn cluster(args: &[&str]) -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ha-cluster.sh");
    let output = std::process::Command::new("bash")
        .arg(&script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(
        output.status.success(),
        "ha-cluster.sh {args:?}: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// Every answer the client saw, by kind.
#[derive(Debug, Default)]
struct Seen {
    /// merchantOperationId -> (operationId, status in the 200 answer).
    acknowledged: HashMap<String, (String, u64)>,
    unavailable: usize,
    timeouts: usize,
    /// Anything else (a 500 above all): the test fails with these.
    unexpected: Vec<String>,
}

/// Sends `body` to `path` until it is answered 200, again with the same body (and so the
/// same `merchantOperationId`) after each 503, lost answer or timeout; records what it saw.
async fn until_acknowledged(api: &Api, path: &str, moid: &str, body: &Value, seen: &Mutex<Seen>) {
    let started = Instant::now();
    loop {
        let answer = tokio::time::timeout(REQUEST_TIMEOUT, api.try_post(path, body)).await;
        let done = {
            let mut seen = seen.lock().expect("seen");
            match answer {
                Ok(Some((200, data))) => {
                    let id = data["data"]["operationId"].as_str().unwrap_or_default();
                    let status = data["data"]["status"].as_u64().unwrap_or(0);
                    seen.acknowledged
                        .insert(moid.to_string(), (id.to_string(), status));
                    true
                }
                Ok(Some((503, _))) => {
                    seen.unavailable += 1;
                    false
                }
                Ok(None) | Err(_) => {
                    seen.timeouts += 1;
                    false
                }
                Ok(Some((status, data))) => {
                    seen.unexpected.push(format!("{moid}: {status} {data}"));
                    true
                }
            }
        };
        if done {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "{moid} was never answered 200"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One client's deposits, one after another, until `stop`.
async fn deposits(api: Api, client: usize, stop: Arc<AtomicBool>, seen: Arc<Mutex<Seen>>) {
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        let moid = format!("dep-{client}-{n}");
        let body = deposit("card", "10.00", &moid, None);
        until_acknowledged(&api, "/api/v1/deposits", &moid, &body, &seen).await;
        n += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Payouts to distinct cards, two a second, until `stop`; returns once each is acknowledged.
async fn payouts(apis: Vec<Api>, cb: String, stop: Arc<AtomicBool>, seen: Arc<Mutex<Seen>>) {
    let mut sent = Vec::new();
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let moid = format!("out-{i}");
        let body = card_payout("10.00", &pan(i), &moid, Some(&cb));
        let api = apis[i % apis.len()].clone();
        let seen = seen.clone();
        sent.push(tokio::spawn(async move {
            until_acknowledged(&api, "/api/v1/withdrawals", &moid, &body, &seen).await;
        }));
        i += 1;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    for payout in sent {
        payout.await.expect("a payout");
    }
}

/// How many deposits were acknowledged so far.
fn acknowledged_deposits(seen: &Mutex<Seen>) -> usize {
    let seen = seen.lock().expect("seen");
    seen.acknowledged
        .keys()
        .filter(|m| m.starts_with("dep-"))
        .count()
}

async fn wait_for_more_deposits(seen: &Mutex<Seen>, more: usize) {
    let target = acknowledged_deposits(seen) + more;
    let until = Instant::now() + Duration::from_secs(120);
    while acknowledged_deposits(seen) < target {
        assert!(Instant::now() < until, "the deposits stopped");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn serve() -> Serve {
    Serve::default()
        .with("GATEWAY_RECONCILE_AFTER", "1s")
        .with("GATEWAY_CALLBACK_SCHEDULE", "200ms,500ms,1s,2s,5s")
        .log("warn,app=info,domain=info,adapters_db=warn")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_gateways_survive_a_planned_failover_and_a_killed_primary_without_a_500_or_a_double() {
    let Some(cluster_url) = testkit::ha_postgres_url() else {
        return;
    };
    let _turn = several_postgres_gateways().await;
    cluster(&["wait", "180"]);
    let db = TestDb::postgres_at(&cluster_url);
    let sim = Sim::start(&[
        "--settle-ms",
        "300",
        "--timeout-rate",
        "0.05",
        "--drop-notify-rate",
        "0.2",
        "--duplicate-notify-rate",
        "0.2",
        "--seed",
        "46",
    ]);
    add_provider(&db, PROVIDER, &sim, &["--timeout", "1s"]);
    route_to(&db, PROVIDER, "withdrawal", "card", &[]);
    gateway_line(
        &db,
        &format!(
            "route add --direction deposit --method sbp --priority 200 \
             --lifetime {EXPIRING_LIFETIME_SECS}"
        ),
    )
    .expect_code(0);
    let shop = Merchant::funded(&db, "ha-shop", "1000000.00");
    let receiver = CallbackReceiver::start();
    let cb = receiver.url("/cb");
    let gateways: Vec<GatewayProcess> = (0..2)
        .map(|i| GatewayProcess::start(&format!("g{i}"), &db, &serve()))
        .collect();
    let apis: Vec<Api> = gateways.iter().map(|g| Api::new(g, &shop)).collect();

    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut load: Vec<_> = (0..8)
        .map(|c| tokio::spawn(deposits(apis[c % 2].clone(), c, stop.clone(), seen.clone())))
        .collect();
    load.push(tokio::spawn(payouts(
        apis.clone(),
        cb.clone(),
        stop.clone(),
        seen.clone(),
    )));

    wait_for_more_deposits(&seen, 300).await;
    let planned = Instant::now();
    cluster(&["failover"]);
    cluster(&["wait", "180"]);
    eprintln!(
        "planned failover: healthy again after {:?}",
        planned.elapsed()
    );
    wait_for_more_deposits(&seen, 300).await;

    let expiring = deposit("sbp", "70.00", "exp-0", Some(&cb));
    until_acknowledged(&apis[1], "/api/v1/deposits", "exp-0", &expiring, &seen).await;
    let killed = cluster(&["crash"]);
    let kill = Instant::now();
    // The first write after the kill: a new deposit, sent again (with the same id: a 503
    // may have been committed) until it is answered 200.
    let moid = "dep-probe".to_string();
    let body = deposit("card", "10.00", &moid, None);
    let first_write = loop {
        let answer = tokio::time::timeout(
            Duration::from_secs(3),
            apis[0].try_post("/api/v1/deposits", &body),
        )
        .await;
        if let Ok(Some((200, data))) = answer {
            let id = data["data"]["operationId"].as_str().unwrap_or_default();
            let status = data["data"]["status"].as_u64().unwrap_or(0);
            let mut seen = seen.lock().expect("seen");
            seen.acknowledged
                .insert(moid.clone(), (id.to_string(), status));
            break kill.elapsed();
        }
        if let Ok(Some((status, data))) = &answer {
            assert_eq!(*status, 503, "{moid}: {data}");
        }
        assert!(
            kill.elapsed() < Duration::from_secs(240),
            "no write after the primary was killed"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    eprintln!("kill -9 of the primary ({killed}): the first write after {first_write:?}");
    cluster(&["revive"]);
    cluster(&["wait", "240"]);
    wait_for_more_deposits(&seen, 200).await;
    stop.store(true, Ordering::Relaxed);
    for task in load {
        task.await.expect("a client");
    }
    let seen = std::mem::take(&mut *seen.lock().expect("seen"));
    assert!(
        seen.unexpected.is_empty(),
        "answers other than 200 and 503: {:?}",
        seen.unexpected
    );

    // Every acknowledged operation exists with the status it was answered with; none twice.
    let api = &apis[0];
    for (moid, (id, status)) in seen
        .acknowledged
        .iter()
        .filter(|(m, _)| m.starts_with("dep-"))
    {
        let read = api.get(&format!("/api/v1/deposits/{id}")).await;
        assert_eq!(read.status, 200, "{moid} {id}: {}", read.body);
        assert_eq!(
            read.body["data"]["status"].as_u64(),
            Some(*status),
            "{moid}"
        );
        assert_eq!(read.body["data"]["merchantOperationId"], moid.as_str());
    }
    let stored = db.count("SELECT COUNT(*) AS n FROM operations");
    assert_eq!(
        stored,
        seen.acknowledged.len() as i64,
        "one operation per merchantOperationId, nothing else"
    );

    // Payouts: final, none paid twice, the approved ones exactly the bank's executed ones.
    let reads: Vec<(String, String)> = seen
        .acknowledged
        .iter()
        .filter(|(m, _)| m.starts_with("out-"))
        .map(|(moid, (id, _))| (moid.clone(), format!("/api/v1/withdrawals/{id}")))
        .collect();
    let finals = wait_all_final(api, &sim, &reads, SETTLE_DEADLINE).await;
    let stats = sim.stats().await;
    let paid = paid_at_most_once(&stats);
    let approved: Vec<&String> = finals
        .iter()
        .filter(|(_, data)| data["status"] == 1)
        .map(|(moid, _)| moid)
        .collect();
    for moid in &approved {
        let i: usize = moid
            .trim_start_matches("out-")
            .parse()
            .unwrap_or(usize::MAX);
        assert_eq!(
            paid.get(&recipient(&pan(i))),
            Some(&1),
            "{moid} approved, not paid"
        );
    }
    assert_eq!(
        paid.values().filter(|n| **n == 1).count(),
        approved.len(),
        "the bank paid only what the gateway approved"
    );

    // Every payout's callback delivered; the ledger holds; the balance adds up.
    let ids: Vec<String> = reads
        .iter()
        .map(|(moid, _)| seen.acknowledged[moid].0.clone())
        .collect();
    receiver.wait_delivered(&ids, SETTLE_DEADLINE).await;
    // The deposit whose lifetime passed during the outage: declined as expired, and told.
    let expired = seen.acknowledged["exp-0"].0.clone();
    receiver
        .wait_delivered(std::slice::from_ref(&expired), SETTLE_DEADLINE)
        .await;
    let told = receiver.for_operation(&expired);
    let data = told.last().expect("a callback").json()["data"].clone();
    assert_eq!(
        (data["status"].as_u64(), data["errorCode"].as_str()),
        (Some(2), Some("Expired")),
        "{data}"
    );
    gateway(&db, &["ledger", "verify"]).expect_code(0);
    let expected = 100_000_000 - approved.len() as i64 * 1_000;
    let (available, held) = api.balance().await;
    assert_eq!(held, "0.00");
    assert_eq!(
        available,
        format!("{}.{:02}", expected / 100, expected % 100)
    );
    eprintln!(
        "failover: {} deposits and {} payouts acknowledged ({} approved), {} answers 503, {} \
         timeouts, first write {first_write:?} after the kill",
        seen.acknowledged.len() - reads.len(),
        reads.len(),
        approved.len(),
        seen.unavailable,
        seen.timeouts
    );
    drop(gateways);
}
