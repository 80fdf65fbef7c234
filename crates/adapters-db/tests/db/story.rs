//! What the operator reads about one operation: its ledger entries and its callback with each
//! delivery attempt (`OperatorStore::operation_ledger`, `OperatorStore::operation_callbacks`).

use domain::callback::{CallbackAttempt, CallbackState};
use domain::ledger::EntryKind;
use domain::operation::Outcome;
use domain::ports::{AttemptResult, CallbackOutbox};
use domain::{Currency, OperationId};

use crate::helpers::{credit, each_backend, gateway, merchant, now, withdrawal};

/// (kind, available, held) of each entry.
fn deltas(entries: &[domain::story::LedgerEntry]) -> Vec<(EntryKind, i64, i64)> {
    entries
        .iter()
        .map(|e| (e.kind, e.available, e.held))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_operations_ledger_entries_and_callback_deliveries_are_read_back_as_written() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        credit(&t.db, &shop, 1_000_00).await;
        let gw = gateway(&t.db);
        let paid = gw
            .creation()
            .create_withdrawal(&shop, withdrawal(250_00, Some("w-1")), b"w")
            .await
            .expect("payout");
        let paid_id = paid.operation.id();
        let other = gw
            .creation()
            .create_withdrawal(&shop, withdrawal(10_00, Some("w-2")), b"w")
            .await
            .expect("payout");

        // Processing: its hold only, no callback yet; a manual credit is nobody's entry.
        let held = t.ledger_of(paid_id).await;
        assert_eq!(
            deltas(&held),
            vec![(EntryKind::WithdrawalHold, -250_00, 250_00)]
        );
        assert_eq!(held[0].currency, Currency::RUB);
        assert_eq!(held[0].at, paid.operation.created_at());
        assert!(t.callbacks_of(paid_id).await.is_empty());

        let done = gw
            .answers()
            .complete(paid_id, Outcome::Approve)
            .await
            .expect("approve");
        let entries = t.ledger_of(paid_id).await;
        assert_eq!(
            deltas(&entries),
            vec![
                (EntryKind::WithdrawalHold, -250_00, 250_00),
                (EntryKind::WithdrawalPaid, 0, -250_00)
            ]
        );
        assert!(entries[0].id < entries[1].id, "oldest first: {entries:?}");
        assert_eq!(entries[1].at, done.updated_at());
        let theirs = t.ledger_of(other.operation.id()).await;
        assert_eq!(
            deltas(&theirs),
            vec![(EntryKind::WithdrawalHold, -10_00, 10_00)]
        );

        // Queued with the final status, then a failed attempt and a delivered one.
        let queued = t.callbacks_of(paid_id).await;
        assert_eq!(queued.len(), 1, "{queued:?}");
        assert_eq!(
            (queued[0].state, queued[0].attempts),
            (CallbackState::Pending, 0)
        );
        assert_eq!(queued[0].url, "https://shop.example/cb");
        assert_eq!(queued[0].queued_at, done.updated_at());
        assert!(queued[0].deliveries.is_empty());
        let later = now().plus_seconds(1);
        for (status, result) in [
            (500, AttemptResult::RetryAt(later)),
            (200, AttemptResult::Delivered),
        ] {
            let claimed =
                t.db.claim_due("w", later, later.plus_seconds(60), 10)
                    .await
                    .expect("claim");
            assert_eq!(claimed.len(), 1, "{claimed:?}");
            let attempt = CallbackAttempt {
                operation_id: paid_id,
                refund_id: None,
                dispute: None,
                attempt: claimed[0].attempt,
                at: later,
                duration_ms: 12,
                http_status: Some(status),
                error: None,
            };
            assert!(t
                .db
                .record_attempt("w", &attempt, &result)
                .await
                .expect("record"));
        }
        let delivered = t.callbacks_of(paid_id).await.remove(0);
        assert_eq!(
            (
                delivered.state,
                delivered.attempts,
                delivered.next_attempt_at
            ),
            (CallbackState::Delivered, 2, None)
        );
        let tries: Vec<_> = delivered
            .deliveries
            .iter()
            .map(|d| {
                (
                    d.operation_id,
                    d.attempt,
                    d.http_status,
                    d.duration_ms,
                    d.at,
                )
            })
            .collect();
        assert_eq!(
            tries,
            vec![
                (paid_id, 1, Some(500), 12, later),
                (paid_id, 2, Some(200), 12, later)
            ]
        );

        // An unknown operation has neither.
        let unknown = OperationId::from_uuid(uuid::Uuid::new_v4());
        assert!(t.ledger_of(unknown).await.is_empty());
        assert!(t.callbacks_of(unknown).await.is_empty());
    })
    .await;
}
