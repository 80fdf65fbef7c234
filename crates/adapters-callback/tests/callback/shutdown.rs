//! Graceful shutdown: claiming stops, deliveries in flight finish, leases are released.

use std::time::Duration;

use domain::callback::CallbackState;
use domain::ports::CallbackOutbox;
use domain::Direction;

use crate::helpers::{config, shutdown_signal, wait_for, TestEnv, OWNER};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_deliveries_finish_and_releases_leases() {
    let env = TestEnv::new().await;
    env.receiver.set_delay("/slow", Duration::from_millis(500));
    let slow = env.enqueue(Direction::Deposit, &env.receiver.url("/slow"));
    // A callback whose merchant lookup fails keeps its lease until released.
    let stuck_merchant = env.merchants.add("m-stuck", true);
    *env.merchants.failing.lock().expect("lock") = Some(stuck_merchant.clone());
    let stuck = env.enqueue_ok_for(&stuck_merchant, Direction::Deposit);
    let worker = env.worker(config(&[10]));
    let (stop, signal) = shutdown_signal();
    let running = tokio::spawn(worker.run(signal));

    wait_for(Duration::from_secs(20), "the slow request", || {
        env.receiver.hits("/slow") == 1
    })
    .await;
    assert_eq!(env.outbox.leases_held_by(OWNER), 2);
    stop.send(()).expect("worker listening");
    // Queued after the signal: must not be claimed.
    let late = env.enqueue(Direction::Deposit, &env.receiver.url("/ok"));
    tokio::time::timeout(Duration::from_secs(20), running)
        .await
        .expect("the worker stops")
        .expect("no panic");

    assert_eq!(
        env.outbox.state(slow),
        CallbackState::Delivered,
        "in flight finished"
    );
    assert_eq!(env.outbox.release_calls(), 1);
    assert_eq!(env.outbox.leases_held_by(OWNER), 0);
    assert_eq!(env.outbox.state(late), CallbackState::Pending);
    assert!(env.outbox.row(late).history.is_empty());
    assert!(env.outbox.row(stuck).history.is_empty());

    // The released callback is claimable by another process at once.
    let now = env.now();
    let claimed = env
        .outbox
        .claim_due("other-owner", now, now.plus_seconds(30), 10)
        .await
        .expect("claim");
    let mut ids: Vec<_> = claimed.iter().map(|c| c.operation_id).collect();
    ids.sort();
    let mut expected = vec![stuck, late];
    expected.sort();
    assert_eq!(ids, expected);
    assert!(claimed.iter().all(|c| c.attempt == 1));
}
