//! Acquirer operations: creation in the store-first order, the classified answers, the
//! notifications and the reconciler.

use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use futures::executor::block_on;

use super::fixtures::*;
use crate::acquirer::{AcquirerPayment, CallResult, Failure, FailureReason, Lookup, PaymentStatus};
use crate::acquirer::{Notification, NotifiedObject};
use crate::attempt::{Attempt, AttemptState, Discrepancy};
use crate::operation::{Action, Decline, DeclineCode, Operation};
use crate::ports::{Completion, InsertError, MockClock};
use crate::provider::AcquirerProvider;
use crate::route::Route;
use crate::service::recent::IN_FLIGHT_WAIT;
use crate::service::{Gateway, NotificationError};
use crate::testkit::failure;
use crate::{Direction, PaymentMethod, Status, Timestamp};

pub(super) const BANK: &str = "bank";

pub(super) fn bank() -> AcquirerProvider {
    acquirer(BANK, 5)
}

/// The route table with card deposits (1) and card payouts (11) at [`BANK`].
fn bank_routes() -> Vec<Route> {
    routes()
        .into_iter()
        .map(|mut route| {
            if route.method == PaymentMethod::Card {
                route.provider = BANK.into();
            }
            route
        })
        .collect()
}

pub(super) fn payment(status: PaymentStatus, failure: Option<Failure>) -> AcquirerPayment {
    AcquirerPayment {
        id: "acq_1".into(),
        status,
        redirect_url: (status == PaymentStatus::ActionRequired)
            .then(|| "http://127.0.0.1:9100/pay/acq_1".to_string()),
        failure,
    }
}

/// The acquirer's answer: the payment failed for `reason`.
fn failed(reason: FailureReason) -> CallResult<AcquirerPayment> {
    CallResult::Answered(payment(PaymentStatus::Failed, Some(failure(reason))))
}

/// Mocks whose card routes go to [`BANK`], which is enabled.
pub(super) fn at_bank() -> Mocks {
    Mocks::new().with(|m| {
        m.set_routes(bank_routes());
        m.providers
            .expect_acquirers()
            .returning(|| Ok(vec![bank()]));
        m.providers
            .expect_acquirer()
            .returning(|_| Ok(Some(bank())));
    })
}

pub(super) fn expect_save_attempt(mocks: &mut Mocks) -> Captured<Attempt> {
    let seen = Captured::default();
    mocks
        .store
        .expect_save_attempt()
        .returning(seen.answering(|| Ok(())));
    seen
}

/// Expects the creation's answer, which leaves the operation processing, to be queued
/// rather than awaited; captures what is queued.
fn expect_save_attempt_soon(mocks: &mut Mocks) -> Captured<Attempt> {
    let seen = Captured::default();
    let sink = seen.clone();
    mocks.store.expect_save_attempt_soon().returning(move |a| {
        sink.push(a);
        committed(true)
    });
    mocks.store.expect_save_attempt().never();
    seen
}

/// The creation answers `result`, once; returns the orders sent.
fn acquirer_answers(
    mocks: &mut Mocks,
    result: CallResult<AcquirerPayment>,
) -> Captured<crate::acquirer::PaymentOrder> {
    let seen = Captured::default();
    let sink = seen.clone();
    mocks
        .acquirer
        .expect_create()
        .times(1)
        .returning(move |_, order| {
            sink.push(order.clone());
            result.clone()
        });
    seen
}

fn card_payout() -> crate::request::NewWithdrawal {
    withdrawal_request("100.00", "card", false, true)
}

#[test]
fn a_payout_is_committed_with_its_hold_and_attempt_before_the_acquirer_is_called() {
    let mut mocks = at_bank();
    let inserted = mocks.expect_insert(|| Ok(()));
    let orders = acquirer_answers(
        &mut mocks,
        CallResult::Answered(payment(PaymentStatus::Pending, None)),
    );
    let saved = expect_save_attempt_soon(&mut mocks);
    mocks.store.expect_finish().never();

    let created = mocks.create_withdrawal(card_payout()).unwrap();

    assert_eq!(created.operation.status(), Status::Processing);
    assert_eq!(created.operation.provider(), BANK);
    let new = inserted.one();
    assert_eq!(net(&new.moves), (-10_000, 10_000), "the hold");
    let [attempt] = new.attempts.as_slice() else {
        panic!("one attempt: {:?}", new.attempts);
    };
    assert_eq!((attempt.number, attempt.state), (1, AttemptState::Sent));
    assert_eq!(
        attempt.next_check_at,
        Some(now().plus_seconds(10)),
        "the call's lease"
    );
    let order = orders.one();
    assert_eq!(order.reference, new_id());
    assert_eq!(order.not_after, now().plus_seconds(60));
    assert_eq!(
        order.notify_url,
        "http://127.0.0.1:8080/providers/bank/notifications"
    );
    assert!(order.payout.is_some() && order.return_url.is_none() && order.expires_at.is_none());
    let written = saved.one();
    assert_eq!(written.state, AttemptState::Ok);
    assert_eq!(written.acquirer_id.as_deref(), Some("acq_1"));
    assert_eq!(
        written.next_check_at,
        Some(now().plus_seconds(60)),
        "quiet after 60 s"
    );
}

