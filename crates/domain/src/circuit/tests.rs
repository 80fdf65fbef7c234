use super::*;
use crate::acquirer::{AcquirerPayment, FailureReason};

const BANK: &str = "bank";

fn at(millis: i64) -> Timestamp {
    Timestamp::from_millis(1_000_000 + millis)
}

fn fail(circuits: &Circuits, now: Timestamp) {
    circuits
        .admit(BANK, now)
        .expect("admitted")
        .finish(Verdict::Failed, now);
}

fn state(circuits: &Circuits, now: Timestamp) -> CircuitState {
    circuits
        .snapshot(now)
        .into_iter()
        .find(|c| c.provider == BANK)
        .map(|c| c.state)
        .expect("a circuit for the provider")
}

fn failed(reason: FailureReason) -> CallResult<AcquirerPayment> {
    CallResult::Answered(AcquirerPayment {
        id: "pay_1".into(),
        status: PaymentStatus::Failed,
        redirect_url: None,
        failure: Some(crate::testkit::failure(reason)),
    })
}

#[test]
fn five_failures_in_a_row_open_the_circuit_for_thirty_seconds() {
    let circuits = Circuits::new();
    for _ in 0..4 {
        fail(&circuits, at(0));
    }
    assert_eq!(
        state(&circuits, at(0)),
        CircuitState::Closed { failures: 4 }
    );
    fail(&circuits, at(0));
    assert!(circuits.admit(BANK, at(0)).is_none());
    assert!(circuits.admit(BANK, at(29_999)).is_none());
    assert_eq!(state(&circuits, at(29_999)).name(), "open");
    assert_eq!(state(&circuits, at(30_000)).name(), "half_open");
}

#[test]
fn an_answer_resets_the_count() {
    let circuits = Circuits::new();
    for _ in 0..4 {
        fail(&circuits, at(0));
    }
    circuits
        .admit(BANK, at(0))
        .expect("admitted")
        .finish(Verdict::Answered, at(0));
    for _ in 0..4 {
        fail(&circuits, at(0));
    }
    assert_eq!(
        state(&circuits, at(0)),
        CircuitState::Closed { failures: 4 }
    );
}

#[test]
fn after_the_open_time_exactly_one_trial_passes() {
    let circuits = Circuits::new();
    for _ in 0..5 {
        fail(&circuits, at(0));
    }
    let trial = circuits.admit(BANK, at(30_000)).expect("the trial");
    assert!(trial.is_trial());
    assert!(circuits.admit(BANK, at(30_001)).is_none());
    assert!(circuits.admit(BANK, at(45_000)).is_none());
    trial.finish(Verdict::Answered, at(46_000));
    assert_eq!(
        state(&circuits, at(46_000)),
        CircuitState::Closed { failures: 0 }
    );
    let next = circuits.admit(BANK, at(46_000)).expect("closed again");
    assert!(!next.is_trial());
}

#[test]
fn a_failed_trial_opens_the_circuit_again() {
    let circuits = Circuits::new();
    for _ in 0..5 {
        fail(&circuits, at(0));
    }
    let trial = circuits.admit(BANK, at(31_000)).expect("the trial");
    trial.finish(Verdict::Failed, at(32_000));
    assert!(circuits.admit(BANK, at(61_999)).is_none());
    assert!(circuits
        .admit(BANK, at(62_000))
        .is_some_and(|p| p.is_trial()));
}

#[test]
fn a_neutral_trial_leaves_the_circuit_half_open_for_the_next_creation() {
    let circuits = Circuits::new();
    for _ in 0..5 {
        fail(&circuits, at(0));
    }
    circuits
        .admit(BANK, at(30_000))
        .expect("the trial")
        .finish(Verdict::Neutral, at(30_500));
    assert_eq!(
        state(&circuits, at(30_500)),
        CircuitState::HalfOpen { trial: false }
    );
    assert!(circuits
        .admit(BANK, at(30_600))
        .is_some_and(|p| p.is_trial()));
}

