//! Refunds (created in the contract's order, settled by the sandbox, carried out at an
//! acquirer once and resolved by reading) and the merchant's cancel.

use futures::executor::block_on;

use super::fixtures::*;
use crate::acquirer::{AcquirerRefund, CallResult, Lookup, RefundStatus};
use crate::attempt::{Attempt, AttemptState};
use crate::ledger::EntryKind;
use crate::operation::{Decline, DeclineCode, Operation, State};
use crate::ports::{FinishError, NewRefund, ProviderVerdict, RefundCompletion, RefundInsertError};
use crate::refund::{Refund, RefundRequest};
use crate::service::{CancelError, CreatedRefund, RefundError};
use crate::testkit::{finished_meanwhile, refund_id};
use crate::{Amount, AmountText, Direction, HttpUrl, MerchantRefundId, Status};

const BODY: &[u8] = br#"{"amount":"30.00"}"#;

/// Approved 100.00 card deposit `id(1)` of [`merchant`] at the sandbox, with a callback URL.
fn approved() -> Operation {
    deposit_builder(id(1))
        .status(Status::Approved)
        .callback(CALLBACK_URL)
        .build()
}

fn request(amount: &str, mrid: Option<&str>) -> RefundRequest {
    RefundRequest {
        amount: AmountText::parse(amount).unwrap(),
        merchant_refund_id: mrid.map(|m| MerchantRefundId::parse(m).unwrap()),
        callback_url: None,
    }
}

/// Mocks with `deposit` stored and refund ids from [`refund_id`]`(1)`.
fn with_deposit(deposit: Operation) -> Mocks {
    let mut mocks = Mocks::new();
    mocks.stored(deposit);
    mocks.ids.expect_refund_id().return_const(refund_id(1));
    mocks
}

fn refund(mocks: Mocks, request: RefundRequest) -> Result<CreatedRefund, RefundError> {
    block_on(
        mocks
            .gateway()
            .refunds()
            .refund(&merchant(), id(1), request, BODY),
    )
}

/// Expects one refund insert answering `result`; returns what was inserted.
fn expect_insert(
    mocks: &mut Mocks,
    result: impl Fn() -> Result<(), RefundInsertError> + Send + 'static,
) -> Captured<NewRefund> {
    let seen = Captured::default();
    mocks
        .refunds
        .expect_insert_refund()
        .times(1)
        .returning(seen.answering(result));
    seen
}

fn expect_finish(mocks: &mut Mocks) -> Captured<RefundCompletion> {
    let seen = Captured::default();
    mocks
        .refunds
        .expect_finish_refund()
        .times(1)
        .returning(seen.answering(|| Ok(())));
    seen
}

/// A processing sandbox refund of 30.00 of `id(1)`, created now.
fn processing(provider: &str) -> Refund {
    Refund {
        id: refund_id(1),
        operation_id: id(1),
        merchant_id: merchant().id,
        merchant_refund_id: None,
        amount: Amount::parse("30.00", crate::Currency::RUB).unwrap(),
        currency: crate::Currency::RUB,
        state: State::Processing,
        callback_url: Some(HttpUrl::parse(CALLBACK_URL).unwrap()),
        provider: provider.into(),
        acquirer_id: None,
        check_at: Some(now()),
        unknown_since: None,
        created_at: now(),
        updated_at: now(),
        fee: crate::fee::Fee::NONE,
    }
}

/// Approved 1500 JPY card deposit `id(1)` of [`merchant`] at the sandbox.
fn approved_in_yen() -> Operation {
    deposit_builder(id(1))
        .currency(crate::Currency::parse("JPY").unwrap())
        .minor(1500)
        .status(Status::Approved)
        .callback(CALLBACK_URL)
        .build()
}