#[test]
fn an_acquirer_deposit_sends_its_user_to_the_gateways_pay_page() {
    let mut mocks = at_bank();
    let inserted = mocks.expect_insert(|| Ok(()));
    let orders = acquirer_answers(
        &mut mocks,
        CallResult::Answered(payment(PaymentStatus::ActionRequired, None)),
    );
    let saved = expect_save_attempt_soon(&mut mocks);

    let created = mocks
        .create_deposit(deposit_request("100.00", "card", false, false))
        .unwrap();

    let pay = format!("http://127.0.0.1:8080/pay/{}", new_id());
    assert_eq!(
        created.operation.action(),
        Some(&Action::Redirect { url: pay.clone() })
    );
    assert_eq!(
        inserted.one().operation.action(),
        Some(&Action::Redirect { url: pay.clone() })
    );
    let order = orders.one();
    assert_eq!(order.return_url, Some(format!("{pay}/return")));
    assert_eq!(order.expires_at, created.operation.expires_at());
    assert!(order.payout.is_none());
    assert_eq!(
        saved.one().redirect_url.as_deref(),
        Some("http://127.0.0.1:9100/pay/acq_1")
    );
}

#[test]
fn definite_failures_decline_as_provider_unavailable_and_release_the_hold() {
    for answer in [
        CallResult::Unavailable("connection refused".into()),
        failed(FailureReason::ProviderUnavailable),
        failed(FailureReason::InsufficientFunds),
    ] {
        let mut mocks = at_bank();
        mocks.expect_insert(|| Ok(()));
        acquirer_answers(&mut mocks, answer.clone());
        let saved = expect_save_attempt(&mut mocks);
        let finished = mocks.expect_finish(1, || Ok(()));

        let created = mocks.create_withdrawal(card_payout()).unwrap();

        assert_eq!(
            created.operation.decline(),
            Some(&Decline::new(DeclineCode::ProviderUnavailable)),
            "{answer:?}"
        );
        assert_eq!(saved.one().state, AttemptState::Unavailable);
        let completion = finished.one();
        assert_eq!(
            net(&completion.moves),
            (10_000, -10_000),
            "the hold is released"
        );
        assert!(completion.callback.is_some());
    }
}

#[test]
fn a_decline_by_the_bank_keeps_its_own_code() {
    let mut mocks = at_bank();
    mocks.expect_insert(|| Ok(()));
    acquirer_answers(&mut mocks, failed(FailureReason::CardDeclined));
    let saved = expect_save_attempt(&mut mocks);
    mocks.expect_finish(1, || Ok(()));

    let created = mocks.create_withdrawal(card_payout()).unwrap();

    assert_eq!(
        created.operation.decline(),
        Some(&Decline::new(DeclineCode::CardDeclined))
    );
    let attempt = saved.one();
    assert_eq!(attempt.state, AttemptState::Declined);
    assert_eq!(attempt.failure_code.as_deref(), Some("card_declined"));
}

#[test]
fn an_unknown_outcome_stays_processing_with_its_hold_and_is_read_a_second_later() {
    let mut mocks = at_bank();
    mocks.expect_insert(|| Ok(()));
    acquirer_answers(&mut mocks, CallResult::Unknown("HTTP 502".into()));
    let saved = expect_save_attempt(&mut mocks);
    mocks.store.expect_finish().never();

    let created = mocks.create_withdrawal(card_payout()).unwrap();

    assert_eq!(created.operation.status(), Status::Processing);
    let attempt = saved.one();
    assert_eq!(attempt.state, AttemptState::Unknown);
    assert_eq!(attempt.unknown_since, Some(now()));
    assert_eq!(attempt.next_check_at, Some(now().plus_seconds(1)));
}

#[test]
fn an_answer_that_cannot_be_written_still_answers_the_committed_operation() {
    let mut mocks = at_bank();
    mocks.expect_insert(|| Ok(()));
    acquirer_answers(
        &mut mocks,
        CallResult::Answered(payment(PaymentStatus::Succeeded, None)),
    );
    mocks
        .store
        .expect_finish()
        .times(1)
        .returning(|_| Err(crate::ports::FinishError::Store(unavailable())));
    // The attempt keeps its due check (the end of the call's lease): the reconciler reads it.
    mocks.store.expect_save_attempt().never();

    let created = mocks.create_withdrawal(card_payout()).unwrap();

    assert_eq!(created.operation.status(), Status::Processing);
}

