//! The callback outbox: exclusive leases, expiry, attempts, retries.

use std::collections::HashSet;
use std::sync::Arc;

use domain::ports::{
    AttemptResult, CallbackAttempt, CallbackOutbox, CallbackState, PendingCallback,
};
use domain::{OperationId, Timestamp};
use tokio::sync::Barrier;

use crate::helpers::{each_backend, merchant, queue_callbacks};

fn attempt(
    claimed: &PendingCallback,
    at: Timestamp,
    http_status: Option<u16>,
    error: Option<&str>,
) -> CallbackAttempt {
    CallbackAttempt {
        operation_id: claimed.operation_id,
        attempt: claimed.attempt,
        at,
        duration_ms: 12,
        http_status,
        error: error.map(str::to_string),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn concurrent_claimers_never_share_a_callback() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let at = Timestamp::from_millis(1_000_000);
        let queued: HashSet<OperationId> = queue_callbacks(&t.db, &shop, 30, at)
            .await
            .into_iter()
            .collect();
        let start = Arc::new(Barrier::new(6));
        let claimers: Vec<_> = (0..6)
            .map(|i| {
                let (db, start) = (t.db.clone(), start.clone());
                tokio::spawn(async move {
                    let owner = format!("worker-{i}");
                    start.wait().await;
                    let mut mine = Vec::new();
                    loop {
                        let batch = db
                            .claim_due(&owner, at, at.plus_seconds(60), 4)
                            .await
                            .expect("claim");
                        if batch.is_empty() {
                            return mine;
                        }
                        mine.extend(batch.into_iter().map(|c| (c.operation_id, c.attempt)));
                    }
                })
            })
            .collect();
        let mut seen = Vec::new();
        for claimer in futures::future::join_all(claimers).await {
            seen.extend(claimer.expect("task"));
        }
        assert_eq!(seen.len(), 30, "every callback claimed exactly once");
        assert!(seen.iter().all(|(_, n)| *n == 1));
        let ids: HashSet<OperationId> = seen.into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids, queued);
        let not_yet_due = t.db.claim_due(
            "late",
            Timestamp::from_millis(999_999),
            at.plus_seconds(60),
            10,
        );
        assert!(not_yet_due.await.expect("claim").is_empty());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_expired_lease_is_claimable_again_and_its_old_owner_records_nothing() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let at = Timestamp::from_millis(5_000_000);
        let ids = queue_callbacks(&t.db, &shop, 1, at).await;
        let first =
            t.db.claim_due("a", at, at.plus_seconds(60), 10)
                .await
                .expect("claim");
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
        assert!(t
            .db
            .claim_due("b", at.plus_seconds(30), at.plus_seconds(90), 10)
            .await
            .expect("claim")
            .is_empty());

        let again =
            t.db.claim_due("b", at.plus_seconds(61), at.plus_seconds(121), 10)
                .await
                .expect("claim");
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].attempt, 1);
        let stale = attempt(claimed, at.plus_seconds(62), Some(200), None);
        assert!(!t
            .db
            .record_attempt("a", &stale, &AttemptResult::Delivered)
            .await
            .expect("record"));
        let done = attempt(&again[0], at.plus_seconds(62), Some(204), None);
        assert!(t
            .db
            .record_attempt("b", &done, &AttemptResult::Delivered)
            .await
            .expect("record"));
        assert!(t
            .db
            .claim_due("c", at.plus_seconds(999), at.plus_seconds(1_999), 10)
            .await
            .expect("claim")
            .is_empty());
        let listed = t.db.list(false, 10).await.expect("list");
        assert_eq!(listed.len(), 1);
        assert_eq!(
            (
                listed[0].state,
                listed[0].attempts,
                listed[0].next_attempt_at
            ),
            (CallbackState::Delivered, 1, None)
        );
        assert_eq!(t.count("SELECT COUNT(*) AS n FROM callback_attempts"), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn failures_retries_and_operator_resends_keep_counting_attempts() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let at = Timestamp::from_millis(9_000_000);
        let id = queue_callbacks(&t.db, &shop, 1, at).await[0];
        let lease = |s: i64| at.plus_seconds(s + 60);

        let first =
            t.db.claim_due("w", at, lease(0), 1)
                .await
                .expect("claim")
                .remove(0);
        let failed = attempt(&first, at, Some(500), None);
        let retry_at = AttemptResult::RetryAt(at.plus_seconds(10));
        assert!(t
            .db
            .record_attempt("w", &failed, &retry_at)
            .await
            .expect("record"));
        assert!(t
            .db
            .claim_due("w", at.plus_seconds(9), lease(9), 1)
            .await
            .expect("claim")
            .is_empty());
        let pending = t.db.list(false, 10).await.expect("list").remove(0);
        assert_eq!(pending.state, CallbackState::Pending);
        assert_eq!(pending.next_attempt_at, Some(at.plus_seconds(10)));
        assert_eq!(pending.last_error.as_deref(), Some("HTTP 500"));

        let second =
            t.db.claim_due("w", at.plus_seconds(10), lease(10), 1)
                .await
                .expect("claim")
                .remove(0);
        assert_eq!((second.attempt, second.failures_in_run), (2, 1));
        let refused = attempt(
            &second,
            at.plus_seconds(10),
            None,
            Some("connection refused"),
        );
        let give_up = AttemptResult::Failed("schedule exhausted".into());
        assert!(t
            .db
            .record_attempt("w", &refused, &give_up)
            .await
            .expect("record"));
        let failed_list = t.db.list(true, 10).await.expect("list failed");
        assert_eq!(failed_list.len(), 1);
        assert_eq!(
            (failed_list[0].operation_id, failed_list[0].attempts),
            (id, 2)
        );
        assert_eq!(
            failed_list[0].last_error.as_deref(),
            Some("schedule exhausted")
        );
        assert!(t
            .db
            .claim_due("w", at.plus_seconds(999), lease(999), 1)
            .await
            .expect("claim")
            .is_empty());

        assert!(t.db.retry(id, at.plus_seconds(20)).await.expect("retry"));
        assert!(!t
            .db
            .retry(id, at.plus_seconds(20))
            .await
            .expect("retry twice"));
        assert!(!t
            .db
            .retry(OperationId::from_uuid(uuid::Uuid::new_v4()), at)
            .await
            .expect("retry unknown"));
        assert!(t.db.list(true, 10).await.expect("list failed").is_empty());
        let third =
            t.db.claim_due("w", at.plus_seconds(20), lease(20), 1)
                .await
                .expect("claim")
                .remove(0);
        assert_eq!((third.attempt, third.failures_in_run), (3, 0));

        // A graceful shutdown hands the lease back at once.
        t.db.release("w").await.expect("release");
        let fourth =
            t.db.claim_due("v", at.plus_seconds(21), lease(21), 1)
                .await
                .expect("claim");
        assert_eq!(
            fourth.iter().map(|c| c.attempt).collect::<Vec<_>>(),
            vec![3]
        );
        assert_eq!(t.count("SELECT COUNT(*) AS n FROM callback_attempts"), 2);
    })
    .await;
}
