//! A refund's callback: queued with its final status beside its deposit's own, claimed and
//! retried by the refund's id, and shown with the deposit's story.

use domain::callback::{CallbackAttempt, CallbackState};
use domain::ledger::moves_on_refund_finish;
use domain::operation::Outcome;
use domain::ports::{
    AttemptResult, CallbackOutbox, PendingCallback, RefundCompletion, RefundStore, RetryOutcome,
};
use domain::refund::Refund;
use domain::service::callbacks::refund_callback_for;
use domain::testkit::DebugCallbackFormat;
use domain::{Direction, Timestamp};

use crate::helpers::{
    declined, each_backend, finish_refund, now, refunded, shop_with_deposit, REFUND_CALLBACK_URL,
};

fn attempt(claimed: &PendingCallback, at: Timestamp, http_status: u16) -> CallbackAttempt {
    CallbackAttempt {
        operation_id: claimed.operation_id,
        refund_id: claimed.refund_id,
        dispute: None,
        attempt: claimed.attempt,
        at,
        duration_ms: 7,
        http_status: Some(http_status),
        error: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refunds_callback_sits_beside_its_deposits_own_and_is_retried_by_its_id() {
    each_backend(|t| async move {
        let (shop, deposit) = shop_with_deposit(&t.db).await;
        let refund = refunded(&t.db, &deposit, 40_00).await;
        assert_eq!(
            t.rows("callback_outbox"),
            1,
            "nothing queued while processing"
        );
        let done = finish_refund(&t.db, &refund, &Outcome::Approve).await;
        let id = deposit.id();
        assert_eq!(
            t.rows_where("callback_outbox", &format!("operation_id = '{id}'")),
            2
        );

        let at = now().plus_seconds(1);
        let mut claimed =
            t.db.claim_due("w", at, at.plus_seconds(60), 10)
                .await
                .expect("claim");
        assert_eq!(claimed.len(), 2, "{claimed:?}");
        claimed.sort_by_key(|c| c.refund_id.is_some());
        let (own, theirs) = (&claimed[0], &claimed[1]);
        assert_eq!((own.operation_id, own.refund_id), (id, None));
        assert_eq!(
            (theirs.operation_id, theirs.refund_id),
            (id, Some(refund.id))
        );
        assert_eq!(theirs.direction, Direction::Deposit);
        assert_eq!(theirs.merchant_id, shop.id);
        assert_eq!(theirs.url, REFUND_CALLBACK_URL);
        let expected = refund_callback_for(&done, &DebugCallbackFormat).expect("callback");
        // The deposit's own callback was the first of the operation: the refund's is number 2.
        assert_eq!(theirs.body, expected.body.with_sequence(2));
        assert_eq!((theirs.attempt, theirs.failures_in_run), (1, 0));

        // The deposit's is delivered, the refund's given up: each its own row.
        let delivered = AttemptResult::Delivered;
        assert!(t
            .db
            .record_attempt("w", &attempt(own, at, 200), &delivered)
            .await
            .expect("r"));
        let give_up = AttemptResult::Failed("schedule exhausted".into());
        assert!(t
            .db
            .record_attempt("w", &attempt(theirs, at, 500), &give_up)
            .await
            .expect("r"));
        let failed = t.callbacks_in(Some(CallbackState::Failed)).await;
        assert_eq!(failed.len(), 1);
        assert_eq!(
            (failed[0].operation_id, failed[0].refund_id),
            (id, Some(refund.id))
        );
        let all = t.callbacks_in(None).await;
        assert_eq!(all.len(), 2);

        // An operation's id retries its own callback (delivered: nothing to do); a refund's
        // id its refund's.
        let later = at.plus_seconds(5);
        let retry = |key: uuid::Uuid| {
            let db = t.db.clone();
            async move { db.retry(key, later).await.expect("retry") }
        };
        assert_eq!(retry(id.as_uuid()).await, RetryOutcome::NotFailed);
        assert_eq!(retry(refund.id.as_uuid()).await, RetryOutcome::Queued);
        assert_eq!(
            retry(refund.id.as_uuid()).await,
            RetryOutcome::NotFailed,
            "twice"
        );
        let again =
            t.db.claim_due("v", later, later.plus_seconds(60), 10)
                .await
                .expect("claim");
        assert_eq!(again.len(), 1);
        assert_eq!((again[0].refund_id, again[0].attempt), (Some(refund.id), 2));
        assert!(t
            .db
            .record_attempt(
                "v",
                &attempt(&again[0], later, 204),
                &AttemptResult::Delivered
            )
            .await
            .expect("record"));

        let story = t.callbacks_of(id).await;
        assert_eq!(story.len(), 2);
        assert_eq!((story[0].refund_id, story[0].attempts), (None, 1));
        assert_eq!(
            (story[1].refund_id, story[1].attempts),
            (Some(refund.id), 2)
        );
        assert_eq!(story[1].state, CallbackState::Delivered);
        assert_eq!(story[1].url, REFUND_CALLBACK_URL);
        let tries: Vec<_> = story[1]
            .deliveries
            .iter()
            .map(|d| (d.operation_id, d.refund_id, d.attempt, d.http_status))
            .collect();
        assert_eq!(
            tries,
            vec![
                (id, Some(refund.id), 1, Some(500)),
                (id, Some(refund.id), 2, Some(204))
            ]
        );
        assert_eq!(story[0].deliveries.len(), 1);
        assert_eq!(story[0].deliveries[0].refund_id, None);
        assert_eq!(t.rows("callback_attempts"), 3);
    })
    .await;
}

/// Finishes `refund` with `outcome` at `at` (its callback queued then).
async fn finish_at(t: &crate::helpers::TestDb, refund: &Refund, outcome: &Outcome, at: Timestamp) {
    let done = refund.finish(outcome, at).expect("processing");
    let completion = RefundCompletion {
        moves: moves_on_refund_finish(&done),
        callback: refund_callback_for(&done, &DebugCallbackFormat),
        refund: done,
    };
    t.db.finish_refund(&completion).await.expect("finish");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deposits_story_shows_its_own_callback_then_its_refunds_as_queued() {
    each_backend(|t| async move {
        let (_, deposit) = shop_with_deposit(&t.db).await;
        let first = refunded(&t.db, &deposit, 10_00).await;
        let second = refunded(&t.db, &deposit, 20_00).await;
        let third = refunded(&t.db, &deposit, 30_00).await;
        let at = now().plus_seconds(10);
        // The second finishes first; the other two at one millisecond (ties by id).
        finish_at(&t, &second, &declined(), at).await;
        finish_at(&t, &first, &Outcome::Approve, at.plus_millis(1)).await;
        finish_at(&t, &third, &Outcome::Approve, at.plus_millis(1)).await;

        let story = t.callbacks_of(deposit.id()).await;
        let order: Vec<_> = story.iter().map(|c| c.refund_id).collect();
        let (a, b) = (first.id.min(third.id), first.id.max(third.id));
        assert_eq!(order, vec![None, Some(second.id), Some(a), Some(b)]);
        assert!(story.iter().all(|c| c.deliveries.is_empty()));

        let ledger = t.ledger_of(deposit.id()).await;
        assert_eq!(
            ledger.len(),
            7,
            "the credit, three holds, a release and two payments"
        );
        let second_entries = ledger
            .iter()
            .filter(|e| e.refund_id == Some(second.id))
            .count();
        assert_eq!(second_entries, 2);
        t.assert_ledger_verifies().await;
    })
    .await;
}
