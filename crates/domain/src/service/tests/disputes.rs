//! Appeals: opened in the contract's order (the deposit, the amount, its status and age, one
//! open at a time), decided once by an operator with the deposit's stored tariff, each
//! change written with its callback.

use futures::executor::block_on;

use super::fixtures::*;
use crate::dispute::{AppealReason, AppealRequest, Dispute, DisputeStatus};
use crate::fee::{Fee, FeeTerms, Percent};
use crate::ledger::EntryKind;
use crate::operation::{Decline, DeclineCode, Operation};
use crate::ports::{AppealInsertError, DisputeChangeError, DisputeChangeWrite, NewAppeal};
use crate::service::{DecideError, DisputeError};
use crate::testkit::dispute_id;
use crate::{Amount, AmountText, Currency, Status};

/// Deposit `id(1)` of [`merchant`], 100.00, in `status`, with a callback URL and a 2 % fee
/// kept from its creation.
fn deposit(status: Status) -> Operation {
    let terms = FeeTerms::new(Percent::parse("2").unwrap(), 0, None, None).unwrap();
    let builder = deposit_builder(id(1)).callback(CALLBACK_URL).fee(Fee::of(
        Some(terms),
        Amount::parse("100.00", Currency::RUB).unwrap(),
    ));
    match status {
        Status::Declined => builder.declined(Decline::new(DeclineCode::Expired)).build(),
        _ => builder.status(status).build(),
    }
}

fn request(reason: AppealReason, paid: &str) -> AppealRequest {
    AppealRequest {
        reason,
        paid_amount: AmountText::parse(paid).unwrap(),
        comment: Some("paid at 10:02".into()),
        receipt: None,
    }
}

fn with(deposit: Operation) -> Mocks {
    let mut mocks = Mocks::new();
    mocks.stored(deposit);
    mocks.ids.expect_dispute_id().return_const(dispute_id(1));
    mocks.ids.expect_change_id().returning(uuid::Uuid::new_v4);
    mocks
}

fn appeal(mocks: Mocks, request: AppealRequest) -> Result<Dispute, DisputeError> {
    block_on(
        mocks
            .gateway()
            .disputes()
            .appeal(&merchant(), id(1), request),
    )
}

fn expect_insert(
    mocks: &mut Mocks,
    result: impl Fn() -> Result<(), AppealInsertError> + Send + 'static,
) -> Captured<NewAppeal> {
    let seen = Captured::default();
    mocks
        .disputes
        .expect_insert_appeal()
        .times(1)
        .returning(seen.answering(result));
    seen
}

/// An open appeal of `id(1)` for `reason` at `amount`, stored.
fn open(mocks: &mut Mocks, reason: AppealReason, amount: &str) -> Dispute {
    let appeal = Dispute {
        operation_id: id(1),
        ..crate::testkit::appeal_of(1, amount, reason)
    };
    let stored = appeal.clone();
    mocks
        .disputes
        .expect_dispute()
        .returning(move |_| Ok(Some(stored.clone())));
    appeal
}

fn expect_change(
    mocks: &mut Mocks,
    result: impl Fn() -> Result<(), DisputeChangeError> + Send + 'static,
) -> Captured<DisputeChangeWrite> {
    let seen = Captured::default();
    mocks
        .disputes
        .expect_change_dispute()
        .times(1)
        .returning(seen.answering(result));
    seen
}

#[test]
fn an_appeal_of_a_declined_deposit_is_stored_open_with_its_open_callback() {
    let mut mocks = with(deposit(Status::Declined));
    let seen = expect_insert(&mut mocks, || Ok(()));
    let opened = appeal(mocks, request(AppealReason::PaidNotCredited, "100.00")).unwrap();
    assert_eq!(opened.status, DisputeStatus::Open);
    assert_eq!(opened.reason, "paid_not_credited");
    assert_eq!(opened.amount.minor(), 10_000);
    assert_eq!((opened.operation_id, opened.created_at), (id(1), now()));
    let new = seen.one();
    assert_eq!(new.dispute, opened);
    let callback = new.callback.expect("the deposit has a callback URL");
    assert_eq!(callback.data, opened);
    assert_eq!(callback.direction, crate::Direction::Deposit);
    assert_eq!(callback.dispute.map(|d| d.dispute_id), Some(dispute_id(1)));
}

