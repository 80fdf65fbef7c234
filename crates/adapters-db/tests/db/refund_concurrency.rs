//! Refunds racing: concurrent refunds of one deposit never exceed it, a merchantRefundId is
//! taken once, and each due refund goes to one settler.

use std::collections::HashSet;

use adapters_db::Database;
use domain::operation::Outcome;
use domain::ports::{RefundInsertError, RefundStore};
use domain::{RefundId, Timestamp};

use crate::helpers::{
    all_at_once, approved_deposit, balance, due_refund, each_backend, finish_refund,
    funded_merchant, funded_shop_with_deposit, merchant, new_refund, tally,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn twenty_concurrent_refunds_of_ten_against_a_hundred_hold_exactly_a_hundred() {
    each_backend(|t| async move {
        let (shop, deposit) = funded_shop_with_deposit(&t.db, 1_000_00).await;
        // Half through a second handle: what a second gateway process would do.
        let handles = [t.db.clone(), t.second_process()];
        let results = all_at_once(20, |i| {
            let (db, new) = (handles[i % 2].clone(), new_refund(&deposit, 10_00, None));
            async move { db.insert_refund(&new).await }
        })
        .await;
        let exceeds = |e: &RefundInsertError| matches!(e, RefundInsertError::ExceedsAmount);
        let (accepted, exceeding) = tally(&results, exceeds);
        assert_eq!((accepted, exceeding), (10, 10));
        assert_eq!(balance(&t.db, &shop).await, (1_000_00, 100_00));
        assert_eq!(t.rows("refunds"), 10);
        assert_eq!(t.rows_where("ledger", "kind = 'refund_hold'"), 10);
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn concurrent_refunds_with_one_merchant_refund_id_make_one_refund() {
    each_backend(|t| async move {
        let shop = funded_merchant(&t.db, 1_000_00).await;
        // The same id on one deposit (its lock decides) and on two (the unique index does).
        let deposits = [
            approved_deposit(&t.db, &shop, 100_00).await,
            approved_deposit(&t.db, &shop, 100_00).await,
        ];
        for (round, spread) in [(0, 1), (1, 2)] {
            let mrid = format!("same-{round}");
            let handles = [t.db.clone(), t.second_process()];
            let results = all_at_once(10, |i| {
                let db = handles[i % 2].clone();
                let new = new_refund(&deposits[i % spread], 5_00, Some(&mrid));
                async move { db.insert_refund(&new).await }
            })
            .await;
            let duplicate = |e: &RefundInsertError| matches!(e, RefundInsertError::Duplicate);
            let (made, duplicates) = tally(&results, duplicate);
            assert_eq!((made, duplicates), (1, 9), "round {round}: {results:?}");
        }
        assert_eq!(t.rows("refunds"), 2);
        assert_eq!(balance(&t.db, &shop).await, (1_190_00, 10_00));
        t.assert_ledger_verifies().await;
    })
    .await;
}

/// Everything `owner` claims at `now` in batches of 4 until nothing is left.
async fn claim_all(db: Database, owner: String, now: Timestamp) -> Vec<RefundId> {
    let mut mine = Vec::new();
    loop {
        let until = now.plus_seconds(60);
        let batch = db.claim_due_refunds(&owner, now, until, 4).await;
        let batch = batch.expect("claim");
        if batch.is_empty() {
            return mine;
        }
        let checks: Vec<_> = batch.iter().map(|r| r.check_at).collect();
        assert!(checks.windows(2).all(|w| w[0] <= w[1]), "oldest first");
        mine.extend(batch.into_iter().map(|r| r.id));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn each_due_refund_goes_to_one_claimer() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let mut due = HashSet::new();
        let base = Timestamp::from_millis(1_000_000);
        for d in 0..3 {
            let deposit = approved_deposit(&t.db, &shop, 100_00).await;
            for i in 0..10 {
                let new = due_refund(&deposit, 1_00, base.plus_millis(d * 10 + i));
                t.db.insert_refund(&new).await.expect("refund");
                due.insert(new.refund.id);
            }
            // Not due yet when the claimers look.
            let later = due_refund(&deposit, 1_00, base.plus_seconds(3_600));
            t.db.insert_refund(&later).await.expect("refund");
        }
        let now = base.plus_seconds(10);
        let handles = [t.db.clone(), t.second_process()];
        let claimed = all_at_once(6, |i| {
            claim_all(handles[i % 2].clone(), format!("settler-{i}"), now)
        })
        .await;
        let seen: Vec<RefundId> = claimed.into_iter().flatten().collect();
        assert_eq!(seen.len(), 30, "each due refund claimed exactly once");
        assert_eq!(seen.iter().copied().collect::<HashSet<_>>(), due);

        // Leased: nobody else takes them until the lease ends; then they come back.
        let during = t.db.claim_due_refunds("late", now, now, 100).await;
        assert!(during.expect("claim").is_empty());
        let expired = now.plus_seconds(61);
        let again = t.db.claim_due_refunds("late", expired, expired, 100).await;
        let again = again.expect("claim");
        assert_eq!(again.len(), 30);

        // Saving ends the lease (due again at its new time); a final one is never claimed.
        let (saved, finished) = (&again[0], &again[1]);
        let mut next = saved.clone();
        next.check_at = Some(expired);
        t.db.save_refund(&next).await.expect("save");
        finish_refund(&t.db, finished, &Outcome::Approve).await;
        let back = t.db.claim_due_refunds("other", expired, expired, 100).await;
        let back: Vec<_> = back.expect("claim").into_iter().map(|r| r.id).collect();
        assert_eq!(back, vec![saved.id]);
        t.assert_ledger_verifies().await;
    })
    .await;
}