#[test]
fn a_refund_amount_has_its_deposits_fraction_digits() {
    // Kopecks of a yen deposit: refused naming amount, nothing stored or asked.
    let refused = refund(with_deposit(approved_in_yen()), request("5.00", None));
    match refused {
        Err(RefundError::Invalid(errors)) => {
            assert_eq!(errors.0.len(), 1, "{errors:?}");
            assert_eq!(errors.0[0].field, "amount");
        }
        other => panic!("expected Invalid, got {other:?}"),
    }

    let (mocks, inserted) = at_the_sandbox(approved_in_yen());
    refund(mocks, request("500", None)).unwrap();
    let new = inserted.one();
    assert_eq!(new.refund.amount.minor(), 500);
    assert_eq!(new.refund.currency.as_str(), "JPY");
}

/// Mocks with `deposit` stored, a sandbox that settles a refund in 2 s and one insert.
fn at_the_sandbox(deposit: Operation) -> (Mocks, Captured<NewRefund>) {
    let mut mocks = with_deposit(deposit);
    mocks
        .provider
        .expect_start_refund()
        .times(1)
        .returning(|_| Ok(now().plus_seconds(2)));
    let inserted = expect_insert(&mut mocks, || Ok(()));
    (mocks, inserted)
}

#[test]
fn a_sandbox_refund_is_stored_processing_with_its_hold_and_settles_later() {
    let (mocks, inserted) = at_the_sandbox(approved());
    let created = refund(mocks, request("30.00", None)).unwrap();

    assert!(!created.replayed);
    let new = inserted.one();
    assert_eq!(new.refund, created.refund);
    assert_eq!(new.refund.status(), Status::Processing);
    assert_eq!(new.refund.operation_id, id(1));
    assert_eq!(new.refund.provider, "sandbox");
    assert_eq!(new.refund.check_at, Some(now().plus_seconds(2)));
    assert_eq!(
        new.refund.callback_url.as_ref().map(HttpUrl::as_str),
        Some(CALLBACK_URL),
        "the deposit's callback URL by default"
    );
    assert_eq!(new.fingerprint, None);
    assert_eq!(
        (new.hold.kind, new.hold.available, new.hold.held),
        (EntryKind::RefundHold, -3_000, 3_000)
    );
    assert_eq!(new.hold.refund_id, Some(refund_id(1)));
    assert_eq!(new.hold.operation_id, Some(id(1)));
}

#[test]
fn a_refund_pays_its_own_tariffs_fee_and_holds_it_with_its_amount() {
    let (mut mocks, inserted) = at_the_sandbox(approved());
    let terms = crate::fee::FeeTerms::new(crate::fee::Percent::parse("1").unwrap(), 20, None, None)
        .unwrap();
    mocks.set_tariff(crate::fee::FeeDirection::Refund, terms);

    let created = refund(mocks, request("30.00", None)).unwrap();

    // 1 % of 30.00 is 0.30, plus 0.20.
    let expected = crate::fee::Fee {
        amount: 50,
        terms: Some(terms),
    };
    assert_eq!(created.refund.fee, expected);
    let new = inserted.one();
    assert_eq!(new.refund.fee, expected);
    assert_eq!(
        (new.hold.kind, new.hold.available, new.hold.held),
        (EntryKind::RefundHold, -3_050, 3_050)
    );
}

#[test]
fn refusals_come_in_the_contracts_order_and_create_nothing() {
    // Another merchant's deposit is unknown.
    let mut mocks = with_deposit(approved());
    mocks.refunds.expect_insert_refund().never();
    let other = block_on(mocks.gateway().refunds().refund(
        &other_merchant(),
        id(1),
        request("1.00", None),
        BODY,
    ));
    assert!(matches!(other, Err(RefundError::NotFound)));

    // A deposit not approved is InvalidState before any amount check.
    let mut mocks = with_deposit(deposit(id(1)));
    mocks.refunds.expect_insert_refund().never();
    assert!(matches!(
        refund(mocks, request("1000.00", None)),
        Err(RefundError::InvalidState)
    ));

    // The store's refusals, each its own error.
    type Refusal = fn() -> RefundInsertError;
    let refusals: [(Refusal, &str); 3] = [
        (|| RefundInsertError::NotApproved, "InvalidState"),
        (|| RefundInsertError::ExceedsAmount, "ExceedsAmount"),
        (
            || RefundInsertError::InsufficientBalance,
            "InsufficientBalance",
        ),
    ];
    for (refusal, expected) in refusals {
        let mut mocks = with_deposit(approved());
        mocks
            .provider
            .expect_start_refund()
            .returning(|_| Ok(now()));
        expect_insert(&mut mocks, move || Err(refusal()));
        let error = refund(mocks, request("30.00", None)).unwrap_err();
        assert_eq!(format!("{error:?}"), expected);
    }
}

