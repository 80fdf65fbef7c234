//! Issue 5: callbacks survive a restart — queued while the gateway stops (SIGTERM) or dies
//! (SIGKILL), or finished while no gateway runs — and every one arrives after the next start.

use std::time::{Duration, Instant};

use crate::helpers::{
    card_payout, deposit, gateway, gateway_line, on_sqlite_and_postgres, wait_until, Api,
    CallbackReceiver, GatewayProcess, Merchant, Sandbox, Serve, TestDb,
};

const DEADLINE: Duration = Duration::from_secs(60);
/// The worker's lease is 30 s; a dead process's claims must come back within 60 s.
const LEASE_DEADLINE: Duration = Duration::from_secs(90);

/// How many callbacks some gateway holds the lease of.
fn leased_callbacks(db: &TestDb) -> i64 {
    db.count("SELECT count(*) AS n FROM callback_outbox WHERE lease_owner IS NOT NULL")
}

on_sqlite_and_postgres!(
    async graceful_restart:
    callbacks_survive_a_graceful_restart_on_sqlite,
    callbacks_survive_a_graceful_restart_on_postgres
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callbacks_claimed_by_a_killed_gateway_come_back_on_sqlite() {
    crash_restart(TestDb::sqlite()).await;
}

// On PostgreSQL, `failover::the_others_take_over_from_a_killed_gateway_on_postgres` kills a
// gateway the same way (one 30 s lease wait is enough per backend).

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deposit_that_expires_while_no_gateway_runs_is_declined_after_the_start() {
    let db = TestDb::sqlite();
    let shop = Merchant::create(&db, "expiry-shop");
    let lifetime = "4";
    let route =
        format!("route add --direction deposit --method sbp --priority 200 --lifetime {lifetime}");
    gateway_line(&db, &route).expect_code(0);
    let receiver = CallbackReceiver::start();
    let cb = receiver.url("/cb");
    let mut a = GatewayProcess::start("a", &db, &Serve::default());
    let api = Api::new(&a, &shop);
    let created = Instant::now();
    let answer = api
        .create_deposit(&deposit("sbp", "70.00", "expiring", Some(&cb)))
        .await;
    let id = answer.operation_id();
    assert_eq!(answer.body["data"]["status"], 3, "{}", answer.body);
    a.terminate();
    // Start again only once the lifetime has passed.
    let lifetime = Duration::from_secs(lifetime.parse().expect("seconds"));
    tokio::time::sleep(lifetime.saturating_sub(created.elapsed()) + Duration::from_millis(500))
        .await;
    if !receiver.captured().is_empty() {
        // Only on a machine so loaded that creating and stopping took the whole lifetime.
        eprintln!("the deposit expired before the stop; the restart case was not exercised");
        return;
    }

    let mut b = GatewayProcess::start("b", &db, &Serve::default());
    receiver
        .wait_delivered(std::slice::from_ref(&id), DEADLINE)
        .await;
    let data = receiver.for_operation(&id)[0].json()["data"].clone();
    assert_eq!(data["status"], 2, "{data}");
    assert_eq!(data["errorCode"], "Expired", "{data}");
    b.terminate();
}

on_sqlite_and_postgres!(
    async in_flight_at_stop:
    a_graceful_stop_lets_deliveries_in_flight_finish_on_sqlite,
    a_graceful_stop_lets_deliveries_in_flight_finish_on_postgres
);

/// A merchant `shop`, a receiver that holds every callback unanswered at the returned URL,
/// and gateway `a` with that merchant's API.
fn holding_callbacks(db: &TestDb, shop: &str) -> (CallbackReceiver, String, GatewayProcess, Api) {
    let shop = Merchant::create(db, shop);
    let receiver = CallbackReceiver::start();
    receiver.hold(true);
    let cb = receiver.url("/cb");
    let a = GatewayProcess::start("a", db, &Serve::default());
    let api = Api::new(&a, &shop);
    (receiver, cb, a, api)
}

/// SIGTERM while callbacks are in flight: the gateway stops claiming, lets them finish and
/// records them, so nothing is sent again by the next gateway.
async fn in_flight_at_stop(db: TestDb) {
    let (receiver, cb, mut a, api) = holding_callbacks(&db, "drain-shop");
    let mut ids = Vec::new();
    for i in 0..3 {
        let body = deposit("card", "10.05", &format!("drain-{i}"), Some(&cb));
        ids.push(api.create_deposit(&body).await.operation_id());
    }
    wait_until("three callbacks in flight", DEADLINE, || {
        let seen = receiver.per_operation().len();
        async move { (seen == 3, format!("{seen} of 3")) }
    })
    .await;
    a.send_term();
    a.wait_for_log("callback worker stopping", DEADLINE);
    receiver.hold(false);
    a.wait_stopped();
    assert_eq!(a.log_lines("callback delivered"), 3, "{}", a.log_text());
    let delivered = db.count("SELECT count(*) AS n FROM callback_outbox WHERE state = 'delivered'");
    assert_eq!(delivered, 3, "the drained deliveries were recorded");
    let leased = leased_callbacks(&db);
    assert_eq!(leased, 0);

    // The next gateway has nothing to send again.
    let mut b = GatewayProcess::start("b", &db, &Serve::default());
    tokio::time::sleep(Duration::from_secs(1)).await;
    b.terminate();
    for id in &ids {
        assert_eq!(receiver.for_operation(id).len(), 1, "{id}");
    }
}

/// Retries pending, payouts processing and callbacks queued while no gateway runs: all of
/// them are delivered by the next gateway.
async fn graceful_restart(db: TestDb) {
    let shop = Merchant::funded(&db, "restart-shop", "10000.00");
    let receiver = CallbackReceiver::start();
    receiver.set_status("/cb", 503);
    let cb = receiver.url("/cb");
    let cb = Some(cb.as_str());
    // Retries every second for longer than the test; payouts settle well after the stop.
    let retry_for_long = vec!["1s"; 60].join(",");
    let serve = Serve::default()
        .with("GATEWAY_CALLBACK_SCHEDULE", &retry_for_long)
        .with("GATEWAY_SANDBOX_SETTLE_MS", "8000");
    let mut a = GatewayProcess::start("a", &db, &serve);
    let api = Api::new(&a, &shop);
    let mut sandbox = Sandbox::new(&a, &db).await;

    let mut retried = Vec::new();
    for i in 0..5 {
        let body = deposit("card", "100.00", &format!("retried-{i}"), cb);
        let id = api.create_deposit(&body).await.operation_id();
        sandbox.complete(&id, 1).await;
        retried.push(id);
    }
    let mut payouts = Vec::new();
    for i in 0..3 {
        let body = card_payout("250.00", "4242424242424242", &format!("payout-{i}"), cb);
        payouts.push(api.create_withdrawal(&body).await.operation_id());
    }
    let mut offline = Vec::new();
    for i in 0..2 {
        let body = deposit("sbp", "40.00", &format!("offline-{i}"), cb);
        offline.push(api.create_deposit(&body).await.operation_id());
    }
    // Each finished deposit's callback was tried and refused (503): it waits for a retry.
    wait_until("a refused first attempt of each callback", DEADLINE, || {
        let seen = retried
            .iter()
            .filter(|id| !receiver.for_operation(id).is_empty())
            .count();
        async move { (seen == 5, format!("{seen} of 5")) }
    })
    .await;

    a.terminate();
    let leased = leased_callbacks(&db);
    assert_eq!(leased, 0, "a graceful stop releases its leases");
    let processing = db.count(
        "SELECT count(*) AS n FROM operations WHERE direction = 'withdrawal' AND status = 3",
    );
    assert_eq!(
        processing, 3,
        "the payouts were still processing at the stop"
    );

    // Finished while no gateway runs: queued in the same transaction, sent after the start.
    let mut offline_sandbox = Sandbox::local(&db);
    for id in &offline {
        offline_sandbox.complete(id, 1).await;
    }
    drop(offline_sandbox);
    let before_restart = receiver.captured().len();

    receiver.set_status("/cb", 200);
    let mut b = GatewayProcess::start("b", &db, &Serve::default());
    let all: Vec<String> = [retried.clone(), payouts.clone(), offline.clone()].concat();
    receiver.wait_delivered(&all, DEADLINE).await;

    for id in &all {
        let got = receiver.for_operation(id);
        let delivered: Vec<_> = got.iter().filter(|c| c.answered == Some(200)).collect();
        assert_eq!(delivered.len(), 1, "{id}: {got:?}");
        let attempts: Vec<u32> = got.iter().map(|c| c.attempt()).collect();
        let expected: Vec<u32> = (1..=u32::try_from(got.len()).expect("few")).collect();
        assert_eq!(attempts, expected, "attempt numbers count on: {id}");
    }
    for id in &retried {
        assert!(receiver.for_operation(id).len() >= 2, "{id} was retried");
    }
    for id in &payouts {
        let data = receiver.for_operation(id)[0].json()["data"].clone();
        assert_eq!(data["type"], "withdrawal", "{data}");
        assert_eq!(
            data["status"], 1,
            "the payout settled after the restart: {data}"
        );
    }
    for id in &offline {
        assert_eq!(receiver.for_operation(id)[0].attempt(), 1);
    }
    assert!(receiver.captured().len() > before_restart);

    // 10000 + 5 x 100 + 2 x 40 in, 3 x 250 paid out.
    let api = Api::new(&b, &shop);
    assert_eq!(
        api.balance().await,
        ("9830.00".to_string(), "0.00".to_string())
    );
    b.terminate();
    gateway(&db, &["ledger", "verify"]).expect_code(0);
}

/// A gateway killed while its deliveries are in flight: its leases lapse and the next
/// gateway delivers every callback (at least once).
async fn crash_restart(db: TestDb) {
    let (receiver, cb, mut a, api) = holding_callbacks(&db, "crash-shop");
    let mut ids = Vec::new();
    for i in 0..5 {
        // Declined at creation (amount ending in 05): the callback is queued at once.
        let body = deposit("card", "10.05", &format!("crash-{i}"), Some(&cb));
        let answer = api.create_deposit(&body).await;
        assert_eq!(answer.body["data"]["status"], 2, "{}", answer.body);
        ids.push(answer.operation_id());
    }
    // All five are claimed and in flight: the receiver holds them unanswered.
    wait_until("five callbacks in flight", DEADLINE, || {
        let seen = receiver.per_operation().len();
        async move { (seen == 5, format!("{seen} of 5")) }
    })
    .await;
    a.crash();
    let leased = db.count(
        "SELECT count(*) AS n FROM callback_outbox WHERE lease_owner IS NOT NULL \
         AND state = 'pending'",
    );
    assert_eq!(leased, 5, "the killed gateway held the leases");
    receiver.hold(false);

    let restarted = Instant::now();
    let mut b = GatewayProcess::start("b", &db, &Serve::default());
    wait_until(
        "every callback delivered by the new gateway",
        LEASE_DEADLINE,
        || {
            let captured = receiver.captured();
            let done = ids
                .iter()
                .filter(|id| {
                    captured.iter().any(|c| {
                        &c.operation_id == *id && c.at >= restarted && c.answered == Some(200)
                    })
                })
                .count();
            async move { (done == 5, format!("{done} of 5")) }
        },
    )
    .await;
    eprintln!(
        "crash_restart: the killed gateway's callbacks came back after {:?}",
        restarted.elapsed()
    );
    // The receiver's 200 arrives before the gateway records it: wait for the records.
    wait_until("every delivery recorded", DEADLINE, || {
        let n = db.count("SELECT count(*) AS n FROM callback_outbox WHERE state = 'delivered'");
        async move { (n == 5, format!("{n} of 5")) }
    })
    .await;
    b.terminate();
    let leased = leased_callbacks(&db);
    assert_eq!(leased, 0, "no lease outlives the delivery");
}
