//! Chargebacks: applied from the acquirer's notifications (open, won, lost, doubled, out of
//! order, after the decision), evidence forwarded once (answered, unavailable, unknown) and
//! the reconciler's reads that resolve what was not answered.

use futures::executor::block_on;

use super::acquirer::{at_bank, bank, BANK};
use super::fixtures::*;
use crate::acquirer::{
    AcquirerDispute, AcquirerDisputeStatus, CallResult, Lookup, Notification, NotifiedObject,
    PaymentStatus,
};
use crate::dispute::{
    Chargeback, Dispute, DisputeKind, DisputeStatus, EvidenceRequest, EvidenceState,
    CHARGEBACK_REASON,
};
use crate::ledger::EntryKind;
use crate::operation::Operation;
use crate::ports::{
    ChargebackInsertError, DisputeChangeError, DisputeChangeWrite, EvidenceInsertError,
    NewChargeback, NewEvidence,
};
use crate::service::{DisputeError, NotificationError};
use crate::testkit::dispute_id;
use crate::{Amount, Currency, Status};

/// Approved deposit `id(1)` of 100.00 at [`BANK`], with a callback URL.
fn deposit() -> Operation {
    deposit_builder(id(1))
        .status(Status::Approved)
        .provider(BANK)
        .callback(CALLBACK_URL)
        .build()
}

fn reported(status: AcquirerDisputeStatus) -> AcquirerDispute {
    AcquirerDispute {
        id: "dsp_1".into(),
        payment_id: "acq_1".into(),
        reference: id(1).to_string(),
        amount: Amount::parse("60.00", Currency::RUB).unwrap(),
        status,
        due_by: Some(now().plus_seconds(3600)),
        evidence: 0,
    }
}

fn notification(status: AcquirerDisputeStatus) -> Notification {
    Notification {
        object: NotifiedObject::Dispute,
        id: "dsp_1".into(),
        reference: id(1).to_string(),
        status: PaymentStatus::Pending,
        failure: None,
        dispute: Some(reported(status)),
    }
}

/// The chargeback of `deposit()` as stored, in `status`, with `evidence`.
fn stored(status: DisputeStatus, evidence: Option<EvidenceState>) -> Chargeback {
    Chargeback {
        dispute: Dispute {
            id: dispute_id(1),
            kind: DisputeKind::Chargeback,
            operation_id: id(1),
            merchant_id: merchant().id,
            status,
            reason: CHARGEBACK_REASON.into(),
            amount: Amount::parse("60.00", Currency::RUB).unwrap(),
            currency: Currency::RUB,
            comment: None,
            due_by: Some(now().plus_seconds(3600)),
            resolution: None,
            created_at: now(),
            updated_at: now(),
        },
        provider: BANK.into(),
        acquirer_id: "dsp_1".into(),
        evidence,
    }
}

/// Mocks at [`BANK`] that know `deposit()`, with ids for new disputes and changes.
fn mocks() -> Mocks {
    let mut mocks = at_bank();
    mocks.stored(deposit());
    mocks.ids.expect_dispute_id().return_const(dispute_id(1));
    mocks.ids.expect_change_id().returning(uuid::Uuid::new_v4);
    mocks.refunds.expect_refunds_of().returning(|_| Ok(vec![]));
    mocks
}

fn notify(mocks: Mocks, status: AcquirerDisputeStatus) -> Result<(), NotificationError> {
    block_on(
        mocks
            .gateway()
            .answers()
            .apply_notification(&bank(), notification(status)),
    )
}

fn knows_none(mocks: &mut Mocks) {
    mocks
        .disputes
        .expect_chargeback_at()
        .returning(|_, _| Ok(None));
}

fn knows(mocks: &mut Mocks, chargeback: Chargeback) {
    mocks
        .disputes
        .expect_chargeback_at()
        .returning(move |_, _| Ok(Some(chargeback.clone())));
}

fn expect_insert(mocks: &mut Mocks) -> Captured<NewChargeback> {
    let seen = Captured::default();
    mocks
        .disputes
        .expect_insert_chargeback()
        .times(1)
        .returning(seen.answering(|| Ok(())));
    seen
}

fn expect_change(mocks: &mut Mocks) -> Captured<DisputeChangeWrite> {
    let seen = Captured::default();
    mocks
        .disputes
        .expect_change_dispute()
        .times(1)
        .returning(seen.answering(|| Ok(())));
    seen
}