#[test]
fn a_dropped_trial_frees_its_slot() {
    let circuits = Circuits::new();
    for _ in 0..5 {
        fail(&circuits, at(0));
    }
    drop(circuits.admit(BANK, at(30_000)).expect("the trial"));
    assert!(circuits
        .admit(BANK, at(30_001))
        .is_some_and(|p| p.is_trial()));
}

#[test]
fn issuer_unavailable_neither_adds_nor_resets() {
    let circuits = Circuits::new();
    for _ in 0..4 {
        fail(&circuits, at(0));
    }
    let verdict = Verdict::of(
        &failed(FailureReason::IssuerUnavailable),
        Direction::Deposit,
    );
    assert_eq!(verdict, Verdict::Neutral);
    circuits
        .admit(BANK, at(0))
        .expect("admitted")
        .finish(verdict, at(0));
    assert_eq!(
        state(&circuits, at(0)),
        CircuitState::Closed { failures: 4 }
    );
}

#[test]
fn late_results_of_calls_let_through_before_the_circuit_opened_change_nothing() {
    let circuits = Circuits::new();
    let late = circuits.admit(BANK, at(0)).expect("admitted");
    for _ in 0..5 {
        fail(&circuits, at(0));
    }
    late.finish(Verdict::Failed, at(1_000));
    assert_eq!(
        state(&circuits, at(1_000)),
        CircuitState::Open {
            until: at(OPEN_FOR_MILLIS)
        }
    );
}

#[test]
fn a_late_answer_does_not_close_an_open_circuit_before_its_trial() {
    let circuits = Circuits::new();
    let late = circuits.admit(BANK, at(0)).expect("admitted");
    for _ in 0..5 {
        fail(&circuits, at(0));
    }
    late.finish(Verdict::Answered, at(1_000));
    assert!(circuits.admit(BANK, at(1_000)).is_none(), "still open");
    let trial = circuits.admit(BANK, at(30_000)).expect("the trial");
    let straggler = circuits.admit(BANK, at(30_000));
    assert!(straggler.is_none());
    trial.finish(Verdict::Answered, at(30_100));
    assert_eq!(
        state(&circuits, at(30_100)),
        CircuitState::Closed { failures: 0 }
    );
}

#[test]
fn verdicts_follow_the_contract() {
    let answered = |status| {
        CallResult::Answered(AcquirerPayment {
            id: "pay_1".into(),
            status,
            redirect_url: None,
            failure: None,
        })
    };
    let cases = [
        (
            answered(PaymentStatus::Pending),
            Direction::Withdrawal,
            Verdict::Answered,
        ),
        (
            answered(PaymentStatus::Succeeded),
            Direction::Withdrawal,
            Verdict::Answered,
        ),
        (
            failed(FailureReason::CardDeclined),
            Direction::Deposit,
            Verdict::Answered,
        ),
        (
            failed(FailureReason::ProviderUnavailable),
            Direction::Deposit,
            Verdict::Failed,
        ),
        (
            failed(FailureReason::InsufficientFunds),
            Direction::Withdrawal,
            Verdict::Failed,
        ),
        (
            failed(FailureReason::InsufficientFunds),
            Direction::Deposit,
            Verdict::Answered,
        ),
        (
            CallResult::Unavailable("refused".into()),
            Direction::Deposit,
            Verdict::Failed,
        ),
        (
            CallResult::Unknown("timeout".into()),
            Direction::Deposit,
            Verdict::Failed,
        ),
    ];
    for (result, direction, verdict) in cases {
        assert_eq!(Verdict::of(&result, direction), verdict, "{result:?}");
    }
}

#[test]
fn circuits_of_different_providers_are_apart() {
    let circuits = Circuits::new();
    for _ in 0..5 {
        fail(&circuits, at(0));
    }
    assert!(circuits.admit("other", at(0)).is_some());
}