#[test]
fn a_request_that_loses_the_race_for_its_merchant_operation_id_never_calls_the_acquirer() {
    let mut mocks = at_bank();
    mocks.expect_insert(|| Err(InsertError::Duplicate));
    let winner = payout_builder(existing_id()).provider(BANK).build();
    mocks.earlier(Direction::Withdrawal, winner.clone(), CANONICAL);
    mocks.acquirer.expect_create().never();

    let created = mocks
        .create_withdrawal(withdrawal_request("100.00", "card", true, true))
        .unwrap();

    assert_replay_of(&created, &winner);
}

#[test]
fn a_disabled_acquirer_takes_no_new_operations() {
    let mut mocks = Mocks::new();
    mocks.set_routes(bank_routes());
    mocks.providers.expect_acquirers().returning(|| {
        Ok(vec![AcquirerProvider {
            enabled: false,
            ..bank()
        }])
    });
    mocks.store.expect_find_by_merchant_operation_id().never();
    mocks.expect_no_store_writes();
    mocks.acquirer.expect_create().never();

    let result = mocks.create_withdrawal(card_payout());

    assert!(matches!(
        result,
        Err(crate::service::CreateError::NoRouteFound)
    ));
}

fn notification(status: PaymentStatus, code: Option<Failure>) -> Notification {
    Notification {
        object: NotifiedObject::Payment,
        id: "acq_1".into(),
        reference: id(1).to_string(),
        status,
        failure: code,
        dispute: None,
    }
}

fn bank_payout() -> Operation {
    payout_builder(id(1)).provider(BANK).build()
}

/// [`at_bank`] mocks whose store holds `operation`.
fn at_bank_holding(operation: Operation) -> Mocks {
    let mut mocks = at_bank();
    mocks.stored(operation);
    mocks
}

pub(super) fn ok_attempt(number: u32, provider: &str) -> Attempt {
    Attempt {
        state: AttemptState::Ok,
        acquirer_id: Some("acq_1".into()),
        ..Attempt::sent(id(1), number, 11, provider, now(), now())
    }
}

pub(super) fn with_attempts(mocks: &mut Mocks, attempts: Vec<Attempt>) {
    mocks
        .store
        .expect_attempts()
        .returning(move |_| Ok(attempts.clone()));
}

/// The store holds `operation` with `attempts`, read together as a notification reads them.
fn known(mocks: &mut Mocks, operation: Operation, attempts: Vec<Attempt>) {
    let id = operation.id();
    mocks
        .store
        .expect_get_with_attempts()
        .withf(move |asked| *asked == id)
        .returning(move |_| Ok(Some((operation.clone(), attempts.clone()))));
}

fn notify(mocks: Mocks, n: Notification) -> Result<(), NotificationError> {
    block_on(mocks.gateway().answers().apply_notification(&bank(), n))
}

#[test]
fn a_final_notification_finishes_the_operation_once() {
    let mut mocks = at_bank();
    known(&mut mocks, bank_payout(), vec![ok_attempt(1, BANK)]);
    let saved = expect_save_attempt(&mut mocks);
    let finished = mocks.expect_finish(1, || Ok(()));

    notify(mocks, notification(PaymentStatus::Succeeded, None)).unwrap();

    assert_eq!(finished.one().operation.status(), Status::Approved);
    assert_eq!(saved.one().next_check_at, None);
}

#[test]
fn notifications_for_what_this_provider_never_had_are_not_found_and_change_nothing() {
    let cases: Vec<(Vec<Attempt>, Notification)> = vec![
        (vec![], notification(PaymentStatus::Succeeded, None)),
        (
            vec![ok_attempt(1, "other")],
            notification(PaymentStatus::Succeeded, None),
        ),
        (
            vec![ok_attempt(1, BANK)],
            Notification {
                id: "acq_other".into(),
                ..notification(PaymentStatus::Succeeded, None)
            },
        ),
    ];
    for (attempts, n) in cases {
        let mut mocks = at_bank();
        known(&mut mocks, bank_payout(), attempts);
        mocks.store.expect_save_attempt().never();
        mocks.expect_no_store_writes();

        assert!(matches!(notify(mocks, n), Err(NotificationError::NotFound)));
    }
    let mut mocks = at_bank();
    mocks
        .store
        .expect_get_with_attempts()
        .returning(|_| Ok(None));
    assert!(matches!(
        notify(mocks, notification(PaymentStatus::Succeeded, None)),
        Err(NotificationError::NotFound)
    ));
}

