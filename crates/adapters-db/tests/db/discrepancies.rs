//! Resolving discrepancies: by an operator once, with who, when and why; by a manual ledger
//! entry that names the operation, in the entry's own transaction.

use adapters_db::Database;
use domain::attempt::Discrepancy;
use domain::console::{Actor, EventDetail};
use domain::discrepancy::{RecordedDiscrepancy, Resolution, ResolutionNote, Resolved};
use domain::ledger::{EntryKind, ManualNote};
use domain::merchant::Merchant;
use domain::ports::{ConsoleStore, ManualMoveError, OperationStore, OperatorStore};
use domain::{Direction, OperationId, Timestamp};

use crate::helpers::{
    all_at_once, each_backend, funded_merchant, insert_plain, operation, rub_move,
};
use crate::migrations::{
    assert_migrates_again, recorded_in, revert_through_async, reverts_through, Recorded,
    DISCREPANCY_RESOLUTION,
};

/// A stored deposit of `shop` with a discrepancy reported for each of `reports`, at `at`.
async fn disputed(db: &Database, shop: &Merchant, reports: &[&str], at: Timestamp) -> OperationId {
    let op = operation(shop, Direction::Deposit, 50_00);
    insert_plain(db, &op).await;
    for reported in reports {
        let report = Discrepancy {
            operation_id: op.id(),
            provider: "bank".into(),
            reported: (*reported).into(),
            at,
        };
        db.record_discrepancy(&report).await.expect("record");
    }
    op.id()
}

fn by_hand(at: Timestamp, note: &str) -> Resolution {
    Resolution {
        at,
        actor: Actor::operator("alice"),
        note: ResolutionNote::parse(note).expect("note"),
        ledger_entry: None,
    }
}

