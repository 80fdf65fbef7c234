//! `confirm`: the confirmation-code flow and its three attempts.

use std::sync::{Arc, Mutex};

use futures::executor::block_on;

use super::fixtures::*;
use crate::merchant::Merchant;
use crate::operation::{Action, DeclineCode, Operation, CONFIRMATION_ATTEMPTS};
use crate::ports::{Completion, FinishError};
use crate::service::StepError;
use crate::Status;

fn confirmation(attempts_left: u8) -> Action {
    Action::Confirmation {
        channels: vec!["sms".into()],
        attempts_left,
    }
}

fn waiting_for_code(attempts_left: u8) -> Operation {
    deposit_builder(id(1))
        .action(confirmation(attempts_left))
        .build()
}

fn code_is(mocks: &mut Mocks, right: &'static str) {
    mocks
        .provider
        .expect_check_code()
        .returning(move |_, code| Ok(code == right));
}

/// Mocks holding `op`, whose provider takes "1234" as the right code.
fn holding(op: Operation) -> Mocks {
    let mut mocks = Mocks::new();
    mocks.stored(op);
    code_is(&mut mocks, "1234");
    mocks
}

/// Confirms `code` on an operation with `attempts_left` that it finishes: the answer and the
/// completion stored, the action never replaced.
fn finishing(attempts_left: u8, code: &str) -> (Operation, Completion) {
    let mut mocks = holding(waiting_for_code(attempts_left));
    mocks.store.expect_replace_action().never();
    let finished = mocks.expect_finish(1, || Ok(()));
    let done = mocks.confirm(&merchant(), code).unwrap();
    (done, finished.one())
}

/// The store answers each read with the next of `reads`, then the last one again and again
/// (the deposit as other requests leave it between this one's reads).
fn read_in_turn(mocks: &mut Mocks, reads: Vec<Operation>) {
    let left = Mutex::new(reads.into_iter().rev().collect::<Vec<_>>());
    mocks.store.expect_get().returning(move |_| {
        let mut left = left.lock().unwrap();
        Ok(Some(if left.len() > 1 {
            left.pop().unwrap()
        } else {
            left[0].clone()
        }))
    });
}

/// Confirms "1234" on `op` as `who` where the provider is never asked and nothing is written.
fn refused(op: Operation, who: &Merchant) -> Result<Operation, StepError> {
    let mut mocks = Mocks::new();
    mocks.stored(op);
    mocks.provider.expect_check_code().never();
    mocks.expect_no_store_writes();
    mocks.confirm(who, "1234")
}

#[test]
fn the_right_code_approves() {
    let (done, completion) = finishing(3, "1234");

    assert_eq!(done.status(), Status::Approved);
    assert_eq!(completion.moves[0].available, 10_000);
}

#[test]
fn a_wrong_code_answers_invalid_code_and_uses_up_one_attempt() {
    let mut mocks = holding(waiting_for_code(3));
    mocks
        .store
        .expect_replace_action()
        .withf(|op, expected, action, at| {
            *op == id(1)
                && *expected == confirmation(3)
                && *action == confirmation(2)
                && *at == now()
        })
        .times(1)
        .returning(|_, _, _, _| Ok(()));
    mocks.store.expect_finish().never();

    let result = mocks.confirm(&merchant(), "0000");

    assert!(matches!(result, Err(StepError::InvalidCode)));
}

#[test]
fn the_last_wrong_code_declines_with_confirmation_failed() {
    let (done, completion) = finishing(1, "0000");

    assert_declined_without_moves(&done, &completion, DeclineCode::ConfirmationFailed);
}

#[test]
fn three_wrong_codes_in_a_row_decline_on_the_third() {
    // A store that keeps the operation between calls, as a database would.
    let current = Arc::new(Mutex::new(waiting_for_code(CONFIRMATION_ATTEMPTS)));
    let mut mocks = Mocks::new();
    let read = current.clone();
    mocks
        .store
        .expect_get()
        .returning(move |_| Ok(Some(read.lock().unwrap().clone())));
    let write = current.clone();
    mocks
        .store
        .expect_replace_action()
        .times(2)
        .returning(move |_, expected, action, _| {
            let mut op = write.lock().unwrap();
            assert_eq!(op.action(), Some(expected));
            *op = op.wait_for(action.clone(), now()).unwrap();
            Ok(())
        });
    let finish = current.clone();
    mocks.store.expect_finish().times(1).returning(move |c| {
        *finish.lock().unwrap() = c.operation.clone();
        Ok(())
    });
    code_is(&mut mocks, "1234");
    let gateway = mocks.gateway();

    for left in [2, 1] {
        let result = block_on(gateway.steps().confirm(&merchant(), id(1), "9999"));
        assert!(matches!(result, Err(StepError::InvalidCode)));
        assert_eq!(current.lock().unwrap().action(), Some(&confirmation(left)));
    }
    let declined = block_on(gateway.steps().confirm(&merchant(), id(1), "9999")).unwrap();
    assert_eq!(declined.status(), Status::Declined);
    assert_eq!(
        declined.decline().map(|d| d.code),
        Some(DeclineCode::ConfirmationFailed)
    );

    // Even the right code is too late now.
    let late = block_on(gateway.steps().confirm(&merchant(), id(1), "1234"));
    assert!(matches!(late, Err(StepError::InvalidState)));
}