#[test]
fn a_status_that_contradicts_a_final_operation_is_a_discrepancy_and_changes_nothing() {
    let declined = payout_builder(id(1))
        .provider(BANK)
        .declined(Decline::new(DeclineCode::ProviderUnavailable))
        .build();
    let mut mocks = at_bank();
    known(&mut mocks, declined, vec![ok_attempt(1, BANK)]);
    expect_save_attempt(&mut mocks);
    mocks.store.expect_finish().never();
    let recorded = Captured::default();
    let sink = recorded.clone();
    mocks
        .store
        .expect_record_discrepancy()
        .times(1)
        .returning(move |d: &Discrepancy| {
            sink.push(d.clone());
            Ok(())
        });

    notify(mocks, notification(PaymentStatus::Succeeded, None)).unwrap();

    let discrepancy = recorded.one();
    assert_eq!(
        (discrepancy.provider.as_str(), discrepancy.reported.as_str()),
        (BANK, "succeeded")
    );
}

#[test]
fn a_final_status_heard_again_changes_nothing() {
    let approved = payout_builder(id(1))
        .provider(BANK)
        .status(Status::Approved)
        .build();
    let mut mocks = at_bank();
    known(&mut mocks, approved, vec![ok_attempt(1, BANK)]);
    expect_save_attempt(&mut mocks);
    mocks.store.expect_finish().never();
    mocks.store.expect_record_discrepancy().never();

    notify(mocks, notification(PaymentStatus::Succeeded, None)).unwrap();
}

/// A notification from [`BANK`] about the operation created by the mocks ([`new_id`]).
fn notification_of_new(status: PaymentStatus, acquirer_id: &str) -> Notification {
    Notification {
        id: acquirer_id.into(),
        reference: new_id().to_string(),
        ..notification(status, None)
    }
}

#[test]
fn a_notification_that_repeats_the_creations_answer_reads_and_writes_nothing() {
    for (answer, deposit) in [
        (PaymentStatus::ActionRequired, true),
        (PaymentStatus::Pending, false),
    ] {
        let mut mocks = at_bank();
        mocks.expect_insert(|| Ok(()));
        acquirer_answers(&mut mocks, CallResult::Answered(payment(answer, None)));
        let saved = expect_save_attempt_soon(&mut mocks);
        mocks.store.expect_get_with_attempts().never();
        mocks.store.expect_attempts().never();
        mocks.store.expect_finish().never();
        let gateway = mocks.gateway();
        let created = if deposit {
            block_on(gateway.creation().create_deposit(
                &merchant(),
                deposit_request("100.00", "card", false, false),
                CANONICAL,
            ))
        } else {
            block_on(
                gateway
                    .creation()
                    .create_withdrawal(&merchant(), card_payout(), CANONICAL),
            )
        }
        .unwrap();
        assert_eq!(created.operation.id(), new_id());

        for _ in 0..2 {
            block_on(
                gateway
                    .answers()
                    .apply_notification(&bank(), notification_of_new(answer, "acq_1")),
            )
            .unwrap();
        }

        assert_eq!(
            saved.one().state,
            AttemptState::Ok,
            "the creation's save alone"
        );
    }
}

/// Mocks where a payout is created and answered `pending`, whose queued save of that answer
/// is `committed` or not.
fn payout_answered_pending(committed_save: bool) -> Mocks {
    let mut mocks = at_bank();
    mocks.expect_insert(|| Ok(()));
    acquirer_answers(
        &mut mocks,
        CallResult::Answered(payment(PaymentStatus::Pending, None)),
    );
    mocks
        .store
        .expect_save_attempt_soon()
        .times(1)
        .returning(move |_| committed(committed_save));
    mocks
}

#[test]
fn a_repeat_of_an_answer_whose_save_was_not_written_is_read_and_applied() {
    let mut mocks = payout_answered_pending(false);
    let sent = Attempt::sent(new_id(), 1, 11, BANK, now(), now().plus_seconds(10));
    known(
        &mut mocks,
        payout_builder(new_id()).provider(BANK).build(),
        vec![sent],
    );
    let saved = expect_save_attempt(&mut mocks);
    mocks.store.expect_finish().never();
    let gateway = mocks.gateway();
    block_on(
        gateway
            .creation()
            .create_withdrawal(&merchant(), card_payout(), CANONICAL),
    )
    .unwrap();

    block_on(gateway.answers().apply_notification(
        &bank(),
        notification_of_new(PaymentStatus::Pending, "acq_1"),
    ))
    .unwrap();

    let attempt = saved.one();
    assert_eq!(
        (attempt.state, attempt.acquirer_id.as_deref()),
        (AttemptState::Ok, Some("acq_1")),
        "the notification's own save"
    );
}