#[test]
fn each_reason_is_refused_on_a_deposit_in_the_other_final_status_or_still_processing() {
    for (status, reason) in [
        (Status::Approved, AppealReason::PaidNotCredited),
        (Status::Declined, AppealReason::WrongAmount),
        (Status::Processing, AppealReason::PaidNotCredited),
        (Status::Processing, AppealReason::WrongAmount),
    ] {
        let mut mocks = with(deposit(status));
        mocks.disputes.expect_insert_appeal().never();
        let refused = appeal(mocks, request(reason, "100.00"));
        assert!(
            matches!(refused, Err(DisputeError::InvalidState)),
            "{status:?} {reason:?}"
        );
    }
}

#[test]
fn an_appeal_after_thirty_days_is_refused_and_on_the_last_day_accepted() {
    let day = 24 * 3600;
    for (age, allowed) in [(30 * day, true), (30 * day + 1, false)] {
        let mut mocks = Mocks::new();
        let old = deposit_builder(id(1))
            .created(now().plus_seconds(-age))
            .declined(Decline::new(DeclineCode::Expired))
            .build();
        mocks.stored(old);
        mocks.ids.expect_dispute_id().return_const(dispute_id(1));
        mocks.ids.expect_change_id().returning(uuid::Uuid::new_v4);
        mocks
            .disputes
            .expect_insert_appeal()
            .times(usize::from(allowed))
            .returning(|_| Ok(()));
        let answer = appeal(mocks, request(AppealReason::PaidNotCredited, "100.00"));
        assert_eq!(answer.is_ok(), allowed, "{age} s old");
    }
}

