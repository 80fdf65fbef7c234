//! A disabled merchant's due callbacks are held, not attempted, and go out once it is
//! enabled again; nothing is failed for it.

use std::time::Duration;

use domain::callback::CallbackState;
use domain::ports::RetryOutcome;
use domain::Direction;

use crate::helpers::{config, shutdown_signal, wait_for, TestEnv};

#[tokio::test]
async fn a_disabled_merchants_callback_is_held_then_sent_once_after_the_enable() {
    let env = TestEnv::new().await;
    let off = env.merchants.add("m-off", false);
    let url = env.receiver.url("/ok");
    let due = env.now();
    let id = env.enqueue_for(&off, Direction::Deposit, &url, due);
    let worker = env.worker(config(&[10, 10]));

    env.run_until(&worker, || env.outbox.state(id) == CallbackState::Held)
        .await;
    // Nothing more is claimed while it is held.
    assert_eq!(worker.run_once().await.expect("run_once"), 0);

    let row = env.outbox.row(id);
    assert!(env.receiver.captured().is_empty(), "no request while held");
    assert!(
        row.history.is_empty() && row.results.is_empty(),
        "no attempt"
    );
    assert_eq!((row.attempts_made, row.failures_in_run), (0, 0));
    assert_eq!(row.next_at, due, "its due time kept");
    assert_eq!(row.lease, None);
    assert_eq!(worker.metrics().held.get(), 1);
    assert_eq!(worker.metrics().failed.get(), 0);
    // An operator's retry does not send it while the merchant is disabled.
    assert_eq!(env.retry(id).await, RetryOutcome::Held);

    assert_eq!(env.outbox.enable(&off), 1);
    env.run_until(&worker, || env.outbox.state(id) == CallbackState::Delivered)
        .await;
    let captured = env.receiver.captured();
    assert_eq!(captured.len(), 1, "exactly once");
    assert_eq!(captured[0].header("x-callback-attempt"), "1");
    assert_eq!(captured[0].header("merchant-id"), "m-off");
    assert_eq!(env.outbox.row(id).history.len(), 1);
    assert_eq!(worker.metrics().delivered.get(), 1);
    assert_eq!(worker.metrics().failed.get(), 0);
}

#[tokio::test]
async fn a_merchant_enabled_after_the_worker_read_it_gets_its_callback_sent_not_held() {
    let env = TestEnv::new().await;
    let shop = env.merchants.add("m-back", true);
    // The worker's copy of the merchant still says disabled; the store says enabled.
    env.merchants.read_as(&shop, false);
    let id = env.enqueue_ok_for(&shop, Direction::Withdrawal);
    let worker = env.worker(config(&[10]));

    env.run_until(&worker, || env.outbox.state(id) == CallbackState::Delivered)
        .await;

    assert_eq!(env.receiver.captured().len(), 1);
    assert_eq!(worker.metrics().held.get(), 0);
}

#[tokio::test]
async fn the_running_worker_sweeps_held_callbacks_of_enabled_merchants_back_to_pending() {
    let env = TestEnv::new().await;
    let off = env.merchants.add("m-off", false);
    let id = env.enqueue_ok_for(&off, Direction::Deposit);
    let worker = env.worker(config(&[10]));
    env.run_until(&worker, || env.outbox.state(id) == CallbackState::Held)
        .await;
    assert_eq!(
        worker.sweep_held().await.expect("sweep"),
        0,
        "still disabled"
    );

    // Enabled without the enable's release (say, by hand in the database): the worker's
    // periodic sweep (every 50 ms in these tests) finds it.
    env.merchants.set_enabled(&off, true);
    let (stop, stopped) = shutdown_signal();
    let running = tokio::spawn(env.worker(config(&[10])).run(stopped));
    wait_for(
        Duration::from_secs(10),
        "the swept callback's delivery",
        || env.outbox.state(id) == CallbackState::Delivered,
    )
    .await;
    assert_eq!(env.receiver.captured().len(), 1);
    let _ = stop.send(());
    running.await.expect("the worker stops");
}