#[test]
fn a_merchant_refund_id_replays_the_same_request_and_refuses_another() {
    let keys = merchant().deposit_keys;
    let mut canonical = id(1).to_string().into_bytes();
    canonical.push(b'\n');
    canonical.extend_from_slice(BODY);
    let fingerprint = crate::signature::Fingerprint::of(keys.newest(), &canonical);
    let earlier = Refund {
        merchant_refund_id: Some(MerchantRefundId::parse("r-1").unwrap()),
        ..processing("sandbox")
    };

    let mut mocks = with_deposit(approved());
    let (stored, print) = (earlier.clone(), fingerprint.clone());
    mocks
        .refunds
        .expect_find_by_merchant_refund_id()
        .returning(move |_, _| Ok(Some((stored.clone(), Some(print.clone())))));
    mocks.refunds.expect_insert_refund().never();
    let replay = refund(mocks, request("30.00", Some("r-1"))).unwrap();
    assert_eq!((replay.refund, replay.replayed), (earlier.clone(), true));

    // The same id with another body, or on another deposit (the fingerprint covers the
    // deposit's id), is a duplicate.
    let mut mocks = with_deposit(approved());
    mocks
        .refunds
        .expect_find_by_merchant_refund_id()
        .returning(move |_, _| Ok(Some((earlier.clone(), Some(fingerprint.clone())))));
    mocks.refunds.expect_insert_refund().never();
    let other_body = br#"{"amount":"31.00"}"#;
    let answer = block_on(mocks.gateway().refunds().refund(
        &merchant(),
        id(1),
        request("31.00", Some("r-1")),
        other_body,
    ));
    assert!(matches!(answer, Err(RefundError::DuplicateRefund)));
}

#[test]
fn a_sandbox_refund_settles_with_its_moves_and_callback() {
    for (verdict, status, kind, available) in [
        (
            ProviderVerdict::Approve,
            Status::Approved,
            EntryKind::RefundPaid,
            0,
        ),
        (
            ProviderVerdict::Decline(Decline::new(DeclineCode::ProviderDeclined)),
            Status::Declined,
            EntryKind::RefundReleased,
            3_000,
        ),
    ] {
        let mut mocks = Mocks::new();
        mocks
            .refunds
            .expect_claim_due_refunds()
            .withf(|owner, at, _, _| owner == "me" && *at == now())
            .returning(|_, _, _, _| Ok(vec![processing("sandbox")]));
        mocks
            .provider
            .expect_poll_refund()
            .returning(move |_, _| Ok(verdict.clone()));
        let finished = expect_finish(&mut mocks);
        assert_eq!(
            block_on(mocks.gateway().answers().settle_refunds("me")).unwrap(),
            1
        );

        let completion = finished.one();
        assert_eq!(completion.refund.status(), status);
        let moves: Vec<_> = completion
            .moves
            .iter()
            .map(|m| (m.kind, m.available, m.held, m.refund_id))
            .collect();
        assert_eq!(moves, vec![(kind, available, -3_000, Some(refund_id(1)))]);
        let callback = completion.callback.unwrap();
        assert_eq!(
            (callback.refund_id, callback.operation_id),
            (Some(refund_id(1)), id(1))
        );
        assert_eq!(callback.data.status, status);
        assert_eq!(callback.url.as_str(), CALLBACK_URL);
    }
}

/// Mocks with approved deposit `id(1)` taken by acquirer `bank` as `acq_1`.
fn at_bank() -> Mocks {
    let deposit = deposit_builder(id(1))
        .status(Status::Approved)
        .callback(CALLBACK_URL)
        .provider("bank")
        .build();
    let mut mocks = with_deposit(deposit);
    let mut attempt = Attempt::sent(id(1), 1, 1, "bank", now(), now());
    attempt.state = AttemptState::Ok;
    attempt.acquirer_id = Some("acq_1".into());
    mocks
        .store
        .expect_attempts()
        .returning(move |_| Ok(vec![attempt.clone()]));
    mocks
        .providers
        .expect_acquirer()
        .returning(|_| Ok(Some(acquirer("bank", 5))));
    mocks
}