fn kinds(moves: &[crate::ledger::BalanceMove]) -> Vec<(EntryKind, i64, i64)> {
    moves
        .iter()
        .map(|m| (m.kind, m.available, m.held))
        .collect()
}

#[test]
fn an_open_chargeback_holds_its_amount_with_its_callback() {
    let mut mocks = mocks();
    knows_none(&mut mocks);
    let inserted = expect_insert(&mut mocks);
    notify(mocks, AcquirerDisputeStatus::Open).unwrap();
    let new = inserted.one();
    assert_eq!(
        (
            new.dispute.kind,
            new.dispute.status,
            new.dispute.reason.as_str()
        ),
        (DisputeKind::Chargeback, DisputeStatus::Open, "chargeback")
    );
    assert_eq!(
        (new.provider.as_str(), new.acquirer_id.as_str()),
        (BANK, "dsp_1")
    );
    assert_eq!(kinds(&new.moves), [(EntryKind::DisputeHold, -6000, 6000)]);
    assert_eq!(new.callbacks.len(), 1);
    assert_eq!(new.callbacks[0].data.status, DisputeStatus::Open);
    assert!(
        new.check_at.is_some(),
        "an open chargeback is read when quiet"
    );
}

#[test]
fn won_and_lost_return_or_remove_the_hold() {
    for (status, kind, done, available) in [
        (
            AcquirerDisputeStatus::Won,
            EntryKind::DisputeReturned,
            DisputeStatus::Won,
            6000,
        ),
        (
            AcquirerDisputeStatus::Lost,
            EntryKind::DisputeLost,
            DisputeStatus::Lost,
            0,
        ),
    ] {
        let mut mocks = mocks();
        knows(
            &mut mocks,
            stored(DisputeStatus::UnderReview, Some(EvidenceState::Forwarded)),
        );
        let changed = expect_change(&mut mocks);
        notify(mocks, status).unwrap();
        let change = changed.one();
        assert_eq!(change.dispute.status, done);
        assert_eq!(kinds(&change.moves), [(kind, available, -6000)]);
        assert_eq!(change.callback.unwrap().data.status, done);
        assert_eq!(change.check_at, None);
    }
}

#[test]
fn a_doubled_open_changes_nothing() {
    let mut mocks = mocks();
    knows(&mut mocks, stored(DisputeStatus::Open, None));
    mocks.disputes.expect_insert_chargeback().never();
    mocks.disputes.expect_change_dispute().never();
    notify(mocks, AcquirerDisputeStatus::Open).unwrap();
}

#[test]
fn a_concurrent_open_that_came_first_stands() {
    let mut mocks = mocks();
    let mut seen = 0;
    mocks
        .disputes
        .expect_chargeback_at()
        .returning(move |_, _| {
            seen += 1;
            Ok((seen > 1).then(|| stored(DisputeStatus::Open, None)))
        });
    mocks
        .disputes
        .expect_insert_chargeback()
        .times(1)
        .returning(|_| Err(ChargebackInsertError::Exists));
    mocks.disputes.expect_change_dispute().never();
    notify(mocks, AcquirerDisputeStatus::Open).unwrap();
}

#[test]
fn an_outcome_before_its_open_holds_and_decides_in_one_write() {
    for (status, outcome, net_available) in [
        (AcquirerDisputeStatus::Won, DisputeStatus::Won, 0),
        (AcquirerDisputeStatus::Lost, DisputeStatus::Lost, -6000),
    ] {
        let mut mocks = mocks();
        knows_none(&mut mocks);
        let inserted = expect_insert(&mut mocks);
        notify(mocks, status).unwrap();
        let new = inserted.one();
        assert_eq!(new.dispute.status, outcome);
        assert_eq!(net(&new.moves), (net_available, 0));
        let statuses: Vec<_> = new.callbacks.iter().map(|c| c.data.status).collect();
        assert_eq!(statuses, [DisputeStatus::Open, outcome]);
        assert_eq!(new.check_at, None);
    }
}

#[test]
fn a_report_about_a_decided_chargeback_is_acknowledged_and_ignored() {
    for status in [AcquirerDisputeStatus::Won, AcquirerDisputeStatus::Lost] {
        let mut mocks = mocks();
        knows(&mut mocks, stored(DisputeStatus::Lost, None));
        mocks.disputes.expect_change_dispute().never();
        notify(mocks, status).unwrap();
    }
}