#[test]
fn a_second_open_appeal_is_invalid_state_and_a_bad_amount_invalid() {
    let mut mocks = with(deposit(Status::Declined));
    expect_insert(&mut mocks, || Err(AppealInsertError::OpenExists));
    assert!(matches!(
        appeal(mocks, request(AppealReason::PaidNotCredited, "100.00")),
        Err(DisputeError::InvalidState)
    ));
    let mut mocks = with(deposit(Status::Declined));
    mocks.disputes.expect_insert_appeal().never();
    match appeal(mocks, request(AppealReason::PaidNotCredited, "1.005")) {
        Err(DisputeError::Invalid(errors)) => assert_eq!(errors.0[0].field, "paidAmount"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn another_merchants_deposit_or_a_payout_is_not_found() {
    let mut mocks = Mocks::new();
    mocks.stored(payout(id(1)));
    assert!(matches!(
        appeal(mocks, request(AppealReason::PaidNotCredited, "1.00")),
        Err(DisputeError::NotFound)
    ));
}

#[test]
fn accepting_credits_the_amount_less_the_deposits_stored_fee_with_one_callback() {
    let mut mocks = with(deposit(Status::Declined));
    open(&mut mocks, AppealReason::PaidNotCredited, "100.00");
    // Today's tariff is 10 %: the deposit's own 2 % applies.
    mocks.set_tariff(
        crate::fee::FeeDirection::Deposit,
        FeeTerms::new(Percent::parse("10").unwrap(), 0, None, None).unwrap(),
    );
    let seen = expect_change(&mut mocks, || Ok(()));
    let gateway = mocks.gateway();
    let done = block_on(
        gateway
            .disputes()
            .accept(dispute_id(1), None, Some("receipt ok".into())),
    )
    .unwrap();
    assert_eq!(done.status, DisputeStatus::Accepted);
    assert_eq!(done.resolution.as_deref(), Some("receipt ok"));
    let change = seen.one();
    let moves: Vec<_> = change.moves.iter().map(|m| (m.kind, m.available)).collect();
    assert_eq!(
        moves,
        vec![
            (EntryKind::Appeal, 10_000),
            (EntryKind::Fee, -200),
            (EntryKind::FeeIncome, 200)
        ]
    );
    assert_eq!(
        change.callback.expect("callback").data.status,
        DisputeStatus::Accepted
    );
}

#[test]
fn accepting_at_another_amount_and_rejecting_move_what_they_say() {
    let mut mocks = with(deposit(Status::Declined));
    open(&mut mocks, AppealReason::PaidNotCredited, "100.00");
    let seen = expect_change(&mut mocks, || Ok(()));
    let done = block_on(mocks.gateway().disputes().accept(
        dispute_id(1),
        Some(AmountText::parse("50.00").unwrap()),
        None,
    ))
    .unwrap();
    assert_eq!(done.amount.minor(), 5_000);
    assert_eq!(crate::ledger::appeal_net(&seen.one().moves), 4_900);

    let mut mocks = with(deposit(Status::Declined));
    open(&mut mocks, AppealReason::PaidNotCredited, "100.00");
    let seen = expect_change(&mut mocks, || Ok(()));
    let done = block_on(
        mocks
            .gateway()
            .disputes()
            .reject(dispute_id(1), Some("no".into())),
    )
    .unwrap();
    assert_eq!(done.status, DisputeStatus::Rejected);
    assert!(seen.one().moves.is_empty());
}

#[test]
fn a_decided_or_unknown_dispute_cannot_be_decided() {
    let mut mocks = with(deposit(Status::Declined));
    let decided = Dispute {
        status: DisputeStatus::Rejected,
        ..crate::testkit::appeal_of(1, "1.00", AppealReason::PaidNotCredited)
    };
    mocks
        .disputes
        .expect_dispute()
        .returning(move |_| Ok(Some(decided.clone())));
    mocks.disputes.expect_change_dispute().never();
    let gateway = mocks.gateway();
    assert!(matches!(
        block_on(gateway.disputes().accept(dispute_id(1), None, None)),
        Err(DecideError::NotOpenAppeal)
    ));
    let mut mocks = with(deposit(Status::Declined));
    mocks.disputes.expect_dispute().returning(|_| Ok(None));
    assert!(matches!(
        block_on(mocks.gateway().disputes().reject(dispute_id(9), None)),
        Err(DecideError::NotFound)
    ));
    // Another operator decided it between the read and the write.
    let mut mocks = with(deposit(Status::Declined));
    open(&mut mocks, AppealReason::PaidNotCredited, "1.00");
    expect_change(&mut mocks, || Err(DisputeChangeError::Decided));
    assert!(matches!(
        block_on(mocks.gateway().disputes().reject(dispute_id(1), None)),
        Err(DecideError::NotOpenAppeal)
    ));
}

#[test]
fn a_lowered_wrong_amount_that_the_balance_cannot_cover_is_refused() {
    let mut mocks = with(deposit(Status::Approved));
    open(&mut mocks, AppealReason::WrongAmount, "50.00");
    expect_change(&mut mocks, || Err(DisputeChangeError::InsufficientBalance));
    assert!(matches!(
        block_on(mocks.gateway().disputes().accept(dispute_id(1), None, None)),
        Err(DecideError::InsufficientBalance)
    ));
}

#[test]
fn an_amount_whose_fee_takes_it_all_is_refused_before_anything_is_written() {
    let mut mocks = Mocks::new();
    let terms = FeeTerms::new(Percent::ZERO, 500, None, None).unwrap();
    mocks.stored(
        deposit_builder(id(1))
            .fee(Fee::of(
                Some(terms),
                Amount::parse("100.00", Currency::RUB).unwrap(),
            ))
            .declined(Decline::new(DeclineCode::Expired))
            .build(),
    );
    mocks.ids.expect_change_id().returning(uuid::Uuid::new_v4);
    open(&mut mocks, AppealReason::PaidNotCredited, "100.00");
    mocks.disputes.expect_change_dispute().never();
    assert!(matches!(
        block_on(mocks.gateway().disputes().accept(
            dispute_id(1),
            Some(AmountText::parse("5.00").unwrap()),
            None
        )),
        Err(DecideError::AmountTooSmall)
    ));
}

#[test]
fn a_merchant_reads_only_its_own_disputes() {
    let mut mocks = Mocks::new();
    let mine = crate::testkit::appeal_of(1, "1.00", AppealReason::PaidNotCredited);
    mocks
        .disputes
        .expect_dispute()
        .returning(move |_| Ok(Some(mine.clone())));
    let gateway = mocks.gateway();
    assert!(block_on(gateway.disputes().read(&merchant(), dispute_id(1))).is_ok());
    assert!(matches!(
        block_on(gateway.disputes().read(&other_merchant(), dispute_id(1))),
        Err(crate::service::ReadError::NotFound)
    ));
}
