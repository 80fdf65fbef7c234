//! `RefundStore`: a refund's hold, its final status with its moves, and the checks a new
//! refund meets, in the port's order, each refusal writing nothing.

use domain::ledger::EntryKind;
use domain::operation::{DeclineCode, Outcome};
use domain::ports::{FinishError, OperationStore, OperatorStore, RefundInsertError, RefundStore};
use domain::refund::Refund;
use domain::{Direction, MerchantId, MerchantRefundId, Status};

use crate::helpers::{
    approved_deposit, balance, by_merchant_refund_id, completion, declined, each_backend,
    finish_refund, funded_merchant, funded_shop_with_deposit, insert_plain, made_at, merchant,
    new_refund, now, operation, refunded, refused, rub_move, shop_with_deposit, TestDb,
};

/// What a refused refund must leave as it was: rows of refunds, ledger and outbox.
fn written(t: &TestDb) -> (i64, i64, i64) {
    (
        t.rows("refunds"),
        t.rows("ledger"),
        t.rows("callback_outbox"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_refund_holds_its_amount_then_pays_it_out() {
    each_backend(|t| async move {
        let (shop, deposit) = shop_with_deposit(&t.db).await;
        assert_eq!(balance(&t.db, &shop).await, (100_00, 0));

        let refund = refunded(&t.db, &deposit, 100_00).await;
        assert_eq!(balance(&t.db, &shop).await, (0, 100_00));
        let stored = t.db.refund(refund.id).await.expect("read").expect("stored");
        assert_eq!(stored, refund);
        t.assert_ledger_verifies().await;

        let done = finish_refund(&t.db, &refund, &Outcome::Approve).await;
        assert_eq!(balance(&t.db, &shop).await, (0, 0));
        let stored = t.db.refund(refund.id).await.expect("read").expect("stored");
        assert_eq!(stored, done);
        assert_eq!((stored.status(), stored.check_at), (Status::Approved, None));

        let entries = t.ledger_of(deposit.id()).await;
        let seen: Vec<_> = entries
            .iter()
            .map(|e| (e.kind, e.available, e.held, e.refund_id))
            .collect();
        assert_eq!(
            seen,
            vec![
                (EntryKind::DepositApproved, 100_00, 0, None),
                (EntryKind::RefundHold, -100_00, 100_00, Some(refund.id)),
                (EntryKind::RefundPaid, 0, -100_00, Some(refund.id)),
            ]
        );
        assert_eq!(entries[2].at, done.updated_at);
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn partial_refunds_fill_the_deposit_and_one_more_exceeds_it() {
    each_backend(|t| async move {
        let (shop, deposit) = funded_shop_with_deposit(&t.db, 1_000_00).await;
        // Made in this order, the last two at the same millisecond, the first after them.
        let at = now();
        let made = [
            made_at(&deposit, 30_00, at.plus_millis(1)),
            made_at(&deposit, 30_00, at),
            made_at(&deposit, 40_00, at),
        ];
        for new in &made {
            t.db.insert_refund(new).await.expect("a partial refund");
        }
        finish_refund(&t.db, &made[0].refund, &Outcome::Approve).await;

        let before = written(&t);
        let one_more = new_refund(&deposit, 1, None);
        let error = refused(&t.db, &one_more).await;
        assert!(
            matches!(error, RefundInsertError::ExceedsAmount),
            "{error:?}"
        );
        assert_eq!(written(&t), before, "a refused refund writes nothing");
        assert_eq!(balance(&t.db, &shop).await, (1_000_00, 70_00));
        assert_eq!(t.db.refund(one_more.refund.id).await.expect("read"), None);

        // Exceeding comes before the balance: a refund too large for both is ExceedsAmount.
        let both = new_refund(&deposit, 2_000_00, None);
        let error = refused(&t.db, &both).await;
        assert!(
            matches!(error, RefundInsertError::ExceedsAmount),
            "{error:?}"
        );

        let listed: Vec<_> =
            t.db.refunds_of(deposit.id())
                .await
                .expect("refunds")
                .iter()
                .map(|r| r.id)
                .collect();
        let (tie_a, tie_b) = (made[1].refund.id, made[2].refund.id);
        let expected = vec![tie_a.min(tie_b), tie_a.max(tie_b), made[0].refund.id];
        assert_eq!(listed, expected, "oldest first, ties by id");
        let nothing =
            t.db.refunds_of(domain::OperationId::from_uuid(uuid::Uuid::new_v4()));
        assert!(nothing.await.expect("refunds").is_empty());
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_declined_refund_gives_its_amount_back_for_another() {
    each_backend(|t| async move {
        let (shop, deposit) = shop_with_deposit(&t.db).await;
        let refund = refunded(&t.db, &deposit, 100_00).await;
        let again = new_refund(&deposit, 100_00, None);
        let error = refused(&t.db, &again).await;
        assert!(
            matches!(error, RefundInsertError::ExceedsAmount),
            "{error:?}"
        );

        let done = finish_refund(&t.db, &refund, &declined()).await;
        assert_eq!(balance(&t.db, &shop).await, (100_00, 0));
        let stored = t.db.refund(refund.id).await.expect("read").expect("stored");
        assert_eq!(stored, done);
        let decline = stored.decline().expect("declined");
        assert_eq!(decline.code, DeclineCode::ProviderDeclined);
        assert_eq!(decline.message, DeclineCode::ProviderDeclined.message());

        t.db.insert_refund(&again)
            .await
            .expect("the amount is free again");
        assert_eq!(balance(&t.db, &shop).await, (0, 100_00));
        let kinds: Vec<_> = t
            .ledger_of(deposit.id())
            .await
            .iter()
            .map(|e| e.kind)
            .collect();
        assert_eq!(
            kinds,
            vec![
                EntryKind::DepositApproved,
                EntryKind::RefundHold,
                EntryKind::RefundReleased,
                EntryKind::RefundHold
            ]
        );
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn only_an_approved_deposit_is_refunded() {
    each_backend(|t| async move {
        let shop = funded_merchant(&t.db, 1_000_00).await;
        let waiting = operation(&shop, Direction::Deposit, 100_00);
        insert_plain(&t.db, &waiting).await;
        let lost = operation(&shop, Direction::Deposit, 100_00);
        insert_plain(&t.db, &lost).await;
        let lost = lost.finish(&declined(), now()).expect("processing");
        let completion = domain::ports::Completion {
            operation: lost.clone(),
            moves: Vec::new(),
            callback: None,
            from_attempt: None,
        };
        t.db.finish(&completion).await.expect("decline");
        let payout = operation(&shop, Direction::Withdrawal, 100_00);
        insert_plain(&t.db, &payout).await;

        let before = written(&t);
        for op in [&waiting, &lost, &payout] {
            let error = refused(&t.db, &new_refund(op, 10_00, Some("r-1"))).await;
            assert!(matches!(error, RefundInsertError::NotApproved), "{error:?}");
        }
        assert_eq!(written(&t), before);
        assert_eq!(balance(&t.db, &shop).await, (1_000_00, 0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refund_the_available_balance_cannot_hold_is_refused_and_writes_nothing() {
    each_backend(|t| async move {
        let (shop, deposit) = shop_with_deposit(&t.db).await;
        let debit = rub_move(shop.id.clone(), 60_00, false);
        t.db.apply_manual_move(&debit, &domain::testkit::note())
            .await
            .expect("debit");

        let before = written(&t);
        let error = refused(&t.db, &new_refund(&deposit, 50_00, Some("big"))).await;
        assert!(
            matches!(error, RefundInsertError::InsufficientBalance),
            "{error:?}"
        );
        assert_eq!(written(&t), before);
        assert_eq!(balance(&t.db, &shop).await, (40_00, 0));
        let mrid = MerchantRefundId::parse("big").expect("mrid");
        let found = t.db.find_by_merchant_refund_id(&shop.id, &mrid).await;
        assert_eq!(found.expect("read"), None, "the id stays free");

        refunded(&t.db, &deposit, 40_00).await;
        assert_eq!(balance(&t.db, &shop).await, (0, 40_00));
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_taken_merchant_refund_id_is_a_duplicate_before_anything_else() {
    each_backend(|t| async move {
        let (shop, deposit) = funded_shop_with_deposit(&t.db, 1_000_00).await;
        let other_deposit = approved_deposit(&t.db, &shop, 100_00).await;
        let first = new_refund(&deposit, 10_00, Some("refund-1"));
        t.db.insert_refund(&first).await.expect("first");

        let waiting = operation(&shop, Direction::Deposit, 100_00);
        insert_plain(&t.db, &waiting).await;
        let before = written(&t);
        // The same id again: on the same deposit, another one, one not approved, too large.
        for new in [
            new_refund(&deposit, 10_00, Some("refund-1")),
            new_refund(&other_deposit, 10_00, Some("refund-1")),
            new_refund(&waiting, 10_00, Some("refund-1")),
            new_refund(&deposit, 500_00, Some("refund-1")),
        ] {
            let error = refused(&t.db, &new).await;
            assert!(matches!(error, RefundInsertError::Duplicate), "{error:?}");
        }
        assert_eq!(written(&t), before);

        let mrid = MerchantRefundId::parse("refund-1").expect("mrid");
        let (found, fingerprint) = by_merchant_refund_id(&t.db, &shop.id, "refund-1").await;
        assert_eq!(found, first.refund);
        assert_eq!(fingerprint, first.fingerprint);
        let nobody = MerchantId::parse("nobody").expect("id");
        let theirs = t.db.find_by_merchant_refund_id(&nobody, &mrid).await;
        assert_eq!(theirs.expect("read"), None);

        // Another merchant's ids are its own.
        let other = merchant(&t.db).await;
        let their_deposit = approved_deposit(&t.db, &other, 50_00).await;
        let theirs = new_refund(&their_deposit, 10_00, Some("refund-1"));
        t.db.insert_refund(&theirs).await.expect("another merchant");
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refund_finishes_once_and_a_final_one_is_not_saved() {
    each_backend(|t| async move {
        let (shop, deposit) = shop_with_deposit(&t.db).await;
        let refund = refunded(&t.db, &deposit, 25_00).await;
        let approved = finish_refund(&t.db, &refund, &Outcome::Approve).await;

        let before = written(&t);
        let second = t.db.finish_refund(&completion(&refund, &declined())).await;
        assert!(
            matches!(second, Err(FinishError::NotProcessing)),
            "{second:?}"
        );
        let third =
            t.db.finish_refund(&completion(&refund, &Outcome::Approve))
                .await;
        assert!(
            matches!(third, Err(FinishError::NotProcessing)),
            "{third:?}"
        );
        let saved = t.db.save_refund(&refund).await;
        assert!(
            matches!(saved, Err(FinishError::NotProcessing)),
            "{saved:?}"
        );
        assert_eq!(written(&t), before);
        let stored = t.db.refund(refund.id).await.expect("read").expect("stored");
        assert_eq!(stored, approved);
        assert_eq!(balance(&t.db, &shop).await, (75_00, 0));
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn saving_a_processing_refund_keeps_a_known_acquirer_id() {
    each_backend(|t| async move {
        let (_, deposit) = shop_with_deposit(&t.db).await;
        let refund = refunded(&t.db, &deposit, 25_00).await;
        let at = now().plus_seconds(5);
        let saved = |acquirer: Option<&str>, unknown: bool| Refund {
            acquirer_id: acquirer.map(str::to_string),
            check_at: Some(at.plus_seconds(30)),
            unknown_since: unknown.then_some(at),
            updated_at: at,
            ..refund.clone()
        };
        t.db.save_refund(&saved(None, true)).await.expect("save");
        let stored = t.db.refund(refund.id).await.expect("read").expect("stored");
        assert_eq!(stored, saved(None, true));

        t.db.save_refund(&saved(Some("rf_1"), false))
            .await
            .expect("save");
        t.db.save_refund(&saved(None, false)).await.expect("save");
        t.db.save_refund(&saved(Some("rf_2"), false))
            .await
            .expect("save");
        let stored = t.db.refund(refund.id).await.expect("read").expect("stored");
        assert_eq!(stored, saved(Some("rf_1"), false), "the first id is kept");

        // An acquirer's final answer keeps it too, and a code a later version wrote reads as is.
        let done = finish_refund(&t.db, &saved(None, false), &declined()).await;
        t.exec(&format!(
            "UPDATE refunds SET error_code = 'LaterCode' WHERE id = '{}'",
            refund.id
        ));
        let stored = t.db.refund(refund.id).await.expect("read").expect("stored");
        assert_eq!(stored.acquirer_id.as_deref(), Some("rf_1"));
        assert_eq!(stored.updated_at, done.updated_at);
        let code = stored.decline().expect("declined").code;
        assert_eq!(code.as_str(), "LaterCode");
        assert!(matches!(code, DeclineCode::Unrecognized(_)));
    })
    .await;
}
