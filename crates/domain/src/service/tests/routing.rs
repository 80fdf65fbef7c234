//! Routing across acquirers: failover on definite failures only, each provider once, the
//! routing budget and the circuit breaker.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::executor::block_on;

use super::fixtures::*;
use crate::acquirer::{AcquirerPayment, CallResult, Failure, FailureReason, PaymentStatus};
use crate::attempt::{Attempt, AttemptState};
use crate::operation::{Decline, DeclineCode};
use crate::ports::NewOperation;
use crate::provider::AcquirerProvider;
use crate::route::Route;
use crate::service::{AcquirerSettings, Created, Gateway};
use crate::testkit::failure;
use crate::testkit::TestClock;
use crate::{Direction, PaymentMethod, Status};

const PRIMARY: &str = "primary";
const SECONDARY: &str = "secondary";

/// A card payout route `id` to `provider` with `priority`.
fn payout_route(id: i64, provider: &str, priority: i32) -> Route {
    Route {
        provider: provider.into(),
        priority,
        ..route(id, Direction::Withdrawal, PaymentMethod::Card)
    }
}

fn payment(status: PaymentStatus, failure: Option<Failure>) -> AcquirerPayment {
    AcquirerPayment {
        id: format!("acq_{}", status.as_str()),
        status,
        redirect_url: None,
        failure,
    }
}

/// The acquirer's answer: the payment failed for `reason`.
fn failed(reason: FailureReason) -> CallResult<AcquirerPayment> {
    CallResult::Answered(payment(PaymentStatus::Failed, Some(failure(reason))))
}

fn pending() -> CallResult<AcquirerPayment> {
    CallResult::Answered(payment(PaymentStatus::Pending, None))
}

fn refused() -> CallResult<AcquirerPayment> {
    CallResult::Unavailable("connection refused".into())
}

/// What the acquirers were asked: provider names in call order.
type Calls = Arc<Mutex<Vec<String>>>;

/// What `add_attempts` was handed: the attempt moved on from, and the ones added.
type MovedOn = (Attempt, Vec<Attempt>);

