//! Fees at creation: fixed from the merchant's tariff when the operation is created, held
//! with a payout's amount, and `AmountTooSmall` for a deposit that would pay it all.

use super::create_deposit::provider_waits;
use super::fixtures::*;
use crate::fee::{Fee, FeeDirection, FeeTerms, Percent};
use crate::ledger::EntryKind;
use crate::operation::Outcome;
use crate::ports::PayoutStart;
use crate::service::CreateError;
use crate::{Direction, Status};

/// 2.5 % + 10.00, at least 15.00.
fn card_terms() -> FeeTerms {
    FeeTerms::new(Percent::parse("2.5").unwrap(), 1_000, Some(1_500), None).unwrap()
}

/// Mocks whose merchant's deposits are priced by [`card_terms`].
fn card_tariff() -> Mocks {
    let mut mocks = Mocks::new();
    mocks.set_tariff(FeeDirection::Deposit, card_terms());
    mocks
}

#[test]
fn a_deposit_keeps_the_fee_of_its_tariff_and_credits_its_amount_less_the_fee() {
    let mut mocks = card_tariff();
    provider_waits(&mut mocks);

    let (created, new) = mocks.stores_deposit(deposit_request("100.00", "card", false, false));

    let expected = Fee {
        amount: 1_500,
        terms: Some(card_terms()),
    };
    assert_eq!(created.operation.fee(), expected);
    assert_eq!(new.operation.fee(), expected);
    assert!(
        new.moves.is_empty(),
        "a deposit moves nothing until approved"
    );
    let (_, completion) = completed(created.operation, Outcome::Approve);
    let moves: Vec<_> = completion
        .moves
        .iter()
        .map(|m| (m.kind, m.available, m.held))
        .collect();
    assert_eq!(
        moves,
        vec![
            (EntryKind::DepositApproved, 10_000, 0),
            (EntryKind::Fee, -1_500, 0),
            (EntryKind::FeeIncome, 1_500, 0),
        ]
    );
}

#[test]
fn a_deposit_whose_fee_would_take_all_of_it_is_amount_too_small_and_creates_nothing() {
    for amount in ["15.00", "10.00", "0.01"] {
        let mut mocks = card_tariff();
        mocks.expect_no_deposit_started();

        let refused = mocks.create_deposit(deposit_request(amount, "card", false, false));

        assert!(
            matches!(refused, Err(CreateError::AmountTooSmall)),
            "{amount}: {refused:?}"
        );
    }
}

#[test]
fn a_deposit_just_above_its_fee_is_created() {
    let mut mocks = card_tariff();
    provider_waits(&mut mocks);

    let (created, _) = mocks.stores_deposit(deposit_request("15.01", "card", false, false));

    assert_eq!(created.operation.fee().amount, 1_500);
}

#[test]
fn an_earlier_deposit_answers_its_replay_even_when_its_fee_is_now_too_large() {
    let earlier = deposit_builder(existing_id())
        .status(Status::Approved)
        .build();
    let mut mocks = card_tariff();
    mocks.earlier(Direction::Deposit, earlier.clone(), CANONICAL);
    mocks.expect_no_deposit_started();

    let replay = mocks
        .create_deposit(deposit_request("10.00", "card", true, false))
        .unwrap();

    assert_replay_of(&replay, &earlier);
}

#[test]
fn a_payout_holds_its_amount_and_its_fee() {
    let terms = FeeTerms::new(Percent::parse("1").unwrap(), 0, None, None).unwrap();
    let mut mocks = Mocks::new();
    mocks.set_tariff(FeeDirection::Withdrawal, terms);
    mocks
        .provider
        .expect_start_payout()
        .times(1)
        .returning(|_, _, _| {
            Ok(PayoutStart::Accepted {
                state: None,
                due_at: now().plus_seconds(2),
            })
        });

    let (created, new) =
        mocks.stores_withdrawal(withdrawal_request("1000.00", "card", false, false));

    assert_eq!(
        created.operation.fee(),
        Fee {
            amount: 1_000,
            terms: Some(terms)
        }
    );
    let holds: Vec<_> = new
        .moves
        .iter()
        .map(|m| (m.kind, m.available, m.held))
        .collect();
    assert_eq!(holds, vec![(EntryKind::WithdrawalHold, -101_000, 101_000)]);
}

#[test]
fn no_tariff_no_fee() {
    let mut mocks = Mocks::new();
    provider_waits(&mut mocks);

    let (created, _) = mocks.stores_deposit(deposit_request("100.00", "card", false, false));

    assert_eq!(created.operation.fee(), Fee::NONE);
}