#[test]
fn a_count_lost_to_a_concurrent_code_is_taken_again_from_the_new_count() {
    // Another wrong code spent attempt 3 between this one's read and its write.
    let mut mocks = Mocks::new();
    read_in_turn(&mut mocks, vec![waiting_for_code(3), waiting_for_code(2)]);
    let writes = Arc::new(Mutex::new(Vec::new()));
    let seen = writes.clone();
    mocks
        .store
        .expect_replace_action()
        .times(2)
        .returning(move |_, expected, action, _| {
            seen.lock()
                .unwrap()
                .push((expected.clone(), action.clone()));
            match expected {
                Action::Confirmation {
                    attempts_left: 3, ..
                } => Err(FinishError::NotProcessing),
                _ => Ok(()),
            }
        });
    code_is(&mut mocks, "1234");

    let result = mocks.confirm(&merchant(), "0000");

    assert!(matches!(result, Err(StepError::InvalidCode)));
    assert_eq!(
        *writes.lock().unwrap(),
        vec![
            (confirmation(3), confirmation(2)),
            (confirmation(2), confirmation(1))
        ],
        "this code spent attempt 2, not 3 again"
    );
}

#[test]
fn a_count_lost_to_the_deposit_ending_answers_invalid_state() {
    let declined = deposit_builder(id(1))
        .action(confirmation(1))
        .status(Status::Declined)
        .build();
    let mut mocks = Mocks::new();
    read_in_turn(&mut mocks, vec![waiting_for_code(3), declined]);
    mocks
        .store
        .expect_replace_action()
        .times(1)
        .returning(|_, _, _, _| Err(FinishError::NotProcessing));
    code_is(&mut mocks, "1234");

    let result = mocks.confirm(&merchant(), "0000");

    assert!(matches!(result, Err(StepError::InvalidState)));
}

#[test]
fn a_count_that_never_matches_the_store_is_a_fault_not_a_spin() {
    let mut mocks = holding(waiting_for_code(3));
    mocks
        .store
        .expect_replace_action()
        .times(2 * usize::from(CONFIRMATION_ATTEMPTS) + 1)
        .returning(|_, _, _, _| Err(FinishError::NotProcessing));

    let result = mocks.confirm(&merchant(), "0000");

    assert!(matches!(result, Err(StepError::Unknown(_))));
}

#[test]
fn a_deposit_not_waiting_for_a_code_is_invalid_state() {
    let declined = deposit_builder(id(1))
        .action(confirmation(2))
        .status(Status::Declined)
        .build();
    for op in [deposit(id(1)), declined] {
        let result = refused(op, &merchant());

        assert!(matches!(result, Err(StepError::InvalidState)));
    }
}

#[test]
fn an_expired_deposit_is_declined_before_the_code_is_checked() {
    let mut mocks = Mocks::new();
    mocks.stored(
        deposit_builder(id(1))
            .action(confirmation(3))
            .expires(now())
            .build(),
    );
    mocks.provider.expect_check_code().never();
    let finished = mocks.expect_finish(1, || Ok(()));

    let result = mocks.confirm(&merchant(), "1234");

    assert!(matches!(result, Err(StepError::InvalidState)));
    assert_eq!(
        finished.one().operation.decline().map(|d| d.code),
        Some(DeclineCode::Expired)
    );
}

#[test]
fn another_merchants_deposit_is_not_found() {
    let result = refused(waiting_for_code(3), &other_merchant());

    assert!(matches!(result, Err(StepError::NotFound)));
}

#[test]
fn a_provider_failure_is_unavailable_and_costs_no_attempt() {
    let mut mocks = Mocks::new();
    mocks.stored(waiting_for_code(3));
    mocks
        .provider
        .expect_check_code()
        .returning(|_, _| Err(crate::ports::ProviderError("sms gateway down".into())));
    mocks.expect_no_store_writes();

    let result = mocks.confirm(&merchant(), "1234");

    assert!(matches!(result, Err(StepError::Unavailable(_))));
}