#[test]
fn a_notification_that_could_change_anything_after_the_creation_is_read() {
    let attempt = || Attempt {
        state: AttemptState::Ok,
        acquirer_id: Some("acq_1".into()),
        ..Attempt::sent(new_id(), 1, 11, BANK, now(), now())
    };
    let operation = || payout_builder(new_id()).provider(BANK).build();
    let pending = |acquirer_id| notification_of_new(PaymentStatus::Pending, acquirer_id);
    let cases = [
        (
            "another status",
            notification_of_new(PaymentStatus::ActionRequired, "acq_1"),
            bank(),
        ),
        ("another acquirer id", pending("acq_2"), bank()),
        ("another provider", pending("acq_1"), acquirer("other", 5)),
        (
            "a failure code",
            Notification {
                failure: Some(Failure::new(FailureReason::Other, "soft_decline")),
                ..pending("acq_1")
            },
            bank(),
        ),
        (
            "a final status",
            notification_of_new(PaymentStatus::Succeeded, "acq_1"),
            bank(),
        ),
    ];
    for (case, n, provider) in cases {
        let mut mocks = payout_answered_pending(true);
        let read = Captured::default();
        let sink = read.clone();
        mocks
            .store
            .expect_get_with_attempts()
            .times(1)
            .returning(move |asked| {
                sink.push(asked);
                Ok(Some((operation(), vec![attempt()])))
            });
        mocks.store.expect_save_attempt().returning(|_| Ok(()));
        mocks.expect_finish(usize::from(case == "a final status"), || Ok(()));
        let gateway = mocks.gateway();
        block_on(
            gateway
                .creation()
                .create_withdrawal(&merchant(), card_payout(), CANONICAL),
        )
        .unwrap();

        // Whether it is found or not is for the other tests: here, that it was read.
        let _ = block_on(gateway.answers().apply_notification(&provider, n));

        assert_eq!(read.one(), new_id(), "{case}");
    }
}

#[test]
fn a_status_heard_during_a_call_whose_outcome_is_unknown_is_not_taken_as_a_repeat() {
    // The notification comes while the creation call is in flight and is applied; then the
    // call's outcome is unknown. The same notification again must be read and applied: it
    // is what tells the gateway the payment exists.
    let gateway: Arc<OnceLock<Gateway>> = Arc::default();
    let mut mocks = at_bank();
    mocks.expect_insert(|| Ok(()));
    let sent = Attempt::sent(new_id(), 1, 11, BANK, now(), now().plus_seconds(10));
    let read = Captured::default();
    let sink = read.clone();
    mocks
        .store
        .expect_get_with_attempts()
        .times(2)
        .returning(move |asked| {
            sink.push(asked);
            let operation = payout_builder(new_id()).provider(BANK).build();
            Ok(Some((operation, vec![sent.clone()])))
        });
    let saved = expect_save_attempt(&mut mocks);
    let in_flight = gateway.clone();
    mocks
        .acquirer
        .expect_create()
        .times(1)
        .returning(move |_, _| {
            let gateway = in_flight.get().cloned().expect("the gateway is built");
            std::thread::spawn(move || {
                block_on(gateway.answers().apply_notification(
                    &bank(),
                    notification_of_new(PaymentStatus::Pending, "acq_1"),
                ))
            })
            .join()
            .expect("the notification's thread")
            .expect("the notification is applied");
            CallResult::Unknown("HTTP 502".into())
        });
    assert!(gateway.set(mocks.gateway()).is_ok());
    let gateway = gateway.get().expect("just set");

    block_on(
        gateway
            .creation()
            .create_withdrawal(&merchant(), card_payout(), CANONICAL),
    )
    .unwrap();
    block_on(gateway.answers().apply_notification(
        &bank(),
        notification_of_new(PaymentStatus::Pending, "acq_1"),
    ))
    .unwrap();

    assert_eq!(read.all(), vec![new_id(), new_id()], "read both times");
    let states: Vec<AttemptState> = saved.all().iter().map(|a| a.state).collect();
    assert_eq!(
        states,
        vec![AttemptState::Ok, AttemptState::Unknown, AttemptState::Ok]
    );
}

/// A notification applied on a thread of its own.
type Notifying = JoinHandle<Result<(), NotificationError>>;