#[test]
fn a_chargeback_of_no_deposit_at_this_provider_is_not_found() {
    let mut mocks = at_bank();
    mocks.store.expect_get().returning(|_| Ok(None));
    knows_none(&mut mocks);
    mocks.disputes.expect_insert_chargeback().never();
    assert!(matches!(
        notify(mocks, AcquirerDisputeStatus::Open),
        Err(NotificationError::NotFound)
    ));
}

fn request() -> EvidenceRequest {
    EvidenceRequest {
        text: Some("delivered".into()),
        files: vec![],
    }
}

/// Mocks with the open chargeback stored, taking its evidence.
fn evidence_mocks(chargeback: Chargeback) -> (Mocks, Captured<NewEvidence>) {
    let mut mocks = mocks();
    let dispute = chargeback.dispute.clone();
    mocks
        .disputes
        .expect_dispute()
        .returning(move |_| Ok(Some(dispute.clone())));
    mocks
        .disputes
        .expect_chargeback()
        .returning(move |_| Ok(Some(chargeback.clone())));
    let seen = Captured::default();
    mocks
        .disputes
        .expect_insert_evidence()
        .returning(seen.answering(|| Ok(())));
    (mocks, seen)
}

fn send(mocks: Mocks) -> Result<Dispute, DisputeError> {
    block_on(
        mocks
            .gateway()
            .disputes()
            .evidence(&merchant(), dispute_id(1), request()),
    )
}

fn answering(mocks: &mut Mocks, result: CallResult<AcquirerDispute>) {
    mocks
        .acquirer
        .expect_submit_evidence()
        .times(1)
        .returning(move |_, _, _| result.clone());
}

#[test]
fn answered_evidence_puts_the_chargeback_under_review() {
    let (mut mocks, stored_evidence) = evidence_mocks(stored(DisputeStatus::Open, None));
    let mut open = reported(AcquirerDisputeStatus::Open);
    open.evidence = 1;
    answering(&mut mocks, CallResult::Answered(open));
    let changed = expect_change(&mut mocks);
    let dispute = send(mocks).unwrap();
    assert_eq!(dispute.status, DisputeStatus::UnderReview);
    assert_eq!(stored_evidence.one().text.as_deref(), Some("delivered"));
    let change = changed.one();
    assert_eq!(change.evidence, Some(EvidenceState::Forwarded));
    assert!(change.moves.is_empty());
    assert_eq!(
        change.callback.unwrap().data.status,
        DisputeStatus::UnderReview
    );
}

#[test]
fn evidence_that_reached_nothing_is_marked_failed_and_unavailable() {
    let (mut mocks, _) = evidence_mocks(stored(DisputeStatus::Open, None));
    answering(&mut mocks, CallResult::Unavailable("HTTP 503".into()));
    mocks
        .disputes
        .expect_postpone_chargeback()
        .withf(|_, evidence, _| *evidence == Some(EvidenceState::Failed))
        .times(1)
        .returning(|_, _, _| Ok(()));
    mocks.disputes.expect_change_dispute().never();
    assert!(matches!(send(mocks), Err(DisputeError::Unavailable(_))));
}

#[test]
fn evidence_with_an_unknown_outcome_stays_pending_and_is_not_sent_again() {
    let (mut mocks, stored_evidence) = evidence_mocks(stored(DisputeStatus::Open, None));
    answering(&mut mocks, CallResult::Unknown("timeout".into()));
    mocks.disputes.expect_change_dispute().never();
    mocks.disputes.expect_postpone_chargeback().never();
    let dispute = send(mocks).unwrap();
    assert_eq!(dispute.status, DisputeStatus::Open);
    assert!(
        stored_evidence.one().check_at > now(),
        "read once the call's lease passed"
    );
}

#[test]
fn evidence_is_refused_unless_the_chargeback_takes_it() {
    for chargeback in [
        stored(DisputeStatus::Open, Some(EvidenceState::Pending)),
        stored(DisputeStatus::Open, Some(EvidenceState::Forwarded)),
        stored(DisputeStatus::UnderReview, Some(EvidenceState::Forwarded)),
        stored(DisputeStatus::Won, None),
    ] {
        let (mut mocks, _) = evidence_mocks(chargeback);
        mocks.acquirer.expect_submit_evidence().never();
        assert!(matches!(send(mocks), Err(DisputeError::InvalidState)));
    }
    // A concurrent sender stored its evidence first.
    let (mut mocks, _) = evidence_mocks(stored(DisputeStatus::Open, None));
    mocks.disputes = crate::ports::MockDisputeStore::new();
    let open = stored(DisputeStatus::Open, None);
    let dispute = open.dispute.clone();
    mocks
        .disputes
        .expect_dispute()
        .returning(move |_| Ok(Some(dispute.clone())));
    mocks
        .disputes
        .expect_chargeback()
        .returning(move |_| Ok(Some(open.clone())));
    mocks
        .disputes
        .expect_insert_evidence()
        .returning(|_| Err(EvidenceInsertError::NotTaken));
    mocks.acquirer.expect_submit_evidence().never();
    assert!(matches!(send(mocks), Err(DisputeError::InvalidState)));
}