/// Mocks with `routes` to the acquirers `acquirers` (by timeout), each answering creations as
/// `answer` says; every store write taken.
fn mocks(
    routes: Vec<Route>,
    acquirers: &[(&'static str, u64)],
    answer: impl Fn(&str) -> CallResult<AcquirerPayment> + Send + Sync + 'static,
) -> (Mocks, Calls, Captured<NewOperation>, Captured<MovedOn>) {
    let records: Vec<AcquirerProvider> = acquirers
        .iter()
        .map(|(name, timeout)| acquirer(name, *timeout))
        .collect();
    let calls = Calls::default();
    let inserted = Captured::default();
    let added = Captured::default();
    let mut mocks = Mocks::new();
    mocks.set_routes(routes);
    mocks
        .providers
        .expect_acquirers()
        .returning(move || Ok(records.clone()));
    let sink = calls.clone();
    mocks
        .acquirer
        .expect_create()
        .returning(move |provider, _| {
            sink.lock()
                .unwrap()
                .push(provider.name.as_str().to_string());
            answer(provider.name.as_str())
        });
    mocks
        .store
        .expect_insert()
        .returning(inserted.answering(|| Ok(())));
    let sink = added.clone();
    mocks
        .store
        .expect_add_attempts()
        .returning(move |finished, next| {
            sink.push((finished.clone(), next.to_vec()));
            Ok(true)
        });
    mocks.store.expect_save_attempt().returning(|_| Ok(()));
    mocks
        .store
        .expect_save_attempt_soon()
        .returning(|_| committed(true));
    mocks.store.expect_finish().returning(|_| Ok(()));
    (mocks, calls, inserted, added)
}

fn payout(gateway: &Gateway) -> Created {
    let request = withdrawal_request("100.00", "card", false, true);
    block_on(
        gateway
            .creation()
            .create_withdrawal(&merchant(), request, CANONICAL),
    )
    .unwrap()
}

fn states(attempts: &[Attempt]) -> Vec<(u32, &str, AttemptState)> {
    attempts
        .iter()
        .map(|a| (a.number, a.provider.as_str(), a.state))
        .collect()
}

fn two_providers() -> Vec<Route> {
    vec![
        payout_route(11, PRIMARY, 200),
        payout_route(12, SECONDARY, 100),
    ]
}

#[test]
fn a_definite_failure_moves_on_to_the_next_provider_in_the_same_request() {
    for primary_answer in [
        refused(),
        failed(FailureReason::ProviderUnavailable),
        failed(FailureReason::InsufficientFunds),
    ] {
        let (mocks, calls, inserted, added) =
            mocks(two_providers(), &[(PRIMARY, 5), (SECONDARY, 5)], move |p| {
                if p == PRIMARY {
                    primary_answer.clone()
                } else {
                    pending()
                }
            });

        let created = payout(&mocks.gateway());

        assert_eq!(created.operation.status(), Status::Processing);
        assert_eq!(
            (created.operation.provider(), created.operation.route_id()),
            (SECONDARY, 12),
            "the operation is at the provider of its current attempt"
        );
        assert_eq!(*calls.lock().unwrap(), [PRIMARY, SECONDARY]);
        let new = inserted.one();
        assert_eq!(states(&new.attempts), [(1, PRIMARY, AttemptState::Sent)]);
        let (finished, next) = added.one();
        assert_eq!(
            (finished.number, finished.state),
            (1, AttemptState::Unavailable)
        );
        assert_eq!(finished.next_check_at, None);
        assert_eq!(states(&next), [(2, SECONDARY, AttemptState::Sent)]);
        assert_eq!(next[0].route_id, 12);
    }
}

#[test]
fn an_answered_failure_keeps_the_acquirers_id_and_code_on_the_attempt_left_behind() {
    let (mocks, _, _, added) = mocks(two_providers(), &[(PRIMARY, 5), (SECONDARY, 5)], |p| {
        if p == PRIMARY {
            failed(FailureReason::IssuerUnavailable)
        } else {
            pending()
        }
    });

    payout(&mocks.gateway());

    let (finished, _) = added.one();
    assert_eq!(finished.acquirer_id.as_deref(), Some("acq_failed"));
    assert_eq!(finished.failure_code.as_deref(), Some("issuer_unavailable"));
}

#[test]
fn a_decline_or_an_unknown_outcome_is_never_retried_elsewhere() {
    for (answer, status) in [
        (failed(FailureReason::CardDeclined), Status::Declined),
        (CallResult::Unknown("HTTP 502".into()), Status::Processing),
        (CallResult::Unknown("timed out".into()), Status::Processing),
    ] {
        let (mocks, calls, _, added) = mocks(
            two_providers(),
            &[(PRIMARY, 5), (SECONDARY, 5)],
            move |_| answer.clone(),
        );

        let created = payout(&mocks.gateway());

        assert_eq!(created.operation.status(), status);
        assert_eq!(*calls.lock().unwrap(), [PRIMARY]);
        assert!(added.all().is_empty());
    }
}

#[test]
fn with_no_candidate_left_the_operation_is_declined_as_provider_unavailable() {
    let (mocks, calls, _, added) = mocks(two_providers(), &[(PRIMARY, 5), (SECONDARY, 5)], |_| {
        refused()
    });

    let created = payout(&mocks.gateway());

    assert_eq!(
        created.operation.decline(),
        Some(&Decline::new(DeclineCode::ProviderUnavailable))
    );
    assert_eq!(*calls.lock().unwrap(), [PRIMARY, SECONDARY]);
    assert_eq!(added.all().len(), 1, "only the move to the secondary");
}

#[test]
fn a_provider_is_tried_once_however_many_routes_lead_to_it() {
    let routes = vec![
        payout_route(11, PRIMARY, 300),
        payout_route(12, PRIMARY, 200),
        payout_route(13, SECONDARY, 100),
    ];
    let (mocks, calls, _, added) = mocks(routes, &[(PRIMARY, 5), (SECONDARY, 5)], |p| {
        if p == PRIMARY {
            refused()
        } else {
            pending()
        }
    });

    payout(&mocks.gateway());

    assert_eq!(*calls.lock().unwrap(), [PRIMARY, SECONDARY]);
    let (_, next) = added.one();
    assert_eq!(
        states(&next),
        [
            (2, PRIMARY, AttemptState::Skipped),
            (3, SECONDARY, AttemptState::Sent)
        ]
    );
    assert_eq!(next[0].route_id, 12);
}

#[test]
fn failover_never_crosses_to_the_sandbox_or_another_flow() {
    let mut sandbox = payout_route(12, "sandbox", 100);
    sandbox.enabled = true;
    let routes = vec![payout_route(11, PRIMARY, 200), sandbox];
    let (mut mocks, calls, _, added) = mocks(routes, &[(PRIMARY, 5)], |_| refused());
    mocks.provider.expect_start_payout().never();

    let created = payout(&mocks.gateway());

    assert_eq!(
        created.operation.decline(),
        Some(&Decline::new(DeclineCode::ProviderUnavailable))
    );
    assert_eq!(*calls.lock().unwrap(), [PRIMARY]);
    assert!(added.all().is_empty());
}

#[test]
fn a_later_provider_whose_timeout_no_longer_fits_the_budget_is_skipped() {
    let routes = vec![
        payout_route(11, PRIMARY, 300),
        payout_route(12, SECONDARY, 200),
        payout_route(13, "third", 100),
    ];
    let clock = Arc::new(TestClock::at(now()));
    let moved = clock.clone();
    // The primary takes 9 s to refuse: 9 + 10 s no longer fits 15 s; 9 + 5 s does.
    let (mocks, calls, _, added) = mocks(
        routes,
        &[(PRIMARY, 10), (SECONDARY, 10), ("third", 5)],
        move |p| {
            if p == PRIMARY {
                moved.advance(9);
                refused()
            } else {
                pending()
            }
        },
    );

    let created = payout(&mocks.gateway_on(clock));

    assert_eq!(created.operation.status(), Status::Processing);
    assert_eq!(*calls.lock().unwrap(), [PRIMARY, "third"]);
    let (_, next) = added.one();
    assert_eq!(
        states(&next),
        [
            (2, SECONDARY, AttemptState::Skipped),
            (3, "third", AttemptState::Sent)
        ]
    );
}

#[test]
fn the_routing_budget_comes_from_the_settings() {
    let (mocks, calls, _, _) = mocks(two_providers(), &[(PRIMARY, 5), (SECONDARY, 5)], |_| {
        refused()
    });
    let gateway = mocks.gateway().with_acquirer_settings(AcquirerSettings {
        routing_budget: Duration::from_secs(4),
        ..AcquirerSettings::default()
    });

    let created = payout(&gateway);

    assert_eq!(
        *calls.lock().unwrap(),
        [PRIMARY],
        "the first is always tried"
    );
    assert_eq!(
        created.operation.decline(),
        Some(&Decline::new(DeclineCode::ProviderUnavailable))
    );
}

#[test]
fn an_open_circuit_skips_its_provider_without_calling_it() {
    let clock = Arc::new(TestClock::at(now()));
    let (mocks, calls, inserted, _) =
        mocks(two_providers(), &[(PRIMARY, 5), (SECONDARY, 5)], |p| {
            if p == PRIMARY {
                CallResult::Unknown("timed out".into())
            } else {
                pending()
            }
        });
    let gateway = mocks.gateway_on(clock.clone());
    for _ in 0..5 {
        payout(&gateway);
    }
    assert_eq!(calls.lock().unwrap().len(), 5);
    assert!(gateway
        .circuits()
        .iter()
        .any(|c| c.provider == PRIMARY && c.state.name() == "open"));

    payout(&gateway);

    assert_eq!(calls.lock().unwrap()[5..], [SECONDARY]);
    let new = inserted.all().pop().unwrap();
    assert_eq!(
        states(&new.attempts),
        [
            (1, PRIMARY, AttemptState::Skipped),
            (2, SECONDARY, AttemptState::Sent)
        ]
    );

    // 30 s later exactly one creation tries the primary again; it answers, the circuit closes.
    clock.advance(30);
    calls.lock().unwrap().clear();
    payout(&gateway);
    assert_eq!(*calls.lock().unwrap(), [PRIMARY]);
}

#[test]
fn every_circuit_open_declines_at_creation_with_no_provider_called() {
    let (mocks, calls, inserted, _) =
        mocks(two_providers(), &[(PRIMARY, 5), (SECONDARY, 5)], |_| {
            refused()
        });
    let gateway = mocks.gateway();
    // Each payout fails at both: after five, both circuits are open.
    for _ in 0..5 {
        payout(&gateway);
    }
    calls.lock().unwrap().clear();

    let created = payout(&gateway);

    assert!(calls.lock().unwrap().is_empty());
    assert_eq!(
        created.operation.decline(),
        Some(&Decline::new(DeclineCode::ProviderUnavailable))
    );
    let new = inserted.all().pop().unwrap();
    assert_eq!(
        states(&new.attempts),
        [
            (1, PRIMARY, AttemptState::Skipped),
            (2, SECONDARY, AttemptState::Skipped)
        ]
    );
    assert_eq!(net(&new.moves), (0, 0), "held and released at once");
    assert!(new.callback.is_some());
}

/// Both providers refuse; the store takes the operation, and answers moving on from the
/// primary's attempt with `answer`; nothing else is expected of it.
fn moving_on_answers(
    answer: impl Fn() -> Result<bool, crate::ports::StoreError> + Send + Sync + 'static,
) -> (Mocks, Calls) {
    let (mut mocks, calls, _, _) = mocks(two_providers(), &[(PRIMARY, 5), (SECONDARY, 5)], |_| {
        refused()
    });
    mocks.store.checkpoint();
    mocks.store.expect_insert().returning(|_| Ok(()));
    mocks
        .store
        .expect_add_attempts()
        .returning(move |_, _| answer());
    (mocks, calls)
}

#[test]
fn no_failover_once_the_attempt_has_moved_on_without_the_creation_call() {
    // A notification or a read found the payment at the primary while its creation call
    // failed: the store refuses the next attempt, and the secondary is never called.
    let (mut mocks, calls) = moving_on_answers(|| Ok(false));
    mocks.store.expect_finish().never();
    mocks
        .store
        .expect_get()
        .returning(|_| Ok(Some(payout_builder(new_id()).provider(PRIMARY).build())));

    let created = payout(&mocks.gateway());

    assert_eq!(*calls.lock().unwrap(), [PRIMARY]);
    assert_eq!(created.operation.status(), Status::Processing);
}

#[test]
fn a_next_attempt_that_cannot_be_committed_is_never_called() {
    let (mut mocks, calls) = moving_on_answers(|| Err(unavailable()));
    let finished = mocks.expect_finish(1, || Ok(()));
    mocks.store.expect_save_attempt().returning(|_| Ok(()));

    let created = payout(&mocks.gateway());

    assert_eq!(*calls.lock().unwrap(), [PRIMARY]);
    assert_eq!(
        created.operation.decline(),
        Some(&Decline::new(DeclineCode::ProviderUnavailable))
    );
    assert_eq!(finished.one().from_attempt, Some(1));
}
