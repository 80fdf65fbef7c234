//! A slow merchant does not hold up others: new work is claimed while slow deliveries run.

use std::time::Duration;

use domain::callback::CallbackState;
use domain::Direction;

use crate::helpers::{config, shutdown_signal, wait_for, TestEnv};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fast_callbacks_are_delivered_while_slow_ones_are_in_flight() {
    let env = TestEnv::with_workers(2).await;
    // Generous: the fast ones need a few milliseconds; the slow ones take this long.
    env.receiver.set_delay("/slow", Duration::from_secs(4));
    let earlier = env.now().plus_millis(-1_000);
    let slow: Vec<_> = (0..4)
        .map(|_| {
            let m = env.merchant.clone();
            env.enqueue_for(&m, Direction::Deposit, &env.receiver.url("/slow"), earlier)
        })
        .collect();
    let fast: Vec<_> = (0..20)
        .map(|_| env.enqueue(Direction::Deposit, &env.receiver.url("/ok")))
        .collect();
    let mut settings = config(&[10]);
    settings.timeout = Duration::from_secs(10);
    settings.concurrency = 8;
    settings.batch = 4; // the slow four fill the first claim
    let worker = env.worker(settings);
    let (stop, signal) = shutdown_signal();
    let running = tokio::spawn(worker.run(signal));

    wait_for(Duration::from_secs(20), "the fast callbacks", || {
        fast.iter()
            .all(|id| env.outbox.state(*id) == CallbackState::Delivered)
    })
    .await;
    assert_eq!(env.receiver.hits("/slow"), 4, "slow ones in flight");
    assert_eq!(
        env.receiver.finished("/slow"),
        0,
        "fast ones waited for slow ones"
    );
    for id in &slow {
        assert_eq!(env.outbox.state(*id), CallbackState::Pending);
    }

    stop.send(()).expect("worker listening");
    tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the worker stops")
        .expect("no panic");
    for id in &slow {
        assert_eq!(
            env.outbox.state(*id),
            CallbackState::Delivered,
            "finished at shutdown"
        );
    }
    assert_eq!(env.receiver.captured().len(), 24, "one request each");
}
