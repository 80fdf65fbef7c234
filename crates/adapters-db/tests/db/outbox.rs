//! The callback outbox: exclusive leases, expiry, attempts, retries.

use std::collections::HashSet;

use adapters_db::Database;
use domain::callback::{CallbackAttempt, CallbackState};
use domain::merchant::Merchant;
use domain::ports::{AttemptResult, CallbackOutbox, PendingCallback, RetryOutcome};
use domain::{OperationId, Timestamp};

use crate::helpers::{all_at_once, each_backend, merchant, queue_callbacks};

fn attempt(
    claimed: &PendingCallback,
    at: Timestamp,
    http_status: Option<u16>,
    error: Option<&str>,
) -> CallbackAttempt {
    CallbackAttempt {
        operation_id: claimed.operation_id,
        refund_id: claimed.refund_id,
        dispute: None,
        attempt: claimed.attempt,
        at,
        duration_ms: 12,
        http_status,
        error: error.map(str::to_string),
    }
}

/// A new merchant with `n` callbacks queued at `at_ms`: the merchant, the time and their
/// operation ids.
async fn queued(db: &Database, n: usize, at_ms: i64) -> (Merchant, Timestamp, Vec<OperationId>) {
    let shop = merchant(db).await;
    let at = Timestamp::from_millis(at_ms);
    let ids = queue_callbacks(db, &shop, n, at).await;
    (shop, at, ids)
}

/// What `owner` claims at `at`, leased until `until`, at most `limit`.
async fn claim(
    db: &Database,
    owner: &str,
    at: Timestamp,
    until: Timestamp,
    limit: u32,
) -> Vec<PendingCallback> {
    db.claim_due(owner, at, until, limit).await.expect("claim")
}

