//! Chargebacks through the store on both backends: the hold may take the available balance
//! below zero (only it), payouts and refunds are refused while it is, the deposit's
//! chargebacks count against its refunds, a chargeback is stored once per acquirer id, its
//! evidence is taken once, and the reconciler's claims are leased.

use domain::dispute::{
    Dispute, DisputeFile, DisputeKind, DisputeStatus, EvidenceState, FileType, CHARGEBACK_REASON,
};
use domain::ledger::{chargeback_move, EntryKind};
use domain::operation::Operation;
use domain::ports::{
    ChargebackInsertError, DisputeChangeWrite, DisputeStore, EvidenceInsertError, NewChargeback,
    NewEvidence, RefundInsertError,
};
use domain::service::CreateError;
use domain::{Currency, DisputeId, Timestamp};

use crate::helpers::*;

const PDF: &[u8] = b"%PDF-1.7\n";

/// An open chargeback of `minor` units of `deposit` at `bank` under `acquirer_id`.
fn chargeback(deposit: &Operation, minor: i64, acquirer_id: &str) -> NewChargeback {
    let dispute = Dispute {
        id: DisputeId::from_uuid(uuid::Uuid::new_v4()),
        kind: DisputeKind::Chargeback,
        operation_id: deposit.id(),
        merchant_id: deposit.merchant_id().clone(),
        status: DisputeStatus::Open,
        reason: CHARGEBACK_REASON.into(),
        amount: rub(minor),
        currency: Currency::RUB,
        comment: None,
        due_by: Some(now().plus_seconds(3600)),
        resolution: None,
        created_at: now(),
        updated_at: now(),
    };
    NewChargeback {
        moves: vec![chargeback_move(&dispute, EntryKind::DisputeHold, now())],
        callbacks: Vec::new(),
        check_at: Some(now()),
        provider: "bank".into(),
        acquirer_id: acquirer_id.into(),
        dispute,
    }
}

