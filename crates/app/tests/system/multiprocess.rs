//! Issue 5: several `gateway serve` processes on one PostgreSQL database — each final status
//! is settled once and each callback is sent by exactly one of them.

use std::time::Duration;

use futures::StreamExt;

use crate::helpers::db::postgres_for_several_gateways;
use crate::helpers::{
    card_payout, gateway, Api, CallbackReceiver, GatewayProcess, Merchant, Serve, TestDb,
};

/// Every tenth payout goes to the sandbox's declining card.
const DECLINE_EVERY: usize = 10;
const DEADLINE: Duration = Duration::from_secs(180);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_gateways_on_one_postgres_deliver_each_callback_once() {
    if let Some((db, _turn)) = postgres_for_several_gateways().await {
        many_gateways(db, 3, 500).await;
    }
}

/// Not promised by the contract (which names PostgreSQL), but SQLite's file locking must
/// keep two processes on one file from settling or sending anything twice as well.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gateways_on_one_sqlite_file_deliver_each_callback_once() {
    many_gateways(TestDb::sqlite(), 2, 100).await;
}

/// `processes` gateways on `db`, `payouts` payouts spread over them (every tenth declined),
/// each sent twice at once: one operation each, settled once, its callback sent once.
async fn many_gateways(db: TestDb, processes: usize, payouts: usize) {
    let shop = Merchant::funded(&db, "busy-shop", &format!("{}.00", payouts * 10));
    let receiver = CallbackReceiver::start();
    let cb = receiver.url("/cb");
    // Per-callback lines stay on so each process's share can be counted.
    let serve = Serve::default()
        .with("GATEWAY_SANDBOX_SETTLE_MS", "100")
        .log("warn,app=info,adapters_callback=info");
    let gateways: Vec<GatewayProcess> = (0..processes)
        .map(|i| GatewayProcess::start(&format!("{}", i + 1), &db, &serve))
        .collect();
    let apis: Vec<Api> = gateways.iter().map(|g| Api::new(g, &shop)).collect();

    // Spread the payouts over the processes, 16 at a time; each is sent twice at once, to
    // two processes, as a merchant retrying on a timeout would: one operation results.
    let ids: Vec<String> = futures::stream::iter(0..payouts)
        .map(|i| {
            let (first, second) = (
                apis[i % processes].clone(),
                apis[(i + 1) % processes].clone(),
            );
            let pan = if i % DECLINE_EVERY == 0 {
                "4000000000000002"
            } else {
                "4242424242424242"
            };
            let body = card_payout("10.00", pan, &format!("mp-{i}"), Some(&cb));
            async move {
                let path = "/api/v1/withdrawals";
                let (a, b) = futures::join!(first.post(path, &body), second.post(path, &body));
                let id = a.operation_id();
                assert_eq!(
                    b.operation_id(),
                    id,
                    "one operation per merchantOperationId"
                );
                id
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    assert_eq!(ids.len(), payouts);

    receiver.wait_delivered(&ids, DEADLINE).await;
    // Deliveries are recorded after the answer: wait for the records, then stop everything.
    crate::helpers::wait_until("every delivery recorded", DEADLINE, || {
        let n = db.count("SELECT count(*) AS n FROM callback_outbox WHERE state = 'delivered'");
        async move { (n == payouts as i64, format!("{n} of {payouts}")) }
    })
    .await;
    let mut shares = Vec::new();
    for mut gw in gateways {
        gw.terminate();
        shares.push(gw.log_lines("callback delivered"));
    }
    eprintln!("callbacks delivered per process: {shares:?}");

    let counts = receiver.per_operation();
    assert_eq!(counts.len(), payouts, "callbacks for unknown operations?");
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n != 1).collect();
    assert!(twice.is_empty(), "delivered more than once: {twice:?}");
    assert_eq!(receiver.captured().len(), payouts);
    assert_eq!(shares.iter().sum::<usize>(), payouts, "{shares:?}");
    assert_eq!(
        db.count("SELECT count(*) AS n FROM callback_attempts"),
        payouts as i64
    );
    for c in receiver.captured() {
        crate::helpers::assert_signed_callback(&c, &shop);
        assert_eq!(c.attempt(), 1);
    }
    let declined = receiver
        .captured()
        .iter()
        .filter(|c| c.json()["data"]["status"] == 2)
        .count();
    assert_eq!(declined, payouts / DECLINE_EVERY);
    assert_eq!(
        db.count("SELECT count(*) AS n FROM operations WHERE status = 1"),
        (payouts - payouts / DECLINE_EVERY) as i64
    );

    // Each payout settled once: only the declined ones' money is back, nothing held.
    let available = db.count(&format!(
        "SELECT available AS n FROM balances WHERE merchant_id = '{}'",
        shop.id
    ));
    let held = db.count(&format!(
        "SELECT held AS n FROM balances WHERE merchant_id = '{}'",
        shop.id
    ));
    let back = i64::try_from(payouts / DECLINE_EVERY * 1_000).expect("small");
    assert_eq!((available, held), (back, 0));
    gateway(&db, &["ledger", "verify"]).expect_code(0);
}