#[test]
fn an_acquirer_refund_is_committed_before_its_one_call() {
    for (answer, expected) in [
        (CallResult::Unavailable("HTTP 503".into()), Status::Declined),
        (
            CallResult::Answered(AcquirerRefund {
                id: "ref_1".into(),
                status: RefundStatus::Succeeded,
                failure: None,
            }),
            Status::Approved,
        ),
    ] {
        let mut mocks = at_bank();
        mocks.provider.expect_start_refund().never();
        let inserted = expect_insert(&mut mocks, || Ok(()));
        mocks
            .acquirer
            .expect_refund()
            .withf(|_, order| order.payment_id == "acq_1" && order.reference == refund_id(1))
            .times(1)
            .returning(move |_, _| answer.clone());
        let finished = expect_finish(&mut mocks);
        let created = refund(mocks, request("30.00", None)).unwrap();
        assert_eq!(created.refund.status(), expected);
        let new = inserted.one();
        assert_eq!(new.refund.provider, "bank");
        assert_eq!(
            new.refund.check_at,
            Some(now().plus_seconds(10)),
            "read after the call's lease if the process dies"
        );
        let done = finished.one().refund;
        if expected == Status::Declined {
            assert_eq!(
                done.decline().map(|d| d.code),
                Some(DeclineCode::ProviderUnavailable)
            );
        }
    }
}

#[test]
fn a_lost_refund_answer_is_left_to_reads_and_never_sent_again() {
    let mut mocks = at_bank();
    expect_insert(&mut mocks, || Ok(()));
    mocks
        .acquirer
        .expect_refund()
        .times(1)
        .returning(|_, _| CallResult::Unknown("timeout after the request was sent".into()));
    let saved = Captured::default();
    mocks
        .refunds
        .expect_save_refund()
        .times(1)
        .returning(saved.answering(|| Ok(())));
    mocks.refunds.expect_finish_refund().never();
    let created = refund(mocks, request("30.00", None)).unwrap();
    assert_eq!(created.refund.status(), Status::Processing);
    let saved = saved.one();
    assert_eq!(saved.unknown_since, Some(now()));
    assert_eq!(saved.check_at, Some(now().plus_seconds(1)));

    // The reconciler reads it: not found yet keeps waiting; found succeeded approves it.
    let claimed = Refund {
        unknown_since: Some(now()),
        ..processing("bank")
    };
    for (lookup, finishes) in [
        (Lookup::NotFound, false),
        (
            Lookup::Found(AcquirerRefund {
                id: "ref_1".into(),
                status: RefundStatus::Succeeded,
                failure: None,
            }),
            true,
        ),
    ] {
        let mut mocks = Mocks::new();
        let one = claimed.clone();
        mocks
            .refunds
            .expect_claim_due_refunds()
            .returning(move |_, _, _, _| Ok(vec![one.clone()]));
        mocks
            .providers
            .expect_acquirer()
            .returning(|_| Ok(Some(acquirer("bank", 5))));
        mocks.acquirer.expect_refund().never();
        mocks
            .acquirer
            .expect_find_refund()
            .times(1)
            .returning(move |_, _| lookup.clone());
        if finishes {
            let finished = expect_finish(&mut mocks);
            block_on(mocks.gateway().answers().settle_refunds("me")).unwrap();
            assert_eq!(finished.one().refund.status(), Status::Approved);
        } else {
            mocks.refunds.expect_finish_refund().never();
            mocks.refunds.expect_save_refund().times(1).returning(|r| {
                assert!(r.check_at.unwrap() > now());
                Ok(())
            });
            block_on(mocks.gateway().answers().settle_refunds("me")).unwrap();
        }
    }
}