#[test]
fn another_merchants_chargeback_is_not_found() {
    let (mut mocks, _) = evidence_mocks(stored(DisputeStatus::Open, None));
    mocks.acquirer.expect_submit_evidence().never();
    let result = block_on(mocks.gateway().disputes().evidence(
        &other_merchant(),
        dispute_id(1),
        request(),
    ));
    assert!(matches!(result, Err(DisputeError::NotFound)));
}

/// Mocks whose reconciler claims `chargeback` once and reads `found` for it.
fn claiming(chargeback: Chargeback, found: Lookup<AcquirerDispute>) -> Mocks {
    let mut mocks = mocks();
    mocks
        .disputes
        .expect_claim_due_chargebacks()
        .times(1)
        .returning(move |_, _, _, _| Ok(vec![chargeback.clone()]));
    mocks
        .acquirer
        .expect_find_dispute()
        .times(1)
        .returning(move |_, _| found.clone());
    mocks
}

fn check(mocks: Mocks) -> usize {
    block_on(mocks.gateway().answers().check_chargebacks("me")).unwrap()
}

#[test]
fn a_read_that_counts_the_evidence_puts_it_under_review() {
    let mut found = reported(AcquirerDisputeStatus::Open);
    found.evidence = 1;
    let mut mocks = claiming(
        stored(DisputeStatus::Open, Some(EvidenceState::Pending)),
        Lookup::Found(found),
    );
    let changed = expect_change(&mut mocks);
    assert_eq!(check(mocks), 1);
    let change = changed.one();
    assert_eq!(change.dispute.status, DisputeStatus::UnderReview);
    assert_eq!(change.evidence, Some(EvidenceState::Forwarded));
}

#[test]
fn a_read_that_counts_no_evidence_marks_it_failed() {
    let mut mocks = claiming(
        stored(DisputeStatus::Open, Some(EvidenceState::Pending)),
        Lookup::Found(reported(AcquirerDisputeStatus::Open)),
    );
    mocks
        .disputes
        .expect_postpone_chargeback()
        .withf(|_, evidence, _| *evidence == Some(EvidenceState::Failed))
        .times(1)
        .returning(|_, _, _| Ok(()));
    mocks.disputes.expect_change_dispute().never();
    assert_eq!(check(mocks), 1);
}

#[test]
fn a_read_finds_an_outcome_whose_notification_was_dropped() {
    let mut mocks = claiming(
        stored(DisputeStatus::UnderReview, Some(EvidenceState::Forwarded)),
        Lookup::Found(reported(AcquirerDisputeStatus::Lost)),
    );
    let changed = expect_change(&mut mocks);
    assert_eq!(check(mocks), 1);
    let change = changed.one();
    assert_eq!(change.dispute.status, DisputeStatus::Lost);
    assert_eq!(kinds(&change.moves), [(EntryKind::DisputeLost, 0, -6000)]);
}

#[test]
fn a_failed_read_is_made_again_later() {
    let mut mocks = claiming(
        stored(DisputeStatus::Open, Some(EvidenceState::Pending)),
        Lookup::Failed("timeout".into()),
    );
    mocks
        .disputes
        .expect_postpone_chargeback()
        .withf(|_, evidence, at| evidence.is_none() && *at > now())
        .times(1)
        .returning(|_, _, _| Ok(()));
    assert_eq!(check(mocks), 1);
}

#[test]
fn a_chargeback_decided_meanwhile_stays_decided() {
    let mut mocks = mocks();
    knows(&mut mocks, stored(DisputeStatus::Open, None));
    mocks
        .disputes
        .expect_change_dispute()
        .times(1)
        .returning(|_| Err(DisputeChangeError::Decided));
    mocks
        .disputes
        .expect_dispute()
        .returning(|_| Ok(Some(stored(DisputeStatus::Won, None).dispute)));
    notify(mocks, AcquirerDisputeStatus::Lost).unwrap();
}
