//! `complete`: the state machine and its balance moves (the ledger rules of docs/api.md).

use super::fixtures::*;
use crate::ledger::EntryKind;
use crate::operation::{Decline, DeclineCode, Operation, Outcome};
use crate::ports::{Completion, FinishError};
use crate::service::CompleteError;
use crate::Status;

fn rejected() -> Outcome {
    Outcome::Decline(Decline::new(DeclineCode::PaymentRejected))
}

/// Approves the stored `op` on a store whose one finish fails with `error`.
fn approve_failing(
    op: Operation,
    error: impl Fn() -> FinishError + Send + 'static,
) -> Result<Operation, CompleteError> {
    let mut mocks = Mocks::new();
    let id = op.id();
    mocks.stored(op);
    mocks.expect_finish(1, move || Err(error()));
    mocks.complete(id, Outcome::Approve)
}

#[test]
fn an_approved_deposit_credits_available_and_queues_its_callback() {
    let (done, completion) = completed(deposit(id(1)), Outcome::Approve);

    assert_eq!(done, completion.operation);
    assert_eq!(done.status(), Status::Approved);
    assert_eq!(done.decline(), None);
    assert_eq!(done.updated_at(), now());
    assert_eq!(completion.moves.len(), 1);
    let credit = &completion.moves[0];
    assert_eq!(credit.kind, EntryKind::DepositApproved);
    assert_eq!((credit.available, credit.held), (10_000, 0));
    assert_eq!(credit.operation_id, Some(id(1)));
    assert_eq!(credit.at, now());
    let callback = completion.callback.expect("callbackUrl given");
    assert_eq!(callback.operation_id, id(1));
    assert_eq!(callback.queued_at, now());
}

#[test]
fn a_declined_deposit_moves_nothing() {
    let (done, completion) = completed(deposit(id(1)), rejected());

    assert_declined_without_moves(&done, &completion, DeclineCode::PaymentRejected);
}

#[test]
fn an_approved_payout_releases_the_held_money_to_the_recipient() {
    let (done, Completion { moves, .. }) = completed(payout(id(2)), Outcome::Approve);

    assert_eq!(done.status(), Status::Approved);
    assert_eq!(done.due_at(), None, "a final payout is no longer due");
    assert_eq!(moves.len(), 1);
    assert_eq!(moves[0].kind, EntryKind::WithdrawalPaid);
    assert_eq!((moves[0].available, moves[0].held), (0, -25_000));
}

#[test]
fn a_declined_payout_returns_the_held_money_to_available() {
    let decline = Outcome::Decline(Decline::new(DeclineCode::RecipientNotFound));
    let (done, Completion { moves, .. }) = completed(payout(id(2)), decline);

    assert_eq!(done.status(), Status::Declined);
    assert_eq!(moves.len(), 1);
    assert_eq!(moves[0].kind, EntryKind::WithdrawalReleased);
    assert_eq!((moves[0].available, moves[0].held), (25_000, -25_000));
}

#[test]
fn a_final_operation_refuses_another_completion() {
    for status in [Status::Approved, Status::Declined] {
        for outcome in [Outcome::Approve, rejected()] {
            let mut mocks = Mocks::new();
            mocks.stored(deposit_builder(id(1)).status(status).build());
            mocks.store.expect_finish().never();

            let result = mocks.complete(id(1), outcome.clone());

            assert!(
                matches!(result, Err(CompleteError::InvalidState)),
                "{status:?} then {outcome:?}"
            );
        }
    }
}

#[test]
fn losing_the_race_to_another_completion_is_invalid_state() {
    let result = approve_failing(payout(id(2)), || FinishError::NotProcessing);

    assert!(matches!(result, Err(CompleteError::InvalidState)));
}

#[test]
fn an_unknown_operation_is_not_found() {
    let mut mocks = Mocks::new();
    mocks.store.expect_get().returning(|_| Ok(None));
    mocks.store.expect_finish().never();

    let result = mocks.complete(id(9), Outcome::Approve);

    assert!(matches!(result, Err(CompleteError::NotFound)));
}

#[test]
fn an_expired_deposit_cannot_be_approved_it_is_declined_as_expired() {
    let expired = deposit_builder(id(1)).expires(now()).build();

    let (result, completion) = Mocks::new().finishing(expired, Outcome::Approve);

    assert!(matches!(result, Err(CompleteError::InvalidState)));
    assert_eq!(completion.operation.status(), Status::Declined);
    assert_eq!(
        completion.operation.decline(),
        Some(&Decline::new(DeclineCode::Expired))
    );
    assert!(
        completion.moves.is_empty(),
        "no credit for an expired deposit"
    );
    let callback = completion.callback.expect("callback");
    assert_eq!(
        callback.data.decline,
        Some(Decline::new(DeclineCode::Expired))
    );
}

#[test]
fn a_deposit_one_millisecond_before_expiry_still_approves() {
    let op = deposit_builder(id(1)).expires(now().plus_millis(1)).build();

    let (done, completion) = completed(op, Outcome::Approve);

    assert_eq!(done.status(), Status::Approved);
    assert_eq!(completion.moves[0].available, 10_000);
}

#[test]
fn no_callback_is_queued_without_callback_url() {
    let quiet = deposit_builder(id(1))
        .urls(OperationUrls::default())
        .build();

    let (_, completion) = completed(quiet, Outcome::Approve);

    assert_eq!(completion.callback, None);
    assert_eq!(completion.moves.len(), 1, "money still moves");
}

#[test]
fn storage_failures_map_to_unavailable_or_internal() {
    let mut mocks = Mocks::new();
    mocks.store.expect_get().returning(|_| Err(unavailable()));
    let result = mocks.complete(id(1), Outcome::Approve);
    assert!(matches!(result, Err(CompleteError::Unavailable(_))));

    let result = approve_failing(deposit(id(1)), || FinishError::Store(unavailable()));
    assert!(matches!(result, Err(CompleteError::Unavailable(_))));

    // A completion never debits available, so a balance refusal is a bug, not a business answer.
    let result = approve_failing(payout(id(2)), || FinishError::InsufficientBalance);
    assert!(matches!(result, Err(CompleteError::Unknown(_))));
}

#[test]
fn the_same_deposit_expires_once_the_clock_reaches_its_lifetime() {
    let op = deposit(id(1));
    let deadline = op.expires_at().unwrap();

    let mut before = Mocks::new();
    before.set_clock(deadline.plus_millis(-1));
    let (result, approved) = before.finishing(op.clone(), Outcome::Approve);
    result.unwrap();
    assert_eq!(approved.operation.status(), Status::Approved);

    let mut after = Mocks::new();
    after.set_clock(deadline);
    let (result, completion) = after.finishing(op, Outcome::Approve);
    assert!(matches!(result, Err(CompleteError::InvalidState)));
    assert_eq!(completion.operation.updated_at(), deadline);
    assert_eq!(
        completion.operation.decline().map(|d| d.code),
        Some(DeclineCode::Expired)
    );
}