/// Whether `owner`'s record of `attempt` with `result` was taken.
async fn record(
    db: &Database,
    owner: &str,
    attempt: &CallbackAttempt,
    result: AttemptResult,
) -> bool {
    db.record_attempt(owner, attempt, &result)
        .await
        .expect("record")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn concurrent_claimers_never_share_a_callback() {
    each_backend(|t| async move {
        let (_, at, ids) = queued(&t.db, 30, 1_000_000).await;
        let queued: HashSet<OperationId> = ids.into_iter().collect();
        let claimers = all_at_once(6, |i| {
            let db = t.db.clone();
            async move {
                let owner = format!("worker-{i}");
                let mut mine = Vec::new();
                loop {
                    let batch = claim(&db, &owner, at, at.plus_seconds(60), 4).await;
                    if batch.is_empty() {
                        return mine;
                    }
                    mine.extend(batch.into_iter().map(|c| (c.operation_id, c.attempt)));
                }
            }
        })
        .await;
        let seen: Vec<_> = claimers.into_iter().flatten().collect();
        assert_eq!(seen.len(), 30, "every callback claimed exactly once");
        assert!(seen.iter().all(|(_, n)| *n == 1));
        let ids: HashSet<OperationId> = seen.into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids, queued);
        let early = Timestamp::from_millis(999_999);
        let not_yet_due = claim(&t.db, "late", early, at.plus_seconds(60), 10).await;
        assert!(not_yet_due.is_empty());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_expired_lease_is_claimable_again_and_its_old_owner_records_nothing() {
    each_backend(|t| async move {
        let (shop, at, ids) = queued(&t.db, 1, 5_000_000).await;
        let first = claim(&t.db, "a", at, at.plus_seconds(60), 10).await;
        assert_eq!(first.len(), 1);
        let claimed = &first[0];
        assert_eq!(
            (
                claimed.operation_id,
                claimed.attempt,
                claimed.failures_in_run
            ),
            (ids[0], 1, 0)
        );
        assert_eq!(claimed.merchant_id, shop.id);
        assert!(claimed.body.contains(&ids[0].to_string()));
        let (during, until) = (at.plus_seconds(30), at.plus_seconds(90));
        assert!(claim(&t.db, "b", during, until, 10).await.is_empty());

        let (expired, until) = (at.plus_seconds(61), at.plus_seconds(121));
        let again = claim(&t.db, "b", expired, until, 10).await;
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].attempt, 1);
        let stale = attempt(claimed, at.plus_seconds(62), Some(200), None);
        assert!(!record(&t.db, "a", &stale, AttemptResult::Delivered).await);
        let done = attempt(&again[0], at.plus_seconds(62), Some(204), None);
        assert!(record(&t.db, "b", &done, AttemptResult::Delivered).await);
        let (later, until) = (at.plus_seconds(999), at.plus_seconds(1_999));
        assert!(claim(&t.db, "c", later, until, 10).await.is_empty());
        let listed = t.callbacks_in(None).await;
        assert_eq!(listed.len(), 1);
        assert_eq!(
            (
                listed[0].state,
                listed[0].attempts,
                listed[0].next_attempt_at
            ),
            (CallbackState::Delivered, 1, None)
        );
        assert_eq!(t.rows("callback_attempts"), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn failures_retries_and_operator_resends_keep_counting_attempts() {
    each_backend(|t| async move {
        let (_, at, ids) = queued(&t.db, 1, 9_000_000).await;
        let id = ids[0];
        // What `owner` claims `s` seconds after the callback was queued, one at most.
        let claim_at = |owner: &'static str, s: i64| {
            let db = t.db.clone();
            async move { claim(&db, owner, at.plus_seconds(s), at.plus_seconds(s + 60), 1).await }
        };

        let first = claim_at("w", 0).await.remove(0);
        let failed = attempt(&first, at, Some(500), None);
        let retry_at = AttemptResult::RetryAt(at.plus_seconds(10));
        assert!(record(&t.db, "w", &failed, retry_at).await);
        assert!(claim_at("w", 9).await.is_empty());
        let pending = t.callbacks_in(None).await.remove(0);
        assert_eq!(pending.state, CallbackState::Pending);
        assert_eq!(pending.next_attempt_at, Some(at.plus_seconds(10)));
        assert_eq!(pending.last_error.as_deref(), Some("HTTP 500"));

        let second = claim_at("w", 10).await.remove(0);
        assert_eq!((second.attempt, second.failures_in_run), (2, 1));
        let refused = attempt(
            &second,
            at.plus_seconds(10),
            None,
            Some("connection refused"),
        );
        let give_up = AttemptResult::Failed("schedule exhausted".into());
        assert!(record(&t.db, "w", &refused, give_up).await);
        let failed_list = t.callbacks_in(Some(CallbackState::Failed)).await;
        assert_eq!(failed_list.len(), 1);
        assert_eq!(
            (failed_list[0].operation_id, failed_list[0].attempts),
            (id, 2)
        );
        assert_eq!(
            failed_list[0].last_error.as_deref(),
            Some("schedule exhausted")
        );
        assert!(claim_at("w", 999).await.is_empty());

        assert_eq!(
            t.db.retry(id.as_uuid(), at.plus_seconds(20))
                .await
                .expect("retry"),
            RetryOutcome::Queued
        );
        assert_eq!(
            t.db.retry(id.as_uuid(), at.plus_seconds(20))
                .await
                .expect("retry twice"),
            RetryOutcome::NotFailed
        );
        assert_eq!(
            t.db.retry(uuid::Uuid::new_v4(), at)
                .await
                .expect("retry unknown"),
            RetryOutcome::NotFailed
        );
        assert!(t.callbacks_in(Some(CallbackState::Failed)).await.is_empty());
        let third = claim_at("w", 20).await.remove(0);
        assert_eq!((third.attempt, third.failures_in_run), (3, 0));

        // A graceful shutdown hands the lease back at once.
        t.db.release("w").await.expect("release");
        let fourth = claim_at("v", 21).await;
        assert_eq!(
            fourth.iter().map(|c| c.attempt).collect::<Vec<_>>(),
            vec![3]
        );
        assert_eq!(t.rows("callback_attempts"), 2);
    })
    .await;
}
