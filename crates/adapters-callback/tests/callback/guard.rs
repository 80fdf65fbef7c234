//! Private targets are refused at delivery, at once, without a request.

use domain::callback::CallbackState;
use domain::ports::AttemptResult;
use domain::Direction;

use crate::helpers::{config, TestEnv};

#[tokio::test]
async fn loopback_targets_are_refused_at_once_and_never_contacted() {
    let env = TestEnv::new().await;
    let port = env.receiver.port;
    let targets = [
        (format!("http://127.0.0.1:{port}/ok"), "127.0.0.1"),
        (format!("http://localhost:{port}/ok"), "localhost"),
        (
            format!("http://[::ffff:127.0.0.1]:{port}/ok"),
            "[::ffff:7f00:1]",
        ),
    ];
    let ids: Vec<_> = targets
        .iter()
        .map(|(url, _)| env.enqueue(Direction::Deposit, url))
        .collect();
    let mut settings = config(&[10, 10, 10]);
    settings.allow_private = false;
    let worker = env.worker(settings);

    env.run_until(&worker, || {
        env.outbox.count(CallbackState::Failed) == ids.len()
    })
    .await;

    for (id, (_, host)) in ids.iter().zip(&targets) {
        let row = env.outbox.row(*id);
        assert_eq!(row.history.len(), 1, "{host}: not retried");
        assert_eq!(row.history[0].http_status, None);
        assert_eq!(
            row.results,
            vec![AttemptResult::Failed(format!(
                "refused target: {host} resolves to a private address"
            ))]
        );
    }
    assert!(
        env.receiver.captured().is_empty(),
        "a refused target was contacted"
    );
    assert_eq!(worker.run_once().await.expect("run_once"), 0);
}

#[tokio::test]
async fn loopback_targets_are_allowed_when_private_is_allowed() {
    let env = TestEnv::new().await;
    let port = env.receiver.port;
    let id = env.enqueue(Direction::Deposit, &format!("http://localhost:{port}/ok"));
    let worker = env.worker(config(&[10]));

    env.run_until(&worker, || env.outbox.state(id) == CallbackState::Delivered)
        .await;
    assert_eq!(env.receiver.hits("/ok"), 1);
}
