//! Issue 5: gateways stopped and killed while other gateways on the same database keep
//! delivering — nothing is lost, and only what a killed process had in flight is repeated.

use std::time::{Duration, Instant};

use futures::StreamExt;

use crate::helpers::db::{postgres_for_several_gateways, several_postgres_gateways};
use crate::helpers::{
    card_payout, gateway, wait_until, Api, Backend, CallbackReceiver, GatewayProcess, Merchant,
    Serve, TestDb,
};

const DEADLINE: Duration = Duration::from_secs(180);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolling_restarts_lose_and_repeat_nothing_on_postgres() {
    if let Some((db, _turn)) = postgres_for_several_gateways().await {
        rolling_restarts(db, 400).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolling_restarts_lose_and_repeat_nothing_on_sqlite() {
    rolling_restarts(TestDb::sqlite(), 200).await;
}

/// What [`slow_payouts`] started.
struct SlowPayouts {
    receiver: CallbackReceiver,
    serve: Serve,
    running: Vec<GatewayProcess>,
    ids: Vec<String>,
}

/// A merchant (`shop`) with the money for `payouts` card payouts of 10.00, a slow receiver
/// (one second per callback), `processes` gateways, and the payouts with callbacks sent to
/// them in turn (`merchantOperationId` `{tag}-N`), 16 at a time.
async fn slow_payouts(
    db: &TestDb,
    shop: &str,
    tag: &str,
    processes: usize,
    payouts: usize,
) -> SlowPayouts {
    let shop = Merchant::create(db, shop);
    shop.credit(db, &format!("{}.00", payouts * 10));
    let receiver = CallbackReceiver::start();
    receiver.set_delay("/cb", Duration::from_millis(1000));
    let cb = receiver.url("/cb");
    let serve = Serve::default()
        .with("GATEWAY_SANDBOX_SETTLE_MS", "100")
        .log("warn,app=info,adapters_callback=info");
    let running: Vec<GatewayProcess> = (1..=processes)
        .map(|i| GatewayProcess::start(&i.to_string(), db, &serve))
        .collect();
    let apis: Vec<Api> = running.iter().map(|g| Api::new(g, &shop)).collect();
    let ids: Vec<String> = futures::stream::iter(0..payouts)
        .map(|i| {
            let api = apis[i % processes].clone();
            let body = card_payout(
                "10.00",
                "4242424242424242",
                &format!("{tag}-{i}"),
                Some(&cb),
            );
            async move { api.create_withdrawal(&body).await.operation_id() }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    SlowPayouts {
        receiver,
        serve,
        running,
        ids,
    }
}

/// Waits until the outbox records all `payouts` callbacks delivered.
async fn every_delivery_recorded(db: &TestDb, payouts: usize) {
    wait_until("every delivery recorded", DEADLINE, || {
        let n = db.count("SELECT count(*) AS n FROM callback_outbox WHERE state = 'delivered'");
        async move { (n == payouts as i64, format!("{n} of {payouts}")) }
    })
    .await;
}

/// Two gateways deliver to a slow merchant while, one after another, the oldest is stopped
/// gracefully (SIGTERM) and a new one started: every callback arrives exactly once, since a
/// graceful stop lets its deliveries finish and be recorded before it releases the rest.
async fn rolling_restarts(db: TestDb, payouts: usize) {
    let SlowPayouts {
        receiver,
        serve,
        mut running,
        ids,
    } = slow_payouts(&db, "rolling-shop", "roll", 2, payouts).await;

    let mut shares = Vec::new();
    for round in 1..=3 {
        let threshold = payouts * round / 4;
        wait_until("callbacks arriving", DEADLINE, || {
            let seen = receiver.captured().len();
            async move { (seen >= threshold, format!("{seen} of {threshold}")) }
        })
        .await;
        let mut oldest = running.remove(0);
        oldest.terminate();
        shares.push(oldest.log_lines("callback delivered"));
        running.push(GatewayProcess::start(
            &format!("{}", round + 2),
            &db,
            &serve,
        ));
    }
    receiver.wait_delivered(&ids, DEADLINE).await;
    every_delivery_recorded(&db, payouts).await;
    for mut gw in running {
        gw.terminate();
        shares.push(gw.log_lines("callback delivered"));
    }
    eprintln!(
        "rolling restarts on {:?}: delivered per process {shares:?}",
        db.backend
    );

    let counts = receiver.per_operation();
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n != 1).collect();
    assert!(twice.is_empty(), "delivered more than once: {twice:?}");
    assert_eq!(counts.len(), payouts);
    assert_eq!(shares.iter().sum::<usize>(), payouts, "{shares:?}");
    assert_eq!(
        db.count("SELECT count(*) AS n FROM callback_attempts"),
        payouts as i64
    );
    gateway(&db, &["ledger", "verify"]).expect_code(0);
}

/// One of three gateways is killed (SIGKILL) while delivering to a slow merchant: the others
/// take its callbacks over once its leases lapse. Only callbacks that were in flight in the
/// killed process may arrive twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_others_take_over_from_a_killed_gateway_on_postgres() {
    let Some(db) = TestDb::on(Backend::Postgres) else {
        return;
    };
    let _turn = several_postgres_gateways().await;
    let payouts = 300;
    let SlowPayouts {
        receiver,
        mut running,
        ids,
        ..
    } = slow_payouts(&db, "takeover-shop", "kill", 3, payouts).await;
    wait_until("callbacks arriving", DEADLINE, || {
        let seen = receiver.captured().len();
        async move { (seen >= payouts / 3, format!("{seen} of {}", payouts / 3)) }
    })
    .await;
    let mut victim = running.remove(0);
    victim.crash();
    let killed_at = Instant::now();

    every_delivery_recorded(&db, payouts).await;
    for mut gw in running {
        gw.terminate();
    }
    let counts = receiver.per_operation();
    for id in &ids {
        let got = receiver.for_operation(id);
        assert!(!got.is_empty(), "{id} never arrived");
        if got.len() > 1 {
            assert_eq!(got.len(), 2, "{id}: {got:?}");
            assert!(
                got[0].at < killed_at,
                "{id} was sent twice though not in flight at the kill"
            );
        }
    }
    let repeated = counts.values().filter(|n| **n > 1).count();
    eprintln!(
        "takeover: {repeated} callbacks in flight in the killed gateway were sent again, \
         all delivered {:?} after the kill",
        killed_at.elapsed()
    );
    // A process has at most its worker's concurrency of deliveries in flight.
    let in_flight = adapters_callback::CallbackConfig::default().concurrency;
    assert!(
        repeated <= in_flight,
        "at most the {in_flight} deliveries a process has in flight were sent again: {repeated}"
    );
    gateway(&db, &["ledger", "verify"]).expect_code(0);
}
