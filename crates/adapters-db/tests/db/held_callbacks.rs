//! Held callbacks: a claimed callback of a disabled merchant waits, uncounted, until an enable
//! releases it; the hold re-reads the merchant, ordered against the enable.

use adapters_db::Database;
use domain::callback::{CallbackAttempt, CallbackState};
use domain::merchant::Merchant;
use domain::ports::{
    AttemptResult, CallbackOutbox, ConsoleStore, HoldOutcome, OperatorStore, PendingCallback,
    RetryOutcome,
};
use domain::{OperationId, Timestamp};

use crate::helpers::{all_at_once, each_backend, merchant, queue_callbacks, TestDb};
use crate::migrations::{
    assert_migrates_again, assert_revert_refused, recorded_in, revert_newest_async,
    revert_through_async, reverts_through, Recorded, DISCREPANCY_RESOLUTION, HELD_CALLBACKS,
};

/// A merchant with `n` callbacks due at `at`, claimed by `owner`, then disabled: the
/// merchant and the claimed callbacks (in claim order).
async fn claimed_then_disabled(
    db: &Database,
    n: usize,
    at: Timestamp,
    owner: &str,
) -> (Merchant, Vec<PendingCallback>) {
    let shop = merchant(db).await;
    queue_callbacks(db, &shop, n, at).await;
    // Earlier callbacks still due are claimed too; only this merchant's are of interest.
    let claimed: Vec<PendingCallback> = db
        .claim_due(owner, at, at.plus_seconds(60), 1_000)
        .await
        .expect("claim")
        .into_iter()
        .filter(|c| c.merchant_id == shop.id)
        .collect();
    assert_eq!(claimed.len(), n);
    assert!(db.disable_merchant(&shop.id).await.expect("disable"));
    (shop, claimed)
}

