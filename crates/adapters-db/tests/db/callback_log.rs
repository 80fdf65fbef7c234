//! The merchant's callbacks: numbered per operation as they are queued (a refund's after its
//! deposit's), read newest first a page at a time with their attempts, one sent again by its
//! id, the failed ones since a time replayed; and the migration that numbers stored ones.

use domain::callback::{CallbackAttempt, CallbackState};
use domain::callback_log::{
    CallbackKind, CallbackOwner, CallbackQuery, LoggedCallback, ReplayState, Requeue,
};
use domain::operation::Outcome;
use domain::ports::{AttemptResult, CallbackLog, CallbackOutbox, PendingCallback};
use domain::{Direction, Timestamp};

use crate::helpers::{
    approved_deposit, each_backend, finish_refund, merchant, now, refunded, shop_with_deposit,
    TestDb,
};

/// Long enough that two callbacks queued on either side of it have different times.
async fn a_moment() {
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
}
use crate::migrations::{assert_migrates_again, assert_reverts_through, CALLBACK_SEQUENCE};

fn owner(shop: &domain::merchant::Merchant, direction: Direction) -> CallbackOwner {
    CallbackOwner {
        merchant_id: shop.id.clone(),
        direction,
    }
}

fn query(owner: CallbackOwner, limit: u32) -> CallbackQuery {
    CallbackQuery {
        owner,
        state: None,
        since: None,
        after: None,
        limit,
    }
}

async fn page(t: &TestDb, query: &CallbackQuery) -> Vec<LoggedCallback> {
    t.db.callbacks(query).await.expect("a page")
}