/// `new` decided with `status` and its move.
fn decided(new: &NewChargeback, status: DisputeStatus, kind: EntryKind) -> DisputeChangeWrite {
    let done = new
        .dispute
        .decide(status, new.dispute.amount, None, now())
        .expect("undecided");
    DisputeChangeWrite {
        moves: vec![chargeback_move(&done, kind, now())],
        callback: None,
        dispute: done,
        evidence: None,
        check_at: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hold_may_take_available_below_zero_and_then_payouts_and_refunds_are_refused() {
    each_backend(|t| async move {
        let (shop, deposit) = shop_with_deposit(&t.db).await;
        // A refund of 40.00 leaves 60.00 available; a chargeback of 100.00 takes it to -40.00.
        refunded(&t.db, &deposit, 40_00).await;
        assert_eq!(balance(&t.db, &shop).await, (60_00, 40_00));
        let new = chargeback(&deposit, 100_00, "dsp_1");
        t.db.insert_chargeback(&new).await.expect("stored");
        assert_eq!(balance(&t.db, &shop).await, (-40_00, 140_00));

        // Every other move that takes from available is refused while it is negative.
        let refusal = refused(&t.db, &new_refund(&deposit, 1, None)).await;
        assert!(
            matches!(
                refusal,
                RefundInsertError::ExceedsAmount | RefundInsertError::InsufficientBalance
            ),
            "{refusal:?}"
        );
        let gw = gateway(&t.db);
        let payout = gw
            .creation()
            .create_withdrawal(&shop, withdrawal(1_00, None), b"w")
            .await;
        assert!(
            matches!(payout, Err(CreateError::InsufficientBalance)),
            "{payout:?}"
        );
        let other = approved_deposit(&t.db, &shop, 30_00).await;
        // 30.00 in: still -10.00 available, so a refund of the new deposit is refused too.
        assert_eq!(balance(&t.db, &shop).await, (-10_00, 140_00));
        assert!(matches!(
            refused(&t.db, &new_refund(&other, 10_00, None)).await,
            RefundInsertError::InsufficientBalance
        ));

        // Won: the hold comes back.
        t.db.change_dispute(&decided(
            &new,
            DisputeStatus::Won,
            EntryKind::DisputeReturned,
        ))
        .await
        .expect("won");
        assert_eq!(balance(&t.db, &shop).await, (90_00, 40_00));
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_other_move_may_take_available_below_zero() {
    each_backend(|t| async move {
        let (_, deposit) = shop_with_deposit(&t.db).await;
        let mut new = chargeback(&deposit, 100_00, "dsp_1");
        // Any other kind taking more than available holds: refused, nothing written.
        new.moves = vec![chargeback_move(
            &new.dispute,
            EntryKind::DisputeReturned,
            now(),
        )];
        new.moves[0].available = -200_00;
        new.moves[0].held = 0;
        assert!(t.db.insert_chargeback(&new).await.is_err());
        assert_eq!(t.rows("disputes"), 0);
        let mut lost = chargeback(&deposit, 100_00, "dsp_2");
        lost.moves = vec![chargeback_move(
            &lost.dispute,
            EntryKind::DisputeLost,
            now(),
        )];
        assert!(
            t.db.insert_chargeback(&lost).await.is_err(),
            "held would go below zero"
        );
        assert_eq!(t.rows("disputes"), 0);
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refunds_count_the_deposits_open_and_lost_chargebacks() {
    each_backend(|t| async move {
        let (shop, deposit) = funded_shop_with_deposit(&t.db, 500_00).await;
        let open = chargeback(&deposit, 30_00, "dsp_1");
        t.db.insert_chargeback(&open).await.expect("open");
        let lost = chargeback(&deposit, 30_00, "dsp_2");
        t.db.insert_chargeback(&lost).await.expect("open");
        t.db.change_dispute(&decided(&lost, DisputeStatus::Lost, EntryKind::DisputeLost))
            .await
            .expect("lost");
        let won = chargeback(&deposit, 30_00, "dsp_3");
        t.db.insert_chargeback(&won).await.expect("open");
        t.db.change_dispute(&decided(
            &won,
            DisputeStatus::Won,
            EntryKind::DisputeReturned,
        ))
        .await
        .expect("won");
        // 100.00 less 30.00 open and 30.00 lost (the won one counts no more): 40.00 left.
        assert!(matches!(
            refused(&t.db, &new_refund(&deposit, 40_01, None)).await,
            RefundInsertError::ExceedsAmount
        ));
        refunded(&t.db, &deposit, 40_00).await;
        assert_eq!(balance(&t.db, &shop).await, (600_00 - 60_00 - 40_00, 70_00));
        t.assert_ledger_verifies().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_chargeback_is_stored_once_per_acquirer_id() {
    each_backend(|t| async move {
        let (shop, deposit) = shop_with_deposit(&t.db).await;
        let first = chargeback(&deposit, 60_00, "dsp_1");
        t.db.insert_chargeback(&first).await.expect("stored");
        let again = chargeback(&deposit, 60_00, "dsp_1");
        assert!(matches!(
            t.db.insert_chargeback(&again).await,
            Err(ChargebackInsertError::Exists)
        ));
        assert_eq!(balance(&t.db, &shop).await, (40_00, 60_00), "held once");
        let found =
            t.db.chargeback_at("bank", "dsp_1")
                .await
                .expect("read")
                .expect("found");
        assert_eq!(found.dispute, first.dispute);
        assert_eq!(found.evidence, None);
        assert_eq!(
            t.db.chargeback(first.dispute.id).await.expect("read"),
            Some(found)
        );
        assert_eq!(
            t.db.chargeback_at("other", "dsp_1").await.expect("read"),
            None
        );
        t.assert_ledger_verifies().await;
    })
    .await;
}

fn evidence(id: DisputeId, files: usize, check_at: Timestamp) -> NewEvidence {
    NewEvidence {
        dispute_id: id,
        key: uuid::Uuid::new_v4(),
        text: Some("delivered".into()),
        files: (0..files)
            .map(|n| {
                DisputeFile::new(&format!("r{n}.pdf"), FileType::Pdf, PDF.to_vec()).expect("pdf")
            })
            .collect(),
        at: now(),
        check_at,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn evidence_is_taken_once_unless_it_failed_and_claims_are_leased() {
    each_backend(|t| async move {
        let (_, deposit) = shop_with_deposit(&t.db).await;
        let new = chargeback(&deposit, 60_00, "dsp_1");
        let id = new.dispute.id;
        t.db.insert_chargeback(&new).await.expect("stored");
        let later = now().plus_seconds(60);
        t.db.insert_evidence(&evidence(id, 2, later))
            .await
            .expect("taken");
        assert!(matches!(
            t.db.insert_evidence(&evidence(id, 1, later)).await,
            Err(EvidenceInsertError::NotTaken)
        ));
        let stored = t.db.chargeback(id).await.expect("read").expect("found");
        assert_eq!(stored.evidence, Some(EvidenceState::Pending));
        // Not due before the call's lease has passed.
        let claim = |at: Timestamp, owner: &'static str| {
            let db = t.db.clone();
            async move {
                db.claim_due_chargebacks(owner, at, at.plus_seconds(60), 10)
                    .await
                    .expect("claim")
            }
        };
        assert!(claim(now(), "a").await.is_empty());
        let due = later.plus_seconds(1);
        assert_eq!(claim(due, "a").await.len(), 1);
        assert!(claim(due, "b").await.is_empty(), "leased to a");

        // Failed: a second submission is taken, its files numbered after the first's.
        t.db.postpone_chargeback(id, Some(EvidenceState::Failed), later)
            .await
            .expect("failed");
        t.db.insert_evidence(&evidence(id, 1, later))
            .await
            .expect("taken again");
        let files = t.db.dispute_files(id).await.expect("files");
        assert_eq!(files.len(), 3);

        // Decided: nothing more is taken, and nothing is claimed.
        t.db.change_dispute(&decided(&new, DisputeStatus::Lost, EntryKind::DisputeLost))
            .await
            .expect("lost");
        t.db.postpone_chargeback(id, Some(EvidenceState::Failed), later)
            .await
            .expect("a decided one is left as it is");
        assert!(matches!(
            t.db.insert_evidence(&evidence(id, 1, later)).await,
            Err(EvidenceInsertError::NotTaken)
        ));
        assert!(claim(due.plus_seconds(3600), "c").await.is_empty());
        t.assert_ledger_verifies().await;
    })
    .await;
}