/// The stored state, attempts, failures, due time and lease owner of callback `id`.
fn stored(t: &TestDb, id: OperationId) -> (i64, i64, i64, i64, i64) {
    let one = |column: &str| {
        t.count(&format!(
            "SELECT CAST({column} AS BIGINT) AS n FROM callback_outbox WHERE id = '{id}'"
        ))
    };
    (
        t.rows_where(
            "callback_outbox",
            &format!("id = '{id}' AND state = 'held'"),
        ),
        one("attempts"),
        one("failures_in_run"),
        one("next_attempt_at"),
        t.rows_where(
            "callback_outbox",
            &format!("id = '{id}' AND lease_owner IS NOT NULL"),
        ),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_held_callback_spends_nothing_and_goes_out_on_its_schedule_after_the_enable() {
    each_backend(|t| async move {
        let at = Timestamp::from_millis(5_000_000);
        let (shop, claimed) = claimed_then_disabled(&t.db, 1, at, "w").await;
        let callback = &claimed[0];
        let later = at.plus_seconds(3);

        assert_eq!(
            t.db.hold("w", callback, later).await.expect("hold"),
            HoldOutcome::Held
        );
        // Held: no attempt made or counted, its due time kept, its lease ended.
        assert_eq!(stored(&t, callback.operation_id), (1, 0, 0, at.millis(), 0));
        assert_eq!(t.rows("callback_attempts"), 0);
        let far = at.plus_seconds(3_600);
        assert!(t
            .db
            .claim_due("v", far, far.plus_seconds(60), 10)
            .await
            .expect("claim")
            .is_empty());
        let listed = t.callbacks_in(Some(CallbackState::Held)).await;
        assert_eq!(listed.len(), 1);
        assert_eq!(
            (listed[0].operation_id, listed[0].state, listed[0].attempts),
            (callback.operation_id, CallbackState::Held, 0)
        );
        assert_eq!(t.db.health(at).await.expect("health").callbacks_held, 1);
        let open = t.db.open_callbacks(10).await.expect("open");
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].state, CallbackState::Held);
        // Neither an operator's retry nor "send now" sends it while the merchant is disabled.
        let id = callback.operation_id.as_uuid();
        assert_eq!(
            t.db.retry(id, later).await.expect("retry"),
            RetryOutcome::Held
        );
        assert!(!t.db.send_callback_now(id, later).await.expect("send now"));
        assert_eq!(stored(&t, callback.operation_id).0, 1, "still held");

        // The enable releases it: pending, due when it was, so claimable at once.
        let enabled_at = at.plus_seconds(10);
        assert_eq!(
            t.db.enable_merchant(&shop.id, enabled_at)
                .await
                .expect("enable"),
            Some(1)
        );
        assert_eq!(stored(&t, callback.operation_id), (0, 0, 0, at.millis(), 0));
        let again =
            t.db.claim_due("v", enabled_at, enabled_at.plus_seconds(60), 10)
                .await
                .expect("claim");
        assert_eq!(again.len(), 1);
        assert_eq!(
            (
                again[0].operation_id,
                again[0].attempt,
                again[0].failures_in_run
            ),
            (callback.operation_id, 1, 0),
            "the first attempt, as if it had never waited"
        );
        assert_eq!(t.db.health(at).await.expect("health").callbacks_held, 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hold_after_an_enable_changes_nothing_and_a_lost_lease_holds_nothing() {
    each_backend(|t| async move {
        let at = Timestamp::from_millis(6_000_000);
        let (shop, claimed) = claimed_then_disabled(&t.db, 2, at, "w").await;
        // The worker read the merchant disabled, then it was enabled before the hold.
        assert_eq!(
            t.db.enable_merchant(&shop.id, at).await.expect("enable"),
            Some(0)
        );
        assert_eq!(
            t.db.hold("w", &claimed[0], at).await.expect("hold"),
            HoldOutcome::MerchantEnabled
        );
        assert_eq!(
            stored(&t, claimed[0].operation_id),
            (0, 0, 0, at.millis(), 1),
            "still pending and leased to the worker, which sends it"
        );

        assert!(t.db.disable_merchant(&shop.id).await.expect("disable"));
        assert_eq!(
            t.db.hold("someone-else", &claimed[1], at)
                .await
                .expect("hold"),
            HoldOutcome::NotLeased
        );
        assert_eq!(stored(&t, claimed[1].operation_id).0, 0);
        assert_eq!(t.rows_where("callback_outbox", "state = 'held'"), 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_sweep_releases_held_callbacks_of_enabled_merchants_only() {
    each_backend(|t| async move {
        let at = Timestamp::from_millis(7_000_000);
        assert_eq!(t.db.release_held(at).await.expect("sweep"), 0);
        let (on, theirs) = claimed_then_disabled(&t.db, 2, at, "w").await;
        let (_off, others) = claimed_then_disabled(&t.db, 1, at, "w").await;
        for callback in theirs.iter().chain(&others) {
            assert_eq!(
                t.db.hold("w", callback, at).await.expect("hold"),
                HoldOutcome::Held
            );
        }
        // Enabled behind the enable's back (say, by hand): only the sweep notices.
        t.exec(&format!(
            "UPDATE merchants SET enabled = 1 WHERE id = '{}'",
            on.id
        ));
        let later = at.plus_seconds(30);
        assert_eq!(t.db.release_held(later).await.expect("sweep"), 2);
        for callback in &theirs {
            assert_eq!(stored(&t, callback.operation_id), (0, 0, 0, at.millis(), 0));
        }
        assert_eq!(
            stored(&t, others[0].operation_id).0,
            1,
            "its merchant is disabled"
        );
        assert_eq!(t.db.release_held(later).await.expect("sweep"), 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn no_callback_stays_held_once_an_enable_racing_the_holds_committed() {
    each_backend(|t| async move {
        for round in 0..8_i64 {
            let at = Timestamp::from_millis(8_000_000 + round * 1_000);
            let (shop, claimed) = claimed_then_disabled(&t.db, 6, at, "w").await;
            let outcomes = all_at_once(claimed.len() + 1, |i| {
                let (db, shop) = (t.db.clone(), shop.clone());
                let callback = claimed.get(i).cloned();
                async move {
                    match callback {
                        Some(callback) => Some(db.hold("w", &callback, at).await.expect("hold")),
                        None => {
                            db.enable_merchant(&shop.id, at).await.expect("enable");
                            None
                        }
                    }
                }
            })
            .await;
            assert!(outcomes
                .iter()
                .flatten()
                .all(|o| matches!(o, HoldOutcome::Held | HoldOutcome::MerchantEnabled)));
            assert_eq!(
                t.rows_where(
                    "callback_outbox",
                    &format!("merchant_id = '{}' AND state = 'held'", shop.id)
                ),
                0,
                "round {round}: a callback was left held after the enable"
            );
        }
    })
    .await;
}

/// The outbox's indexes each migration since the refunds one may have left, by name.
const INDEXES: [&str; 5] = [
    "callback_outbox_created",
    "callback_outbox_due",
    "callback_outbox_failed",
    "callback_outbox_held",
    "callback_outbox_operation",
];

/// Those of [`INDEXES`] the outbox has.
fn outbox_indexes(t: &TestDb) -> Vec<&'static str> {
    let sqlite = t.url.starts_with("sqlite://");
    INDEXES
        .into_iter()
        .filter(|name| {
            let sql = if sqlite {
                format!(
                    "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'index' \
                     AND tbl_name = 'callback_outbox' AND name = '{name}'"
                )
            } else {
                format!(
                    "SELECT COUNT(*) AS n FROM pg_indexes WHERE tablename = 'callback_outbox' \
                     AND indexname = '{name}'"
                )
            };
            t.count(&sql) == 1
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_held_callbacks_migration_reverts_only_with_nothing_held() {
    each_backend(|t| async move {
        let at = Timestamp::from_millis(9_000_000);
        let (shop, claimed) = claimed_then_disabled(&t.db, 2, at, "w").await;
        let tried = CallbackAttempt {
            operation_id: claimed[1].operation_id,
            refund_id: None,
            dispute: None,
            attempt: 1,
            at,
            duration_ms: 5,
            http_status: Some(500),
            error: None,
        };
        let retry = AttemptResult::RetryAt(at.plus_seconds(10));
        assert!(t
            .db
            .record_attempt("w", &tried, &retry)
            .await
            .expect("record"));
        assert_eq!(
            t.db.hold("w", &claimed[0], at).await.expect("hold"),
            HoldOutcome::Held
        );
        let indexes = outbox_indexes(&t);
        assert_eq!(indexes, INDEXES[..4]);

        let later = revert_through_async(&t.url, DISCREPANCY_RESOLUTION).await;
        assert_eq!(later, reverts_through(DISCREPANCY_RESOLUTION));
        assert_revert_refused(
            &t,
            HELD_CALLBACKS,
            "no_held_callbacks",
            "callbacks are held",
        )
        .await;

        assert_eq!(
            t.db.enable_merchant(&shop.id, at).await.expect("enable"),
            Some(1)
        );
        assert_eq!(
            revert_newest_async(&t.url).await,
            Ok(HELD_CALLBACKS.to_string())
        );
        assert_eq!(recorded_in(&t), Recorded::before(HELD_CALLBACKS));
        // Every row and attempt kept; `held` refused again; the earlier indexes back.
        assert_eq!(t.rows_where("callback_outbox", "state = 'pending'"), 2);
        assert_eq!(t.rows("callback_attempts"), 1);
        let hold = format!(
            "UPDATE callback_outbox SET state = 'held' WHERE id = '{}'",
            claimed[0].operation_id
        );
        assert!(t.try_exec(&hold).is_err());
        assert_eq!(outbox_indexes(&t), indexes[..3]);
        // The attempts still refer to their callbacks (SQLite rebuilt both tables).
        if t.url.starts_with("sqlite://") {
            let orphan = "INSERT INTO callback_attempts (callback_id, attempt, at, duration_ms) \
                          VALUES ('nobody', 1, 0, 0)";
            assert!(t.try_exec(orphan).is_err());
        }

        assert_migrates_again(&t);
        assert_eq!(t.try_exec(&hold), Ok(()));
        assert_eq!(outbox_indexes(&t), indexes);
    })
    .await;
}