/// Claims every due callback and records `result` for each, with HTTP `status`.
async fn attempt_all(t: &TestDb, at: Timestamp, status: u16, result: AttemptResult) {
    let claimed: Vec<PendingCallback> =
        t.db.claim_due("w", at, at.plus_seconds(60), 100)
            .await
            .expect("claim");
    for callback in &claimed {
        let tried = CallbackAttempt {
            operation_id: callback.operation_id,
            refund_id: callback.refund_id,
            dispute: callback.dispute,
            attempt: callback.attempt,
            at,
            duration_ms: 3,
            http_status: Some(status),
            error: None,
        };
        assert!(t
            .db
            .record_attempt("w", &tried, &result)
            .await
            .expect("record"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deposit_and_its_refund_are_numbered_read_newest_first_and_paged() {
    each_backend(|t| async move {
        let (shop, deposit) = shop_with_deposit(&t.db).await;
        let refund = refunded(&t.db, &deposit, 40_00).await;
        a_moment().await;
        finish_refund(&t.db, &refund, &Outcome::Approve).await;
        let at = now().plus_seconds(1);
        attempt_all(&t, at, 500, AttemptResult::Failed("gave up".into())).await;

        let mine = owner(&shop, Direction::Deposit);
        let all = page(&t, &query(mine.clone(), 10)).await;
        let seen: Vec<_> = all
            .iter()
            .map(|c| (c.kind, c.sequence, c.refund_id, c.state))
            .collect();
        assert_eq!(
            seen,
            [
                (
                    CallbackKind::Refund,
                    2,
                    Some(refund.id),
                    CallbackState::Failed
                ),
                (
                    CallbackKind::Operation(Direction::Deposit),
                    1,
                    None,
                    CallbackState::Failed
                ),
            ],
            "newest first"
        );
        assert_eq!(all[1].callback_id, deposit.id().as_uuid());
        assert_eq!(all[0].callback_id, refund.id.as_uuid());
        assert_eq!(all[0].attempts.len(), 1);
        assert_eq!(all[0].attempts[0].http_status, Some(500));

        // One at a time: the first page has one more behind it, the cursor finds it.
        let first = page(&t, &query(mine.clone(), 1)).await;
        assert_eq!(
            first.len(),
            2,
            "one more than the limit says there is a next"
        );
        let next = CallbackQuery {
            after: Some(first[0].cursor()),
            ..query(mine.clone(), 1)
        };
        let second = page(&t, &next).await;
        assert_eq!(second.len(), 1);
        assert_eq!(second[0].callback_id, deposit.id().as_uuid());

        // Another direction's and another merchant's are not these.
        assert!(page(&t, &query(owner(&shop, Direction::Withdrawal), 10))
            .await
            .is_empty());
        let other = merchant(&t.db).await;
        assert!(page(&t, &query(owner(&other, Direction::Deposit), 10))
            .await
            .is_empty());
        let delivered = CallbackQuery {
            state: Some(CallbackState::Delivered),
            ..query(mine, 10)
        };
        assert!(page(&t, &delivered).await.is_empty());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_retry_requeues_one_of_the_owners_callbacks_and_a_replay_exactly_the_failed_since() {
    each_backend(|t| async move {
        let (shop, old) = shop_with_deposit(&t.db).await;
        let at = now().plus_seconds(1);
        attempt_all(&t, at, 500, AttemptResult::Failed("gave up".into())).await;
        let since = Timestamp::from_millis(now().millis() + 50);
        // Queued after `since`: two failed, one delivered.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let fresh = approved_deposit(&t.db, &shop, 10_00).await;
        let also = approved_deposit(&t.db, &shop, 10_00).await;
        let later = now().plus_seconds(1);
        attempt_all(&t, later, 500, AttemptResult::Failed("gave up".into())).await;
        let delivered = approved_deposit(&t.db, &shop, 10_00).await;
        attempt_all(&t, later, 204, AttemptResult::Delivered).await;

        let mine = owner(&shop, Direction::Deposit);
        let other = owner(&merchant(&t.db).await, Direction::Deposit);
        let one = Requeue::One(old.id().as_uuid());
        assert_eq!(t.db.requeue(&other, &one, later).await.expect("r"), None);
        let withdrawals = owner(&shop, Direction::Withdrawal);
        assert_eq!(
            t.db.requeue(&withdrawals, &one, later).await.expect("r"),
            None
        );

        let replay = Requeue::Since {
            since,
            state: ReplayState::Failed,
        };
        assert_eq!(
            t.db.requeue(&mine, &replay, later).await.expect("r"),
            Some(2)
        );
        let due: Vec<_> =
            t.db.claim_due("v", later, later.plus_seconds(60), 100)
                .await
                .expect("claim")
                .into_iter()
                .map(|c| (c.operation_id, c.attempt, c.failures_in_run))
                .collect();
        let mut expected = vec![(fresh.id(), 2, 0), (also.id(), 2, 0)];
        let mut got = due.clone();
        expected.sort_by_key(|e| e.0.to_string());
        got.sort_by_key(|e| e.0.to_string());
        assert_eq!(got, expected, "exactly the failed ones queued since");
        t.db.release("v").await.expect("release");

        // One by its id, whatever its state: the delivered one goes again too.
        assert_eq!(t.db.requeue(&mine, &one, later).await.expect("r"), Some(1));
        let delivered_again = Requeue::One(delivered.id().as_uuid());
        assert_eq!(
            t.db.requeue(&mine, &delivered_again, later)
                .await
                .expect("r"),
            Some(1)
        );
        // While an attempt is under way (leased), it is left alone.
        let leased =
            t.db.claim_due("v", later, later.plus_seconds(60), 100)
                .await
                .expect("claim");
        assert_eq!(leased.len(), 4);
        assert_eq!(t.db.requeue(&mine, &one, later).await.expect("r"), Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_migration_numbers_stored_callbacks_in_the_order_they_were_queued() {
    each_backend(|t| async move {
        let (shop, deposit) = shop_with_deposit(&t.db).await;
        let refund = refunded(&t.db, &deposit, 40_00).await;
        a_moment().await;
        finish_refund(&t.db, &refund, &Outcome::Approve).await;
        assert_reverts_through(&t.url, CALLBACK_SEQUENCE).await;
        assert_migrates_again(&t);

        let numbered: Vec<_> = page(&t, &query(owner(&shop, Direction::Deposit), 10))
            .await
            .iter()
            .map(|c| (c.kind, c.sequence))
            .collect();
        assert_eq!(
            numbered,
            [
                (CallbackKind::Refund, 2),
                (CallbackKind::Operation(Direction::Deposit), 1)
            ]
        );
        // The next one queued goes on from the stored count.
        let second = refunded(&t.db, &deposit, 10_00).await;
        a_moment().await;
        finish_refund(&t.db, &second, &Outcome::Approve).await;
        let newest = page(&t, &query(owner(&shop, Direction::Deposit), 1)).await;
        assert_eq!(
            (newest[0].refund_id, newest[0].sequence),
            (Some(second.id), 3)
        );
    })
    .await;
}