/// The ids of `found`, in order.
fn ids(found: &[RecordedDiscrepancy]) -> Vec<i64> {
    found.iter().map(|d| d.id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_operator_resolves_a_discrepancy_once_with_who_when_and_why() {
    each_backend(|t| async move {
        let db = &t.db;
        let shop = funded_merchant(db, 10_00).await;
        let at = Timestamp::from_millis(2_000_000);
        let op = disputed(db, &shop, &["succeeded", "failed"], at).await;
        let all = db.discrepancies(false, 10).await.expect("list");
        assert_eq!(all.len(), 2);
        assert!(all.iter().all(RecordedDiscrepancy::is_open));
        assert!(all[0].id > all[1].id, "newest first");
        let target = all[1].id;
        assert_eq!(db.health(at).await.expect("health").open_discrepancies, 2);

        let when = at.plus_seconds(60);
        let resolution = by_hand(when, "the bank refunded the payer");
        let done = match db.resolve_discrepancy(target, &resolution).await {
            Ok(Resolved::Now(done)) => done,
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(
            (done.id, done.operation_id, done.reported.as_str()),
            (target, op, "succeeded")
        );
        assert_eq!(done.resolution, Some(resolution.clone()));

        // Once only: a second resolution, by anyone, changes nothing.
        let again = by_hand(at.plus_seconds(99), "twice");
        match db.resolve_discrepancy(target, &again).await {
            Ok(Resolved::Already(found)) => assert_eq!(found, done),
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(
            db.resolve_discrepancy(999_999, &again).await,
            Ok(Resolved::NotFound)
        ));

        let open = db.discrepancies(true, 10).await.expect("open");
        assert_eq!(ids(&open), vec![all[0].id]);
        assert_eq!(db.health(at).await.expect("health").open_discrepancies, 1);
        let of_op = db
            .operation_discrepancies(op)
            .await
            .expect("of the operation");
        assert_eq!(ids(&of_op), vec![target, all[0].id], "oldest first");
        assert_eq!(of_op[0], done);

        let events = db.operation_events(op).await.expect("events");
        let resolved: Vec<_> = events
            .iter()
            .filter(|e| matches!(e.detail, EventDetail::DiscrepancyResolved { .. }))
            .collect();
        assert_eq!(resolved.len(), 1, "one event, for the one resolution");
        assert_eq!(resolved[0].at, when);
        assert_eq!(
            resolved[0].detail,
            EventDetail::DiscrepancyResolved {
                discrepancy: target,
                actor: "operator:alice".into(),
                note: "the bank refunded the payer".into(),
                ledger_entry: None,
            }
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_manual_entry_naming_the_operation_resolves_its_open_discrepancies_with_it() {
    each_backend(|t| async move {
        let db = &t.db;
        let shop = funded_merchant(db, 100_00).await;
        let at = Timestamp::from_millis(3_000_000);
        let op = disputed(db, &shop, &["succeeded", "failed", "canceled"], at).await;
        let elsewhere = disputed(db, &shop, &["succeeded"], at).await;
        let of_op = db.operation_discrepancies(op).await.expect("read");
        let earlier = by_hand(at.plus_seconds(1), "checked by hand");
        assert!(matches!(
            db.resolve_discrepancy(of_op[0].id, &earlier).await,
            Ok(Resolved::Now(_))
        ));

        let mut debit = rub_move(shop.id.clone(), 50_00, false);
        debit.operation_id = Some(op);
        debit.at = at.plus_seconds(5);
        let note = ManualNote::new(Actor::cli("ops"), Some("payer paid twice")).expect("note");
        let written = db.apply_manual_move(&debit, &note).await.expect("debit");

        assert_eq!(written.balance.available, 50_00);
        assert_eq!(written.resolved, vec![of_op[1].id, of_op[2].id]);
        let after = db.operation_discrepancies(op).await.expect("read");
        assert_eq!(after[0].resolution, Some(earlier), "kept as it was");
        for resolved in &after[1..] {
            assert_eq!(
                resolved.resolution,
                Some(Resolution {
                    at: debit.at,
                    actor: Actor::cli("ops"),
                    note: ResolutionNote::from_stored("payer paid twice"),
                    ledger_entry: Some(written.entry_id),
                })
            );
        }
        assert!(db
            .operation_discrepancies(elsewhere)
            .await
            .expect("read")
            .iter()
            .all(RecordedDiscrepancy::is_open));
        // The entry is the operation's now, with who made it and why.
        let entries = t.ledger_of(op).await;
        assert_eq!(entries.len(), 1);
        assert_eq!(
            (entries[0].id, entries[0].kind, entries[0].available),
            (written.entry_id, EntryKind::ManualDebit, -50_00)
        );
        assert_eq!(entries[0].note.as_ref(), Some(&note));
        let events = db.operation_events(op).await.expect("events");
        let resolved = events
            .iter()
            .filter(|e| matches!(e.detail, EventDetail::DiscrepancyResolved { ledger_entry: Some(n), .. } if n == written.entry_id))
            .count();
        assert_eq!(resolved, 2);
        t.assert_ledger_verifies().await;

        // An entry that names an operation with nothing open resolves nothing.
        let mut credit = rub_move(shop.id.clone(), 1_00, true);
        credit.operation_id = Some(op);
        let written = db.apply_manual_move(&credit, &note).await.expect("credit");
        assert!(written.resolved.is_empty());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refused_entry_resolves_nothing() {
    each_backend(|t| async move {
        let db = &t.db;
        let shop = funded_merchant(db, 10_00).await;
        let at = Timestamp::from_millis(4_000_000);
        let op = disputed(db, &shop, &["succeeded"], at).await;
        let mut too_much = rub_move(shop.id.clone(), 10_01, false);
        too_much.operation_id = Some(op);
        let refused = db
            .apply_manual_move(&too_much, &domain::testkit::note())
            .await;
        assert!(matches!(refused, Err(ManualMoveError::InsufficientBalance)));
        assert!(db.discrepancies(true, 10).await.expect("open").len() == 1);
        assert_eq!(t.rows_where("ledger", &format!("operation_id = '{op}'")), 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn concurrent_resolutions_resolve_a_discrepancy_once() {
    each_backend(|t| async move {
        let db = &t.db;
        let shop = funded_merchant(db, 100_00).await;
        let at = Timestamp::from_millis(5_000_000);
        let op = disputed(db, &shop, &["succeeded"], at).await;
        let id = db.operation_discrepancies(op).await.expect("read")[0].id;
        // Six operators and two manual entries at once.
        let answers = all_at_once(8, |i| {
            let (db, shop) = (db.clone(), shop.clone());
            async move {
                if i < 6 {
                    let resolution = by_hand(at.plus_seconds(i as i64), &format!("operator {i}"));
                    matches!(
                        db.resolve_discrepancy(id, &resolution)
                            .await
                            .expect("resolve"),
                        Resolved::Now(_)
                    )
                } else {
                    let mut entry = rub_move(shop.id.clone(), 1_00, true);
                    entry.operation_id = Some(op);
                    let written = db
                        .apply_manual_move(&entry, &domain::testkit::note())
                        .await
                        .expect("credit");
                    written.resolved == vec![id]
                }
            }
        })
        .await;
        assert_eq!(
            answers.iter().filter(|resolved| **resolved).count(),
            1,
            "{answers:?}"
        );
        assert_eq!(
            t.rows_where("operation_events", "detail LIKE '%discrepancyResolved%'"),
            1
        );
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_resolution_migration_reverts_to_discrepancies_that_are_all_open() {
    each_backend(|t| async move {
        let db = &t.db;
        let shop = funded_merchant(db, 10_00).await;
        let at = Timestamp::from_millis(6_000_000);
        let op = disputed(db, &shop, &["succeeded", "failed"], at).await;
        let first = db.operation_discrepancies(op).await.expect("read")[0].id;
        let resolution = by_hand(at, "checked");
        assert!(matches!(
            db.resolve_discrepancy(first, &resolution).await,
            Ok(Resolved::Now(_))
        ));

        let reverted = revert_through_async(&t.url, DISCREPANCY_RESOLUTION).await;
        assert_eq!(reverted, reverts_through(DISCREPANCY_RESOLUTION));
        assert_eq!(recorded_in(&t), Recorded::before(DISCREPANCY_RESOLUTION));
        assert_eq!(t.rows("provider_discrepancies"), 2, "every one kept");
        for column in [
            "resolved_at",
            "resolved_by",
            "resolution_note",
            "resolution_entry",
        ] {
            let read = format!("SELECT {column} FROM provider_discrepancies");
            assert!(t.try_exec(&read).is_err(), "{column} is gone");
        }

        assert_migrates_again(&t);
        assert_eq!(db.discrepancies(true, 10).await.expect("open").len(), 2);
        // A partial resolution is refused.
        let partial =
            format!("UPDATE provider_discrepancies SET resolved_at = 1 WHERE id = {first}");
        assert!(t.try_exec(&partial).is_err());
    })
    .await;
}