/// Creates a card payout on `mocks` whose acquirer answers `result` only once a `pending`
/// notification, sent from another thread while the call is in flight, has begun waiting on
/// a clock whose waits never end by themselves. Returns that notification's result and the
/// waits it asked the clock for.
fn notified_while_in_flight(
    mut mocks: Mocks,
    result: CallResult<AcquirerPayment>,
) -> (Result<(), NotificationError>, Vec<std::time::Duration>) {
    let (waiting, waits) = std::sync::mpsc::channel();
    let waiting = Mutex::new(waiting);
    mocks.clock = MockClock::new();
    mocks.clock.expect_now().return_const(now());
    mocks.clock.expect_sleep().returning(move |duration| {
        waiting
            .lock()
            .expect("the waits' channel")
            .send(duration)
            .expect("the test listens");
        Box::pin(futures::future::pending())
    });
    let waits = Mutex::new(waits);
    let gateway: Arc<OnceLock<Gateway>> = Arc::default();
    let notified: Arc<Mutex<Option<Notifying>>> = Arc::default();
    let (in_flight, handle) = (gateway.clone(), notified.clone());
    let asked = Captured::default();
    let sink = asked.clone();
    mocks
        .acquirer
        .expect_create()
        .times(1)
        .returning(move |_, _| {
            let gateway = in_flight.get().cloned().expect("the gateway is built");
            *handle.lock().expect("the handle") = Some(std::thread::spawn(move || {
                block_on(gateway.answers().apply_notification(
                    &bank(),
                    notification_of_new(PaymentStatus::Pending, "acq_1"),
                ))
            }));
            // The notification asks for its bounded wait only once it waits for this call.
            let wait = waits
                .lock()
                .expect("the waits")
                .recv_timeout(std::time::Duration::from_secs(10))
                .expect("the notification waits for the call");
            sink.push(wait);
            result.clone()
        });
    assert!(gateway.set(mocks.gateway()).is_ok());
    let gateway = gateway.get().expect("just set");

    block_on(
        gateway
            .creation()
            .create_withdrawal(&merchant(), card_payout(), CANONICAL),
    )
    .unwrap();

    let notification = notified
        .lock()
        .expect("the handle")
        .take()
        .expect("the notification was sent")
        .join()
        .expect("the notification's thread");
    (notification, asked.all())
}

#[test]
fn a_notification_heard_while_the_creation_call_is_in_flight_waits_for_its_answer() {
    // The acquirer notifies `pending` as it answers `pending`: the notification waits for the
    // answer, then repeats it, and is acknowledged once the answer's save commits, with
    // nothing read or written for it.
    let mut mocks = at_bank();
    mocks.expect_insert(|| Ok(()));
    let saved = expect_save_attempt_soon(&mut mocks);
    mocks.store.expect_get_with_attempts().never();
    mocks.store.expect_finish().never();

    let (notification, waits) = notified_while_in_flight(
        mocks,
        CallResult::Answered(payment(PaymentStatus::Pending, None)),
    );

    notification.expect("acknowledged");
    assert_eq!(waits, vec![IN_FLIGHT_WAIT], "one bounded wait");
    assert_eq!(
        saved.one().state,
        AttemptState::Ok,
        "the creation's save alone"
    );
}

#[test]
fn a_notification_waiting_for_a_call_whose_outcome_is_unknown_is_read_and_applied() {
    // The wait ends with the call, whatever its outcome: unknown, the notification is no
    // repeat of anything, and it is what tells the gateway the payment exists.
    let mut mocks = at_bank();
    mocks.expect_insert(|| Ok(()));
    let sent = Attempt {
        state: AttemptState::Unknown,
        ..Attempt::sent(new_id(), 1, 11, BANK, now(), now().plus_seconds(10))
    };
    mocks
        .store
        .expect_get_with_attempts()
        .times(1)
        .returning(move |_| {
            let operation = payout_builder(new_id()).provider(BANK).build();
            Ok(Some((operation, vec![sent.clone()])))
        });
    let saved = expect_save_attempt(&mut mocks);
    mocks.store.expect_finish().never();

    let (notification, waits) =
        notified_while_in_flight(mocks, CallResult::Unknown("HTTP 502".into()));

    notification.expect("applied");
    assert_eq!(waits, vec![IN_FLIGHT_WAIT]);
    let states: Vec<AttemptState> = saved.all().iter().map(|a| a.state).collect();
    assert_eq!(
        states,
        vec![AttemptState::Unknown, AttemptState::Ok],
        "the call's unknown outcome, then the notification's status"
    );
}

#[test]
fn a_definite_failure_heard_while_the_creation_call_is_in_flight_is_left_to_that_call() {
    let mut mocks = at_bank();
    known(
        &mut mocks,
        bank_payout(),
        vec![Attempt::sent(id(1), 1, 11, BANK, now(), now())],
    );
    let saved = expect_save_attempt(&mut mocks);
    mocks.store.expect_finish().never();

    notify(
        mocks,
        notification(
            PaymentStatus::Failed,
            Some(failure(FailureReason::ProviderUnavailable)),
        ),
    )
    .unwrap();

    let attempt = saved.one();
    assert_eq!(attempt.state, AttemptState::Sent);
    assert_eq!(
        attempt.failure_code.as_deref(),
        Some("provider_unavailable")
    );
}

#[test]
fn success_reported_for_an_earlier_attempt_is_recorded_there_as_a_discrepancy() {
    let mut mocks = at_bank();
    known(
        &mut mocks,
        bank_payout(),
        vec![
            Attempt {
                state: AttemptState::Unknown,
                acquirer_id: None,
                ..ok_attempt(1, BANK)
            },
            ok_attempt(2, "other"),
        ],
    );
    let saved = expect_save_attempt(&mut mocks);
    mocks.store.expect_finish().never();
    mocks
        .store
        .expect_record_discrepancy()
        .times(1)
        .returning(|_| Ok(()));

    notify(mocks, notification(PaymentStatus::Succeeded, None)).unwrap();

    let attempt = saved.one();
    assert_eq!(
        (attempt.number, attempt.acquirer_id.as_deref()),
        (1, Some("acq_1"))
    );
}

