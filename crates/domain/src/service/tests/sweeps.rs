//! `expire_overdue` and `settle_due_payouts`: the background sweeps.

use futures::executor::block_on;

use super::fixtures::*;
use crate::ledger::EntryKind;
use crate::operation::{Decline, DeclineCode};
use crate::ports::{FinishError, ProviderError, ProviderVerdict, StoreError};
use crate::service::CompleteError;
use crate::OperationId;
use crate::Status;

fn expired(n: u128) -> crate::operation::Operation {
    expired_builder(n).build()
}

fn expired_builder(n: u128) -> OperationBuilder {
    deposit_builder(id(n)).expires(now().plus_seconds(-1))
}

fn expire(mocks: Mocks) -> Result<usize, CompleteError> {
    block_on(mocks.gateway().answers().expire_overdue())
}

fn settle(mocks: Mocks) -> Result<usize, CompleteError> {
    block_on(mocks.gateway().answers().settle_due_payouts())
}

/// Mocks whose store answers the sweep for expired deposits with `answer()`.
fn expiring(answer: fn() -> Result<Vec<OperationId>, StoreError>) -> Mocks {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_expired_deposits()
        .returning(move |_, _| answer());
    mocks
}

/// Mocks whose store, asked for due payouts from now and at most 200, answers `answer()`.
fn due_now(answer: fn() -> Result<Vec<crate::operation::Operation>, StoreError>) -> Mocks {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_due_payouts()
        .withf(|at, limit| *at == now() && *limit == 200)
        .returning(move |_, _| answer());
    mocks
}

/// Mocks with payout `id(1)` due, which the provider answers with `answer()` when polled.
fn one_due_payout(answer: fn() -> Result<ProviderVerdict, ProviderError>) -> Mocks {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_due_payouts()
        .returning(|_, _| Ok(vec![payout(id(1))]));
    mocks
        .provider
        .expect_poll_payout()
        .returning(move |_, _| answer());
    mocks
}

#[test]
fn overdue_deposits_are_declined_as_expired() {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_expired_deposits()
        .withf(|at, limit| *at == now() && *limit == 200)
        .times(1)
        .returning(|_, _| Ok(vec![id(1), id(2)]));
    mocks.stored(expired(1));
    mocks.stored(expired(2));
    let finished = mocks.expect_finish(2, || Ok(()));

    let count = expire(mocks).unwrap();

    assert_eq!(count, 2);
    let completions = finished.all();
    let ids: Vec<_> = completions.iter().map(|c| c.operation.id()).collect();
    assert_eq!(ids, vec![id(1), id(2)]);
    for c in completions {
        assert_eq!(c.operation.status(), Status::Declined);
        assert_eq!(
            c.operation.decline(),
            Some(&Decline::new(DeclineCode::Expired))
        );
        assert!(c.moves.is_empty());
        assert!(c.callback.is_some());
    }
}

#[test]
fn expiry_skips_deposits_another_process_finished() {
    let mut mocks = expiring(|| Ok(vec![id(1), id(2), id(3), id(4)]));
    // 1: finished in storage meanwhile; 2: already final when read; 3: gone; 4: declined here.
    mocks.stored(expired(1));
    mocks.stored(expired_builder(2).status(Status::Approved).build());
    mocks
        .store
        .expect_get()
        .withf(|asked| *asked == id(3))
        .returning(|_| Ok(None));
    mocks.stored(expired(4));
    let outcomes = std::sync::Mutex::new(vec![Ok(()), Err(FinishError::NotProcessing)]);
    let finished = mocks.expect_finish(2, move || outcomes.lock().unwrap().pop().unwrap());

    let count = expire(mocks).unwrap();

    assert_eq!(count, 1);
    let ids: Vec<_> = finished.all().iter().map(|c| c.operation.id()).collect();
    assert_eq!(ids, vec![id(1), id(4)], "the final one is not even tried");
}

#[test]
fn expiry_stops_when_storage_is_unavailable() {
    let mut mocks = expiring(|| Ok(vec![id(1)]));
    mocks.stored(expired(1));
    mocks.expect_finish(1, || Err(FinishError::Store(unavailable())));
    let result = expire(mocks);
    assert!(matches!(result, Err(CompleteError::Unavailable(_))));

    let result = expire(expiring(|| Err(unavailable())));
    assert!(matches!(result, Err(CompleteError::Unavailable(_))));
}

#[test]
fn due_payouts_are_approved_declined_or_postponed_as_the_provider_says() {
    let mut mocks = due_now(|| Ok(vec![payout(id(1)), payout(id(2)), payout(id(3))]));
    let later = now().plus_seconds(30);
    mocks
        .provider
        .expect_poll_payout()
        .withf(|_, at| *at == now())
        .times(3)
        .returning(move |p, _| {
            Ok(if p.id() == id(1) {
                ProviderVerdict::Approve
            } else if p.id() == id(2) {
                ProviderVerdict::Decline(Decline::new(DeclineCode::RecipientNotFound))
            } else {
                ProviderVerdict::Pending(later)
            })
        });
    mocks
        .store
        .expect_postpone()
        .withf(move |asked, next| *asked == id(3) && *next == later)
        .times(1)
        .returning(|_, _| Ok(()));
    let finished = mocks.expect_finish(2, || Ok(()));

    let count = settle(mocks).unwrap();

    assert_eq!(count, 2);
    let completions = finished.all();
    assert_eq!(completions[0].operation.id(), id(1));
    assert_eq!(completions[0].operation.status(), Status::Approved);
    assert_eq!(completions[0].moves[0].kind, EntryKind::WithdrawalPaid);
    assert_eq!(completions[1].operation.id(), id(2));
    assert_eq!(completions[1].operation.status(), Status::Declined);
    assert_eq!(completions[1].moves[0].kind, EntryKind::WithdrawalReleased);
    assert_eq!(
        completions[1].operation.decline().map(|d| d.code),
        Some(DeclineCode::RecipientNotFound)
    );
}

#[test]
fn a_payout_settled_elsewhere_is_skipped() {
    let mut mocks = one_due_payout(|| Ok(ProviderVerdict::Approve));
    mocks.expect_finish(1, || Err(FinishError::NotProcessing));

    assert_eq!(settle(mocks).unwrap(), 0);
}

#[test]
fn a_provider_failure_while_settling_is_unavailable_and_finishes_nothing() {
    let mut mocks = one_due_payout(|| Err(ProviderError("bank down".into())));
    mocks.store.expect_finish().never();
    mocks.store.expect_postpone().never();

    let result = settle(mocks);

    assert!(matches!(result, Err(CompleteError::Unavailable(_))));
}