#[test]
fn a_refund_the_acquirer_does_not_know_is_never_declined_only_read_again() {
    // A refund request has no deadline at the acquirer: a 404 long after may still be paid.
    let mut mocks = Mocks::new();
    let late = now().plus_seconds(60 + 300);
    mocks.set_clock(late);
    mocks
        .refunds
        .expect_claim_due_refunds()
        .returning(|_, _, _, _| Ok(vec![processing("bank")]));
    mocks
        .providers
        .expect_acquirer()
        .returning(|_| Ok(Some(acquirer("bank", 5))));
    mocks
        .acquirer
        .expect_find_refund()
        .returning(|_, _| Lookup::NotFound);
    mocks.refunds.expect_finish_refund().never();
    mocks
        .refunds
        .expect_save_refund()
        .times(1)
        .returning(move |r| {
            assert!(r.check_at.expect("a next read") > late);
            Ok(())
        });
    block_on(mocks.gateway().answers().settle_refunds("me")).unwrap();
}

fn cancel(mocks: Mocks, direction: Direction) -> Result<Operation, CancelError> {
    block_on(
        mocks
            .gateway()
            .refunds()
            .cancel(&merchant(), direction, id(1)),
    )
}

#[test]
fn a_waiting_deposit_is_canceled_with_its_callback() {
    let mut mocks = Mocks::new();
    mocks.stored(deposit_builder(id(1)).callback(CALLBACK_URL).build());
    let finished = mocks.expect_finish(1, || Ok(()));
    let done = cancel(mocks, Direction::Deposit).unwrap();
    assert_eq!(done.decline(), Some(&Decline::new(DeclineCode::Canceled)));
    let completion = finished.one();
    assert!(completion.moves.is_empty());
    assert_callback_declined(&completion.callback.unwrap(), DeclineCode::Canceled);
}

#[test]
fn a_cancel_that_loses_the_race_answers_the_final_status() {
    let mut mocks = Mocks::new();
    finished_meanwhile(&mut mocks.store, Status::Approved, |status| {
        deposit_builder(id(1)).status(status).build()
    });
    mocks.expect_finish(1, || Err(FinishError::NotProcessing));
    match cancel(mocks, Direction::Deposit) {
        Err(CancelError::Final(op)) => assert_eq!(op.status(), Status::Approved),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_payout_is_canceled_before_it_settles_and_not_after() {
    // Before: Canceled, the hold released.
    let mut mocks = Mocks::new();
    mocks.stored(payout_builder(id(1)).due(now().plus_seconds(1)).build());
    mocks.provider.expect_poll_payout().never();
    let finished = mocks.expect_finish(1, || Ok(()));
    let done = cancel(mocks, Direction::Withdrawal).unwrap();
    assert_eq!(done.decline(), Some(&Decline::new(DeclineCode::Canceled)));
    let moves = finished.one().moves;
    assert_eq!(
        (moves[0].kind, moves[0].available, moves[0].held),
        (EntryKind::WithdrawalReleased, 25_000, -25_000)
    );

    // After: its settle time has passed, so the sandbox executed it; it takes that status.
    let mut mocks = Mocks::new();
    mocks.stored(payout_builder(id(1)).due(now()).build());
    mocks
        .provider
        .expect_poll_payout()
        .returning(|_, _| Ok(ProviderVerdict::Approve));
    let finished = mocks.expect_finish(1, || Ok(()));
    match cancel(mocks, Direction::Withdrawal) {
        Err(CancelError::Final(op)) => assert_eq!(op.status(), Status::Approved),
        other => panic!("{other:?}"),
    }
    assert_eq!(finished.one().operation.status(), Status::Approved);
}

#[test]
fn final_or_foreign_operations_are_not_canceled() {
    let mut mocks = Mocks::new();
    mocks.stored(approved());
    mocks.store.expect_finish().never();
    assert!(matches!(
        cancel(mocks, Direction::Deposit),
        Err(CancelError::Final(_))
    ));
    let mut mocks = Mocks::new();
    mocks.stored(deposit(id(1)));
    assert!(matches!(
        cancel(mocks, Direction::Withdrawal),
        Err(CancelError::NotFound)
    ));
}
