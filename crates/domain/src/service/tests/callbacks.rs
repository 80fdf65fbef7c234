//! What the callbacks the use cases queue report (the callback rules of docs/api.md); their
//! wire format is the callback adapter's, tested there.

use super::fixtures::*;
use crate::callback::{CallbackData, QueuedCallback};
use crate::operation::{Decline, DeclineCode, Operation, Outcome};
use crate::ports::MockCallbackFormat;
use crate::{Amount, Currency, Direction, PaymentMethod, Status, UserId};

/// Completes `op` with `outcome` and returns the callback queued with it.
fn queued(op: Operation, outcome: Outcome) -> QueuedCallback {
    let (_, completion) = completed(op, outcome);
    completion.callback.expect("a callback is queued")
}

#[test]
fn an_approved_callback_reports_the_final_operation() {
    let callback = queued(deposit(id(1)), Outcome::Approve);

    assert_eq!(
        callback.data,
        CallbackData {
            operation_id: id(1),
            merchant_operation_id: Some(moid()),
            direction: Direction::Deposit,
            method: PaymentMethod::Card,
            user_id: UserId::parse("user-7").unwrap(),
            status: Status::Approved,
            amount: Amount::parse("100.00", Currency::RUB).unwrap(),
            currency: Currency::RUB,
            updated_at: now(),
            decline: None,
            fee: 0,
        }
    );
    assert_eq!(callback.url.as_str(), CALLBACK_URL);
    assert_eq!(callback.merchant_id, merchant().id);
    assert_eq!(callback.queued_at, now());
    assert_eq!(
        callback.body.with_sequence(3),
        format!("{:?} sequence=3", callback.data)
    );
}

#[test]
fn a_declined_callback_carries_its_decline() {
    let decline = Decline::new(DeclineCode::RecipientNotFound);
    let callback = queued(payout(id(2)), Outcome::Decline(decline.clone()));

    assert_eq!(callback.direction, Direction::Withdrawal);
    assert_eq!(callback.data.direction, Direction::Withdrawal);
    assert_eq!(callback.data.status, Status::Declined);
    assert_eq!(
        callback.data.amount,
        Amount::parse("250.00", Currency::RUB).unwrap()
    );
    assert_eq!(callback.data.decline, Some(decline));
}

#[test]
fn without_merchant_operation_id_none_is_reported() {
    let op = deposit_builder(id(1)).no_merchant_operation_id().build();

    let callback = queued(op, Outcome::Approve);

    assert_eq!(callback.data.merchant_operation_id, None);
}

#[test]
fn the_body_is_what_the_callback_format_writes() {
    let done = deposit(id(1)).finish(&Outcome::Approve, now()).unwrap();
    let mut format = MockCallbackFormat::new();
    format
        .expect_body()
        .withf(|data| data.operation_id == id(1) && data.status == Status::Approved)
        .times(1)
        .return_const(domain_body());

    let callback =
        crate::service::callbacks::callback_for(&done, &format).expect("final with a URL");

    assert_eq!(callback.body, domain_body());
}

fn domain_body() -> crate::callback::CallbackBody {
    crate::callback::CallbackBody::around("the body, number ", "")
}

#[test]
fn a_processing_operation_or_one_without_callback_url_queues_nothing() {
    let mut format = MockCallbackFormat::new();
    format.expect_body().never();
    assert!(crate::service::callbacks::callback_for(&deposit(id(1)), &format).is_none());
    let quiet = deposit_builder(id(1))
        .urls(OperationUrls::default())
        .build()
        .finish(&Outcome::Approve, now())
        .unwrap();
    assert!(crate::service::callbacks::callback_for(&quiet, &format).is_none());
}
