//! The refunds migration: the callback outbox rekeyed and the ledger widened in place, keeping
//! every row; its revert restores the old shape, and refuses a database that has refunds.

use domain::callback::CallbackState;
use domain::ledger::EntryKind;
use domain::ports::{CallbackOutbox, RefundStore, RetryOutcome};
use domain::{OperationId, Timestamp};

use crate::helpers::{
    approved_deposit, each_backend, merchant, queue_callbacks, refunded, FIRST_VERSION_SHOP,
};
use crate::migrations::{
    assert_migrates_again, assert_revert_refused, assert_reverts_through, recorded_in, Recorded,
    PROCESSES, REFUNDS, SECRETS,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_refunds_migration_keeps_existing_callbacks_and_ledger_entries() {
    each_backend(|t| async move {
        assert_reverts_through(&t.url, REFUNDS).await;
        // Rows as the version before refunds wrote them: an approved deposit, its credit and
        // its callback, given up after one attempt.
        let id = OperationId::from_uuid(uuid::Uuid::new_v4());
        t.exec(&format!(
            "{FIRST_VERSION_SHOP}; \
             INSERT INTO operations (id, merchant_id, direction, method, status, amount, \
             currency, user_id, callback_url, route_id, created_at, updated_at) VALUES \
             ('{id}', 'shop', 'deposit', 'card', 1, 100000, 'RUB', 'user-1', \
             'https://shop.example/cb', 1, 0, 1000); \
             INSERT INTO balances (merchant_id, currency, available, held) \
             VALUES ('shop', 'RUB', 100000, 0); \
             INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, \
             operation_id, created_at) VALUES ('shop', 'RUB', 'deposit_approved', 100000, 0, \
             '{id}', 1000); \
             INSERT INTO callback_outbox (operation_id, merchant_id, direction, url, body, \
             state, attempts, failures_in_run, last_error, created_at, updated_at) VALUES \
             ('{id}', 'shop', 'deposit', 'https://shop.example/cb', '{{}}', 'failed', 1, 1, \
             'gave up', 1000, 2000); \
             INSERT INTO callback_attempts (operation_id, attempt, at, duration_ms, \
             http_status, error) VALUES ('{id}', 1, 2000, 15, 500, NULL)"
        ));

        t.db.migrate().expect("upgrade");
        assert_eq!(recorded_in(&t), Recorded::all());
        let keyed = format!("id = '{id}' AND operation_id = '{id}' AND refund_id IS NULL");
        assert_eq!(t.rows_where("callback_outbox", &keyed), 1);
        assert_eq!(
            t.rows_where("callback_attempts", &format!("callback_id = '{id}'")),
            1
        );

        let story = t.callbacks_of(id).await;
        assert_eq!(story.len(), 1);
        let kept = &story[0];
        assert_eq!(
            (kept.refund_id, kept.state, kept.attempts),
            (None, CallbackState::Failed, 1)
        );
        assert_eq!(kept.last_error.as_deref(), Some("gave up"));
        assert_eq!(kept.deliveries.len(), 1);
        assert_eq!(kept.deliveries[0].http_status, Some(500));
        let at = Timestamp::from_millis(3_000);
        assert_eq!(
            t.db.retry(id.as_uuid(), at).await.expect("retry"),
            RetryOutcome::Queued
        );
        let claimed =
            t.db.claim_due("w", at, at.plus_seconds(60), 10)
                .await
                .expect("claim");
        assert_eq!(claimed.len(), 1);
        assert_eq!((claimed[0].operation_id, claimed[0].refund_id), (id, None));
        assert_eq!(claimed[0].attempt, 2);

        // The old entry is kept, and new ones (a refund's) come after it.
        let deposit = crate::helpers::TestDb::db_get(&t, id).await;
        let refund = refunded(&t.db, &deposit, 400_00).await;
        let entries = t.ledger_of(id).await;
        let seen: Vec<_> = entries.iter().map(|e| (e.kind, e.refund_id)).collect();
        assert_eq!(
            seen,
            vec![
                (EntryKind::DepositApproved, None),
                (EntryKind::RefundHold, Some(refund.id))
            ]
        );
        assert!(entries[0].id < entries[1].id);
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_refunds_migration_reverts_to_the_old_shape_unless_refunds_were_recorded() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let ids = queue_callbacks(&t.db, &shop, 2, Timestamp::from_millis(1_000)).await;
        let first = ids[0];
        t.db.claim_due(
            "w",
            Timestamp::from_millis(1_000),
            Timestamp::from_millis(9_000),
            1,
        )
        .await
        .expect("claim");

        // Without refunds it reverts: the outbox keyed by operation again, its rows kept.
        assert_reverts_through(&t.url, REFUNDS).await;
        assert_eq!(recorded_in(&t), Recorded::through(PROCESSES));
        assert!(t.try_exec("SELECT id FROM refunds").is_err());
        assert!(t.try_exec("SELECT refund_id FROM ledger").is_err());
        assert!(t.try_exec("SELECT id FROM callback_outbox").is_err());
        assert!(t
            .try_exec("SELECT callback_id FROM callback_attempts")
            .is_err());
        assert_eq!(t.rows("callback_outbox"), 2);
        assert_eq!(t.rows_where("callback_outbox", "lease_owner = 'w'"), 1);
        assert_eq!(
            t.rows_where("callback_outbox", &format!("operation_id = '{first}'")),
            1
        );

        assert_migrates_again(&t);
        let story = t.callbacks_of(first).await;
        assert_eq!(story.len(), 1);

        // With a refund recorded, the revert is refused and changes nothing.
        let deposit = approved_deposit(&t.db, &shop, 100_00).await;
        let refund = refunded(&t.db, &deposit, 10_00).await;
        assert_reverts_through(&t.url, SECRETS).await;
        assert_revert_refused(&t, REFUNDS, "no_refunds_recorded", "refunds are recorded").await;
        assert_eq!(t.rows("callback_outbox"), 3);
        t.db.migrate().expect("upgrade again");
        assert_eq!(t.db.refund(refund.id).await.expect("read"), Some(refund));
        t.assert_ledger_verifies().await;
    })
    .await;
}