#[test]
fn success_for_an_attempt_superseded_while_it_was_applied_is_a_discrepancy_not_a_status() {
    // The attempt looked current when read, but routing moved on before the status was
    // written: the store refuses the final status, and the money is flagged.
    let mut mocks = at_bank();
    known(
        &mut mocks,
        bank_payout(),
        vec![Attempt::sent(id(1), 1, 11, BANK, now(), now())],
    );
    // Read again after the refused finish.
    mocks.stored(bank_payout());
    let finished = mocks.expect_finish(1, || Err(crate::ports::FinishError::NotProcessing));
    expect_save_attempt(&mut mocks);
    mocks
        .store
        .expect_record_discrepancy()
        .times(1)
        .returning(|_| Ok(()));

    notify(mocks, notification(PaymentStatus::Succeeded, None)).unwrap();

    assert_eq!(finished.one().from_attempt, Some(1));
}

/// A reconciler pass over one claimed attempt, at `at`.
fn reconcile(mut mocks: Mocks, attempt: Attempt, at: Timestamp) -> usize {
    mocks.set_clock(at);
    mocks
        .store
        .expect_claim_checks()
        .times(1)
        .returning(move |provider, _, _, _, _| {
            assert_eq!(provider, BANK);
            Ok(vec![attempt.clone()])
        });
    block_on(mocks.gateway().answers().reconcile("me")).unwrap()
}

fn unknown_attempt() -> Attempt {
    Attempt {
        state: AttemptState::Unknown,
        unknown_since: Some(now()),
        ..Attempt::sent(id(1), 1, 11, BANK, now(), now().plus_seconds(1))
    }
}

#[test]
fn the_reconciler_resolves_an_unknown_outcome_by_reading() {
    let mut mocks = at_bank_holding(bank_payout());
    mocks
        .acquirer
        .expect_find()
        .times(1)
        .returning(|_, _| Lookup::Found(payment(PaymentStatus::Succeeded, None)));
    mocks.acquirer.expect_create().never();
    let saved = expect_save_attempt(&mut mocks);
    let finished = mocks.expect_finish(1, || Ok(()));

    assert_eq!(
        reconcile(mocks, unknown_attempt(), now().plus_seconds(1)),
        1
    );

    assert_eq!(finished.one().operation.status(), Status::Approved);
    let attempt = saved.one();
    assert_eq!(
        (attempt.state, attempt.unknown_since),
        (AttemptState::Ok, None)
    );
}

#[test]
fn a_payment_the_acquirer_does_not_know_waits_until_not_after_has_passed_by_five_minutes() {
    // Before the threshold: read again on the schedule, at the threshold at the latest.
    let mut mocks = at_bank_holding(bank_payout());
    mocks
        .acquirer
        .expect_find()
        .returning(|_, _| Lookup::NotFound);
    let saved = expect_save_attempt(&mut mocks);
    mocks.store.expect_finish().never();
    let mut late = unknown_attempt();
    late.reads = 5;
    reconcile(mocks, late, now().plus_seconds(108));
    assert_eq!(
        saved.one().next_check_at,
        Some(now().plus_seconds(360)),
        "the 404 rule's threshold"
    );

    // At the threshold: never created, so declined and the hold released.
    let mut mocks = at_bank_holding(bank_payout());
    mocks
        .acquirer
        .expect_find()
        .returning(|_, _| Lookup::NotFound);
    let saved = expect_save_attempt(&mut mocks);
    let finished = mocks.expect_finish(1, || Ok(()));
    reconcile(mocks, unknown_attempt(), now().plus_seconds(360));
    assert_eq!(saved.one().state, AttemptState::Unavailable);
    let completion: Completion = finished.one();
    assert_eq!(
        completion.operation.decline(),
        Some(&Decline::new(DeclineCode::ProviderUnavailable))
    );
}

#[test]
fn a_creation_whose_process_died_is_read_from_the_end_of_its_lease() {
    let lease_end = now().plus_seconds(10);
    let mut mocks = at_bank_holding(bank_payout());
    mocks.acquirer.expect_find().never();
    let saved = expect_save_attempt(&mut mocks);

    reconcile(
        mocks,
        Attempt::sent(id(1), 1, 11, BANK, now(), lease_end),
        lease_end,
    );

    let attempt = saved.one();
    assert_eq!(attempt.state, AttemptState::Unknown);
    assert_eq!(attempt.unknown_since, Some(lease_end));
    assert_eq!(
        attempt.next_check_at,
        Some(lease_end.plus_seconds(1)),
        "read 1 s after"
    );

    let mut mocks = at_bank_holding(bank_payout());
    mocks
        .acquirer
        .expect_find()
        .times(1)
        .returning(|_, _| Lookup::Failed("HTTP 503".into()));
    let saved = expect_save_attempt(&mut mocks);
    reconcile(mocks, attempt, lease_end.plus_seconds(1));
    assert_eq!(
        saved.one().next_check_at,
        Some(lease_end.plus_seconds(3)),
        "then 3 s after"
    );
}

