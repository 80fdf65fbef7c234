//! Creation with a provider over a network ([`CreationOrder::StoreFirst`]): the operation and
//! its hold are committed before the provider is called, the answer is written with a guarded
//! update, and an answer that never came leaves the operation processing (200), never a
//! second call.

use std::sync::{Arc, Mutex};

use super::fixtures::*;
use crate::ledger::EntryKind;
use crate::operation::{Action, Decline, DeclineCode, Operation};
use crate::ports::{DepositStart, FinishError, NewOperation, PayoutStart, ProviderError};
use crate::service::UNANSWERED_PAYOUT_GRACE_SECS;
use crate::Status;

/// The order the mocks were called in.
#[derive(Clone, Default)]
struct Calls(Arc<Mutex<Vec<&'static str>>>);

impl Calls {
    fn push(&self, call: &'static str) {
        self.0.lock().unwrap().push(call);
    }

    fn seen(&self) -> Vec<&'static str> {
        self.0.lock().unwrap().clone()
    }
}

/// Store-first mocks whose one insert, which `check` looks at, is counted as "insert".
fn inserting(check: impl Fn(&NewOperation) + Send + 'static) -> (Mocks, Calls) {
    let mut mocks = Mocks::new();
    mocks.store_first();
    let calls = Calls::default();
    let seen = calls.clone();
    mocks.store.expect_insert().times(1).returning(move |new| {
        seen.push("insert");
        check(new);
        Ok(())
    });
    (mocks, calls)
}

/// The store takes one advance, which `check` looks at, counted as "advance".
fn advancing(mocks: &mut Mocks, calls: &Calls, check: impl Fn(&Operation) + Send + 'static) {
    let seen = calls.clone();
    mocks.store.expect_advance().times(1).returning(move |op| {
        seen.push("advance");
        check(op);
        Ok(())
    });
}

fn store_first_payout(answer: Result<PayoutStart, &'static str>) -> (Mocks, Calls) {
    let (mut mocks, calls) = inserting(|new| {
        assert_eq!(new.operation.status(), Status::Processing);
        assert_eq!(new.moves.len(), 1, "the hold is committed first");
        assert_eq!(new.moves[0].kind, EntryKind::WithdrawalHold);
        assert_eq!(
            new.operation.due_at(),
            Some(now().plus_seconds(UNANSWERED_PAYOUT_GRACE_SECS)),
            "polled later if the answer is never written"
        );
    });
    let seen = calls.clone();
    let answer = Mutex::new(Some(answer));
    mocks
        .provider
        .expect_start_payout()
        .times(1)
        .returning(move |_, _, _| {
            seen.push("provider");
            match answer.lock().unwrap().take().expect("called once") {
                Ok(start) => Ok(start),
                Err(why) => Err(ProviderError(why.into())),
            }
        });
    (mocks, calls)
}

fn create_payout(mocks: Mocks) -> crate::service::Created {
    mocks
        .create_withdrawal(withdrawal_request("250.00", "sbp", false, true))
        .unwrap()
}

#[test]
fn an_accepted_payout_is_stored_then_sent_then_advanced() {
    let (mut mocks, calls) = store_first_payout(Ok(PayoutStart::Accepted {
        state: Some(ProviderState::new("a-1")),
        due_at: now().plus_seconds(5),
    }));
    advancing(&mut mocks, &calls, |op| {
        assert_eq!(op.provider_state(), Some(&ProviderState::new("a-1")));
        assert_eq!(op.due_at(), Some(now().plus_seconds(5)));
    });
    mocks.store.expect_finish().never();

    let created = create_payout(mocks);

    assert_eq!(calls.seen(), ["insert", "provider", "advance"]);
    assert_eq!(created.operation.status(), Status::Processing);
    assert_eq!(created.operation.due_at(), Some(now().plus_seconds(5)));
}

#[test]
fn a_declined_payout_is_finished_with_its_hold_released_and_its_callback() {
    let (mut mocks, calls) = store_first_payout(Ok(PayoutStart::Declined(Decline::new(
        DeclineCode::RecipientNotFound,
    ))));
    let stored = Arc::new(Mutex::new(None));
    let sink = stored.clone();
    mocks
        .store
        .expect_get()
        .returning(move |_| Ok(sink.lock().unwrap().clone()));
    let finished = mocks.expect_finish(1, || Ok(()));
    mocks.store.expect_advance().never();

    let created = create_payout(mocks);

    assert_eq!(calls.seen(), ["insert", "provider"]);
    let completion = finished.one();
    assert_eq!(completion.moves.len(), 1);
    assert_eq!(completion.moves[0].kind, EntryKind::WithdrawalReleased);
    assert!(completion.callback.is_some(), "callbackUrl given");
    assert_eq!(created.operation, completion.operation);
    assert_eq!(
        created.operation.decline().map(|d| d.code),
        Some(DeclineCode::RecipientNotFound)
    );
    assert!(stored.lock().unwrap().is_none(), "nothing re-read");
}

#[test]
fn no_answer_leaves_the_payout_processing_and_answered_not_sent_again() {
    let (mut mocks, calls) = store_first_payout(Err("read timed out"));
    mocks.store.expect_advance().never();
    mocks.store.expect_finish().never();

    let created = create_payout(mocks);

    assert_eq!(
        calls.seen(),
        ["insert", "provider"],
        "one call, never a retry"
    );
    assert_eq!(created.operation.status(), Status::Processing);
    assert!(!created.replayed);
}

#[test]
fn an_answer_that_lost_a_race_answers_the_stored_operation() {
    let (mut mocks, _) = store_first_payout(Ok(PayoutStart::Accepted {
        state: None,
        due_at: now().plus_seconds(5),
    }));
    mocks
        .store
        .expect_advance()
        .times(1)
        .returning(|_| Err(FinishError::NotProcessing));
    let approved = payout_builder(new_id()).status(Status::Approved).build();
    mocks.stored(approved.clone());

    let created = create_payout(mocks);

    assert_eq!(created.operation, approved);
}

#[test]
fn a_deposit_is_stored_before_the_provider_gives_its_action() {
    let (mut mocks, calls) = inserting(|new| assert_eq!(new.operation.action(), None));
    let seen = calls.clone();
    let action = Action::Redirect {
        url: "https://acquirer.example/pay/1".into(),
    };
    let given = action.clone();
    mocks
        .provider
        .expect_start_deposit()
        .times(1)
        .returning(move |_, _| {
            seen.push("provider");
            Ok(DepositStart::Wait(given.clone()))
        });
    advancing(&mut mocks, &calls, |_| {});

    let created = mocks
        .create_deposit(deposit_request("100.00", "card", false, false))
        .unwrap();

    assert_eq!(calls.seen(), ["insert", "provider", "advance"]);
    assert_eq!(created.operation.action(), Some(&action));
}

#[test]
fn a_replay_is_answered_without_calling_the_provider() {
    let mut mocks = Mocks::new();
    mocks.store_first();
    mocks
        .store
        .expect_insert()
        .times(1)
        .returning(|_| Err(crate::ports::InsertError::Duplicate));
    let earlier = payout_builder(existing_id()).build();
    mocks.earlier(crate::Direction::Withdrawal, earlier.clone(), CANONICAL);
    mocks.provider.expect_start_payout().never();

    let created = mocks
        .create_withdrawal(withdrawal_request("250.00", "sbp", true, true))
        .unwrap();

    assert!(created.replayed);
    assert_eq!(created.operation, earlier);
}
