//! Retries follow the schedule, give up when it is exhausted, and an operator retry continues
//! the attempt numbering.

use std::time::Duration;

use domain::callback::CallbackState;
use domain::ports::{AttemptResult, RetryOutcome};
use domain::Direction;

use crate::helpers::{config, TestEnv};

fn attempt_headers(env: &TestEnv) -> Vec<String> {
    env.receiver
        .captured()
        .iter()
        .map(|c| c.header("x-callback-attempt").to_string())
        .collect()
}

#[tokio::test]
async fn a_receiver_failing_twice_gets_exactly_three_attempts() {
    let env = TestEnv::new().await;
    env.receiver.fail_next("/ok", 2);
    let id = env.enqueue(Direction::Deposit, &env.receiver.url("/ok"));
    let worker = env.worker(config(&[10, 10, 10, 10]));

    env.run_until(&worker, || env.outbox.state(id) == CallbackState::Delivered)
        .await;

    assert_eq!(attempt_headers(&env), ["1", "2", "3"]);
    let row = env.outbox.row(id);
    let statuses: Vec<_> = row.history.iter().map(|a| a.http_status).collect();
    assert_eq!(statuses, [Some(500), Some(500), Some(200)]);
    let numbers: Vec<_> = row.history.iter().map(|a| a.attempt).collect();
    assert_eq!(numbers, [1, 2, 3]);
    assert_eq!(row.history[0].error.as_deref(), Some("HTTP 500"));
    assert!(matches!(row.results[0], AttemptResult::RetryAt(_)));
    assert_eq!(worker.metrics().retried.get(), 2);
    assert_eq!(worker.metrics().delivered.get(), 1);
}

#[tokio::test]
async fn gives_up_after_the_schedule_and_an_operator_retry_continues_counting() {
    let env = TestEnv::new().await;
    env.receiver.set_status("/ok", 500);
    let id = env.enqueue(Direction::Withdrawal, &env.receiver.url("/ok"));
    let worker = env.worker(config(&[10, 10]));

    env.run_until(&worker, || env.outbox.state(id) == CallbackState::Failed)
        .await;
    let row = env.outbox.row(id);
    assert_eq!(row.history.len(), 3, "two delays allow three attempts");
    assert_eq!(
        row.results.last(),
        Some(&AttemptResult::Failed(
            "gave up after 3 attempts: last error HTTP 500".into()
        ))
    );
    // Failed stays failed: nothing more is sent.
    assert_eq!(worker.run_once().await.expect("run_once"), 0);
    assert_eq!(attempt_headers(&env), ["1", "2", "3"]);

    env.receiver.set_status("/ok", 200);
    assert_eq!(env.retry(id).await, RetryOutcome::Queued);
    env.run_until(&worker, || env.outbox.state(id) == CallbackState::Delivered)
        .await;
    assert_eq!(attempt_headers(&env), ["1", "2", "3", "4"]);
    assert_eq!(env.outbox.row(id).history[3].attempt, 4);
}

#[tokio::test]
async fn a_receiver_that_never_answers_times_out_and_is_given_up() {
    let env = TestEnv::new().await;
    let id = env.enqueue(Direction::Deposit, &env.receiver.url("/hang"));
    let mut settings = config(&[10]);
    settings.timeout = Duration::from_millis(300);
    let worker = env.worker(settings);

    env.run_until(&worker, || env.outbox.state(id) == CallbackState::Failed)
        .await;

    let row = env.outbox.row(id);
    assert_eq!(row.history.len(), 2);
    for attempt in &row.history {
        assert_eq!(attempt.http_status, None);
        assert_eq!(attempt.error.as_deref(), Some("timed out after 300 ms"));
        assert!(
            attempt.duration_ms >= 250,
            "took {} ms",
            attempt.duration_ms
        );
    }
    assert_eq!(
        row.results.last(),
        Some(&AttemptResult::Failed(
            "gave up after 2 attempts: last error timed out after 300 ms".into()
        ))
    );
}

#[tokio::test]
async fn a_closed_port_is_a_retryable_connection_error() {
    let env = TestEnv::new().await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let id = env.enqueue(
        Direction::Deposit,
        &format!("http://127.0.0.1:{port}/cb?token=s3cr3t"),
    );
    let worker = env.worker(config(&[10]));

    env.run_until(&worker, || env.outbox.state(id) == CallbackState::Failed)
        .await;

    let row = env.outbox.row(id);
    assert_eq!(row.history.len(), 2);
    let error = row.history[0].error.clone().expect("an error");
    assert!(error.contains("error sending request"), "{error}");
    assert!(!error.contains("s3cr3t"), "the URL is kept out: {error}");
}
