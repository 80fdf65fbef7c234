//! A measurement, not a check (ignored by default): how fast one gateway drains a backlog of
//! callbacks to a receiver that answers 200 at once.
//!
//! ```text
//! cargo test -p app --release --test system callback_throughput -- --ignored --nocapture
//! GATEWAY_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test cargo test -p app \
//!     --release --test system callback_throughput -- --ignored --nocapture
//! ```
//!
//! `GATEWAY_BENCH_CALLBACKS` sets the backlog (default 10000). With
//! `GATEWAY_TEST_DATABASE_URL` set it runs on PostgreSQL, else on SQLite.

use std::sync::Arc;
use std::time::{Duration, Instant};

use domain::request::NewDeposit;
use domain::request::RawRequest;
use domain::MerchantId;
use futures::StreamExt;

use crate::helpers::db::PG_VAR;
use crate::helpers::{
    wait_until, Backend, CallbackReceiver, GatewayProcess, Merchant, Sandbox, Serve, TestDb,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement; run with --ignored --nocapture (see the module docs)"]
async fn callback_throughput() {
    let n: usize = std::env::var("GATEWAY_BENCH_CALLBACKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let db = match std::env::var(PG_VAR) {
        Ok(url) if !url.trim().is_empty() => {
            TestDb::on(Backend::Postgres).expect("PostgreSQL is set")
        }
        _ => TestDb::sqlite(),
    };
    let shop = Merchant::create(&db, "bench-shop");
    let receiver = CallbackReceiver::start();
    let url = receiver.url("/cb");

    // The backlog: n deposits declined at creation (amount ending in 05) while no gateway
    // runs, each with its callback queued in the same transaction.
    let queued_at = Instant::now();
    let mut sandbox = Sandbox::local(&db);
    let gateway = sandbox.app().await.gateway().clone();
    let id = MerchantId::parse(&shop.id).expect("a merchant id");
    let merchant = Arc::new(
        gateway
            .merchants()
            .merchant(&id)
            .await
            .expect("the merchant directory")
            .expect("the bench merchant"),
    );
    let made = futures::stream::iter(0..n)
        .map(|i| {
            let (gateway, merchant, url) = (gateway.clone(), merchant.clone(), url.clone());
            async move {
                let user = format!("bench-{i}");
                let raw = RawRequest {
                    amount: Some("10.05"),
                    currency: Some("RUB"),
                    payment_method: Some("card"),
                    user_id: Some(&user),
                    callback_url: Some(&url),
                    ..RawRequest::default()
                };
                let request = NewDeposit::parse(&raw).expect("a valid deposit");
                gateway
                    .creation()
                    .create_deposit(&merchant, request, b"{}")
                    .await
                    .expect("a deposit declined at creation");
            }
        })
        .buffer_unordered(8)
        .count()
        .await;
    drop(sandbox);
    assert_eq!(made, n);
    let pending = db.count("SELECT count(*) AS n FROM callback_outbox WHERE state = 'pending'");
    assert_eq!(pending, i64::try_from(n).expect("fits"));
    eprintln!(
        "queued {n} callbacks on {:?} in {:.1?}",
        db.backend,
        queued_at.elapsed()
    );

    let started = Instant::now();
    let mut gw = GatewayProcess::start("bench", &db, &Serve::default().log("warn,app=info"));
    let ready = started.elapsed();
    wait_until(
        "every queued callback delivered",
        Duration::from_secs(900),
        || {
            let got = receiver.delivered().len();
            async move { (got == n, format!("{got} of {n}")) }
        },
    )
    .await;
    let drained = started.elapsed();
    gw.terminate();

    let counts = receiver.per_operation();
    assert_eq!(counts.len(), n);
    assert!(counts.values().all(|c| *c == 1), "a callback arrived twice");
    let rate = n as f64 / drained.as_secs_f64();
    let after_ready = n as f64 / (drained - ready).as_secs_f64();
    eprintln!(
        "callback throughput on {:?}: {n} callbacks in {drained:.2?} from process start \
         ({rate:.0} callbacks/s; {after_ready:.0} callbacks/s after the {ready:.2?} start-up)",
        db.backend
    );
}
