//! One signed delivery per callback, with the right secret and headers; redirects refused.

use domain::callback::CallbackState;
use domain::merchant::Secret;
use domain::ports::AttemptResult;
use domain::signature::verify;
use domain::{Direction, MerchantId};

use crate::helpers::{config, TestEnv, DEPOSIT_SECRET, WITHDRAWAL_SECRET};

#[tokio::test]
async fn delivers_each_callback_once_signed_with_the_secret_of_its_direction() {
    let env = TestEnv::new().await;
    let deposit = env.enqueue(Direction::Deposit, &env.receiver.url("/ok"));
    let withdrawal = env.enqueue(Direction::Withdrawal, &env.receiver.url("/ok"));
    let worker = env.worker(config(&[10]));

    env.run_until(&worker, || env.outbox.count(CallbackState::Delivered) == 2)
        .await;
    assert_eq!(
        worker.run_once().await.expect("run_once"),
        0,
        "nothing left"
    );

    let captured = env.receiver.captured();
    assert_eq!(captured.len(), 2, "exactly one request per callback");
    for (id, direction, right, wrong) in [
        (
            deposit,
            Direction::Deposit,
            DEPOSIT_SECRET,
            WITHDRAWAL_SECRET,
        ),
        (
            withdrawal,
            Direction::Withdrawal,
            WITHDRAWAL_SECRET,
            DEPOSIT_SECRET,
        ),
    ] {
        let row = env.outbox.row(id);
        let request = captured
            .iter()
            .find(|c| c.body == row.body.as_bytes())
            .expect("the exact body arrived");
        let signature = request.header("x-signature");
        assert_eq!(request.signed_with(right), Ok(()), "{direction:?}");
        assert!(
            !verify(&Secret::new(wrong), &request.body, signature),
            "{direction:?}"
        );
        assert_eq!(signature.len(), 64);
        // The Standard Webhooks headers: the callback's id, the same seconds, one signature
        // (one live secret); a changed body no longer fits it.
        assert_eq!(request.header("webhook-id"), id.to_string());
        assert_eq!(
            request.header("webhook-timestamp"),
            request.header("x-callback-timestamp")
        );
        assert_eq!(request.standard_signatures().len(), 1);
        let mut tampered = request.clone();
        tampered.body.push(b' ');
        assert!(tampered.standard_signed_with(right).is_err());
        assert!(request.standard_signed_with(wrong).is_err());
        assert_eq!(request.header("merchant-id"), "m1");
        assert_eq!(request.header("content-type"), "application/json");
        assert_eq!(request.header("x-callback-attempt"), "1");

        assert_eq!(row.results, vec![AttemptResult::Delivered]);
        assert_eq!(row.history.len(), 1);
        assert_eq!(row.history[0].attempt, 1);
        assert_eq!(row.history[0].http_status, Some(200));
        assert_eq!(row.history[0].error, None);
    }
    assert_eq!(worker.metrics().delivered.get(), 2);
}

#[tokio::test]
async fn a_redirect_is_a_failure_and_is_not_followed() {
    let env = TestEnv::new().await;
    let id = env.enqueue(Direction::Deposit, &env.receiver.url("/redirect"));
    let worker = env.worker(config(&[]));

    env.run_until(&worker, || env.outbox.state(id) == CallbackState::Failed)
        .await;

    let row = env.outbox.row(id);
    assert_eq!(row.history.len(), 1);
    assert_eq!(row.history[0].http_status, Some(302));
    assert_eq!(
        row.results,
        vec![AttemptResult::Failed(
            "gave up after 1 attempt: last error HTTP 302".into()
        )]
    );
    assert_eq!(env.receiver.hits("/redirect"), 1);
    assert_eq!(env.receiver.hits("/ok"), 0, "the redirect was followed");
}

#[tokio::test]
async fn an_unknown_merchant_fails_at_once_without_a_request() {
    let env = TestEnv::new().await;
    let unknown = MerchantId::parse("m-gone").expect("id");
    let url = env.receiver.url("/ok");
    let id = env.enqueue_for(&unknown, Direction::Withdrawal, &url, env.now());
    let worker = env.worker(config(&[10, 10]));

    env.run_until(&worker, || env.outbox.count(CallbackState::Failed) == 1)
        .await;

    assert_eq!(
        env.outbox.row(id).results,
        vec![AttemptResult::Failed("merchant m-gone not found".into())]
    );
    assert!(env.receiver.captured().is_empty());
    assert_eq!(worker.metrics().failed.get(), 1);
}