fn expired_bank_deposit() -> Operation {
    deposit_builder(id(1))
        .provider(BANK)
        .route(1)
        .expires(now().plus_seconds(-1))
        .build()
}

#[test]
fn an_expired_deposit_is_cancelled_at_the_acquirer_and_declined_as_expired() {
    let mut mocks = at_bank_holding(expired_bank_deposit());
    mocks.acquirer.expect_find().never();
    mocks
        .acquirer
        .expect_cancel()
        .withf(|_, id| id == "acq_1")
        .times(1)
        .returning(|_, _| Lookup::Found(payment(PaymentStatus::Canceled, None)));
    expect_save_attempt(&mut mocks);
    let finished = mocks.expect_finish(1, || Ok(()));

    reconcile(mocks, ok_attempt(1, BANK), now());

    assert_eq!(
        finished.one().operation.decline(),
        Some(&Decline::new(DeclineCode::Expired))
    );
}

#[test]
fn expiry_that_finds_the_payment_already_succeeded_approves_it() {
    let mut mocks = at_bank_holding(expired_bank_deposit());
    mocks
        .acquirer
        .expect_cancel()
        .returning(|_, _| Lookup::Found(payment(PaymentStatus::Succeeded, None)));
    expect_save_attempt(&mut mocks);
    let finished = mocks.expect_finish(1, || Ok(()));

    reconcile(mocks, ok_attempt(1, BANK), now());

    assert_eq!(finished.one().operation.status(), Status::Approved);
}

#[test]
fn an_acquirer_deposit_is_never_expired_on_the_gateways_clock_alone() {
    // The acquirer reports success after the lifetime: it applies as reported.
    let mut mocks = at_bank();
    known(
        &mut mocks,
        expired_bank_deposit(),
        vec![ok_attempt(1, BANK)],
    );
    expect_save_attempt(&mut mocks);
    let finished = mocks.expect_finish(1, || Ok(()));

    notify(mocks, notification(PaymentStatus::Succeeded, None)).unwrap();

    assert_eq!(finished.one().operation.status(), Status::Approved);
}

#[test]
fn an_operators_cancel_declines_as_canceled_once_the_acquirer_canceled() {
    let mut mocks = at_bank_holding(bank_payout());
    with_attempts(&mut mocks, vec![ok_attempt(1, BANK)]);
    mocks
        .acquirer
        .expect_cancel()
        .times(1)
        .returning(|_, _| Lookup::Found(payment(PaymentStatus::Canceled, None)));
    expect_save_attempt(&mut mocks);
    let finished = mocks.expect_finish(1, || Ok(()));

    let done = block_on(mocks.gateway().refunds().cancel_at_provider(id(1))).unwrap();

    assert_eq!(done.decline(), Some(&Decline::new(DeclineCode::Canceled)));
    assert_eq!(
        net(&finished.one().moves),
        (25_000, -25_000),
        "the hold is released"
    );
}

#[test]
fn a_cancel_that_finds_the_payout_executed_applies_that_status_instead() {
    let mut mocks = at_bank_holding(bank_payout());
    with_attempts(&mut mocks, vec![ok_attempt(1, BANK)]);
    mocks
        .acquirer
        .expect_cancel()
        .returning(|_, _| Lookup::Found(payment(PaymentStatus::Succeeded, None)));
    expect_save_attempt(&mut mocks);
    mocks.expect_finish(1, || Ok(()));

    let result = block_on(mocks.gateway().refunds().cancel_at_provider(id(1)));

    assert!(
        matches!(&result, Err(crate::service::CancelError::Final(op)) if op.status() == Status::Approved),
        "{result:?}"
    );
}

#[test]
fn a_cancel_whose_answer_is_unknown_changes_nothing() {
    let mut mocks = at_bank_holding(bank_payout());
    with_attempts(&mut mocks, vec![ok_attempt(1, BANK)]);
    mocks
        .acquirer
        .expect_cancel()
        .returning(|_, _| Lookup::Failed("HTTP 502".into()));
    mocks.store.expect_save_attempt().never();
    mocks.store.expect_finish().never();

    let result = block_on(mocks.gateway().refunds().cancel_at_provider(id(1)));

    assert!(matches!(
        result,
        Err(crate::service::CancelError::Unavailable(_))
    ));
}
