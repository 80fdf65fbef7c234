//! Throughput: `cargo test -p adapters-callback --release --test callback -- --ignored --nocapture`.

use std::time::{Duration, Instant};

use domain::callback::CallbackState;
use domain::Direction;

use crate::helpers::{config, shutdown_signal, wait_for, TestEnv};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run with --ignored --nocapture"]
async fn bench_delivers_5000_callbacks() {
    const COUNT: usize = 5_000;
    let env = TestEnv::with_workers(2).await;
    let url = env.receiver.url("/ok");
    for _ in 0..COUNT {
        env.enqueue(Direction::Deposit, &url);
    }
    let mut settings = config(&[1_000]);
    settings.concurrency = 64;
    settings.batch = 256;
    let worker = env.worker(settings);
    let (stop, signal) = shutdown_signal();

    let started = Instant::now();
    let running = tokio::spawn(worker.run(signal));
    wait_for(Duration::from_secs(300), "all deliveries", || {
        env.outbox.count(CallbackState::Delivered) == COUNT
    })
    .await;
    let elapsed = started.elapsed();
    stop.send(()).expect("worker listening");
    running.await.expect("no panic");

    let rate = COUNT as f64 / elapsed.as_secs_f64();
    println!("delivered {COUNT} callbacks in {elapsed:.2?}: {rate:.0} callbacks/s");
    assert_eq!(env.receiver.captured().len(), COUNT);
}
