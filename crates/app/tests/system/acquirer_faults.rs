//! Issue 14's fault test: gateways against a faulty simulated bank (failures, ambiguous
//! answers, timeouts, lost, doubled and reordered notifications) with a `kill -9` of one
//! gateway in the middle. Every operation ends final, nothing is paid twice, the gateway's
//! approved payouts are exactly the bank's executed ones, the ledger holds and every callback
//! is delivered.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::Value;

use crate::helpers::db::postgres_for_several_gateways;
use crate::helpers::sim::{
    add_provider, paid_at_most_once, pan, recipient, route_to, wait_all_final, Sim,
};
use crate::helpers::{
    card_payout, deposit, gateway, Api, CallbackReceiver, GatewayProcess, Merchant, Serve, TestDb,
};

const PROVIDER: &str = "bank";
/// How long every operation may take to become final once all were sent. A creation
/// committed just before the crash that never reached the bank can only be declined once its
/// `notAfter` (60 s) has passed by 5 minutes, and from then on it is read every 5 minutes;
/// the bank fails a quarter of all calls (reads included), so a few such reads in a row
/// may fail. 25 minutes leaves room for four failed reads after the 6-minute mark.
const SETTLE_DEADLINE: Duration = Duration::from_secs(1500);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gateways_on_postgres_never_pay_twice_under_faults_and_a_crash() {
    if let Some((db, _turn)) = postgres_for_several_gateways().await {
        faulty_bank(db, 2, 500).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_gateway_on_sqlite_never_pays_twice_under_faults_and_a_crash() {
    faulty_bank(TestDb::sqlite(), 1, 200).await;
}

fn serve() -> Serve {
    Serve::default()
        .with("GATEWAY_RECONCILE_AFTER", "1s")
        .with("GATEWAY_CALLBACK_SCHEDULE", "200ms,500ms,1s,2s,5s")
        .log("warn,app=info,domain=info")
}

/// `processes` gateways on `db`; `count` payouts to distinct cards and `count` card payins
/// paid at the bank; one gateway is killed (and, when it was the only one, restarted) half way.
async fn faulty_bank(db: TestDb, processes: usize, count: usize) {
    let sim = Sim::start(&[
        "--settle-ms",
        "300",
        "--hold-ms",
        "2500",
        "--fail-rate",
        "0.1",
        "--ambiguous-rate",
        "0.05",
        "--timeout-rate",
        "0.1",
        "--drop-notify-rate",
        "0.3",
        "--duplicate-notify-rate",
        "0.2",
        "--reorder-notify",
        "true",
        "--seed",
        "14",
    ]);
    add_provider(&db, PROVIDER, &sim, &["--timeout", "1s"]);
    route_to(&db, PROVIDER, "withdrawal", "card", &[]);
    route_to(&db, PROVIDER, "deposit", "card", &["--lifetime", "3600"]);
    let shop = Merchant::funded(&db, "faulty-shop", "1000000.00");
    let receiver = CallbackReceiver::start();
    let cb = receiver.url("/cb");
    let mut gateways: Vec<GatewayProcess> = (0..processes)
        .map(|i| GatewayProcess::start(&format!("g{i}"), &db, &serve()))
        .collect();
    let apis: Vec<Api> = gateways.iter().map(|g| Api::new(g, &shop)).collect();

    // Every request is sent while the first gateway is killed half way through them.
    let sender = tokio::spawn(send(apis.clone(), 0..count, cb.clone()));
    let until = Instant::now() + Duration::from_secs(120);
    while gateways[0].log_lines("operation created") < count / 2 {
        assert!(
            Instant::now() < until,
            "the first gateway created too little"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    gateways[0].crash();
    let survivors: Vec<Api> = if processes > 1 {
        apis[1..].to_vec()
    } else {
        let restarted = GatewayProcess::start("g0-restarted", &db, &serve());
        let api = Api::new(&restarted, &shop);
        gateways.push(restarted);
        vec![api]
    };
    let mut created = sender.await.expect("the sender");
    // Requests that hit the crashed gateway are retried with the same merchantOperationId.
    let retried = retry_lost(&survivors, &mut created, count, &cb).await;
    let api = &survivors[0];

    // Pay every payin the bank knows, as its user would on the bank's page.
    for (moid, id) in &created {
        if moid.starts_with("in-") {
            let status = sim.complete_payin(id, "confirm").await;
            assert!(matches!(status, 200 | 404 | 409), "complete {id}: {status}");
        }
    }

    let reads: Vec<(String, String)> = created
        .iter()
        .map(|(moid, id)| {
            let kind = if moid.starts_with("out-") {
                "withdrawals"
            } else {
                "deposits"
            };
            (moid.clone(), format!("/api/v1/{kind}/{id}"))
        })
        .collect();
    let finals = wait_all_final(api, &sim, &reads, SETTLE_DEADLINE).await;
    let stats = sim.stats().await;

    // Nothing paid twice: per reference and per recipient.
    let paid_recipients = paid_at_most_once(&stats);

    // The gateway's approved payouts are exactly the bank's executed ones.
    let approved_payouts: HashSet<String> = finals
        .iter()
        .filter(|(moid, data)| moid.starts_with("out-") && data["status"] == 1)
        .map(|(moid, _)| recipient_key(moid))
        .collect();
    let executed: HashSet<String> = paid_recipients
        .iter()
        .filter(|(_, n)| **n == 1)
        .map(|(k, _)| k.clone())
        .collect();
    assert_eq!(
        approved_payouts, executed,
        "approved payouts differ from the bank's executed ones"
    );
    assert_eq!(
        stats["payouts"]["count"].as_u64(),
        Some(executed.len() as u64)
    );

    // Every final operation's callback is delivered.
    let ids: Vec<String> = created.values().cloned().collect();
    receiver.wait_delivered(&ids, SETTLE_DEADLINE).await;

    // The money adds up: the ledger holds and the balance is the sum of what was approved.
    gateway(&db, &["ledger", "verify"]).expect_code(0);
    let approved_minor = |prefix: &str| {
        finals
            .iter()
            .filter(|(moid, data)| moid.starts_with(prefix) && data["status"] == 1)
            .count() as i64
            * 1_000
    };
    let expected = 100_000_000 + approved_minor("in-") - approved_minor("out-");
    let (available, held) = api.balance().await;
    assert_eq!(held, "0.00");
    assert_eq!(
        available,
        format!("{}.{:02}", expected / 100, expected % 100)
    );
    let declined: usize = finals.values().filter(|d| d["status"] == 2).count();
    eprintln!(
        "faulty bank: {} operations ({} declined), {} retried after the crash, {} payouts executed",
        finals.len(),
        declined,
        retried,
        executed.len()
    );
}

/// The simulator's `byRecipient` key of payout `out-{i}`.
fn recipient_key(moid: &str) -> String {
    let i: usize = moid
        .trim_start_matches("out-")
        .parse()
        .unwrap_or(usize::MAX);
    recipient(&pan(i))
}

/// The request of `moid`: `out-{i}` a 10.00 payout to card i, `in-{i}` a 10.00 card payin.
fn request(moid: &str, cb: &str) -> (&'static str, Value) {
    match moid.strip_prefix("out-") {
        Some(i) => (
            "/api/v1/withdrawals",
            card_payout("10.00", &pan(i.parse().unwrap_or(0)), moid, Some(cb)),
        ),
        None => ("/api/v1/deposits", deposit("card", "10.00", moid, Some(cb))),
    }
}

/// Sends payout and payin `i` for every `i` in `range`, spread over `apis`, 16 at a time.
/// Returns merchantOperationId -> operationId for each that was answered 200.
async fn send(
    apis: Vec<Api>,
    range: std::ops::Range<usize>,
    cb: String,
) -> HashMap<String, String> {
    let moids: Vec<String> = range
        .flat_map(|i| [format!("out-{i}"), format!("in-{i}")])
        .collect();
    futures::stream::iter(moids.into_iter().enumerate())
        .map(|(n, moid)| {
            let api = apis[n % apis.len()].clone();
            let cb = cb.clone();
            async move {
                let (path, body) = request(&moid, &cb);
                let answer =
                    tokio::time::timeout(Duration::from_secs(30), api.try_post(path, &body)).await;
                match answer {
                    Ok(Some((200, data))) => Some((
                        moid,
                        data["data"]["operationId"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                    )),
                    Ok(Some((status, data))) => {
                        assert!(status >= 500, "{moid}: {status} {data}");
                        None
                    }
                    _ => None,
                }
            }
        })
        .buffer_unordered(16)
        .filter_map(|x| async move { x })
        .collect()
        .await
}

/// Sends again, with the same merchantOperationId, every request that got no 200 answer (a
/// merchant's retry after a crash or a 503); returns how many were retried.
async fn retry_lost(
    apis: &[Api],
    created: &mut HashMap<String, String>,
    count: usize,
    cb: &str,
) -> usize {
    let mut retried = 0;
    for i in 0..count {
        for moid in [format!("out-{i}"), format!("in-{i}")] {
            if created.contains_key(&moid) {
                continue;
            }
            retried += 1;
            let (path, body) = request(&moid, cb);
            let until = Instant::now() + Duration::from_secs(60);
            loop {
                if let Some((200, data)) = apis[0].try_post(path, &body).await {
                    created.insert(
                        moid.clone(),
                        data["data"]["operationId"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                    );
                    break;
                }
                assert!(Instant::now() < until, "{moid} never answered 200");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    retried
}
