//! `submit_input`: the input-fields flow.

use futures::executor::block_on;

use super::fixtures::*;
use crate::operation::{Action, Decline, DeclineCode, InputField, Operation, SelectOption};
use crate::ports::ProviderVerdict;
use crate::service::{check_input, StepError};
use crate::Status;

fn field(
    name: &str,
    label: &str,
    kind: &str,
    required: bool,
    options: Option<Vec<SelectOption>>,
) -> InputField {
    let (name, label, kind) = (name.into(), label.into(), kind.into());
    InputField {
        name,
        label,
        kind,
        required,
        options,
    }
}

fn option(value: &str, label: &str) -> SelectOption {
    SelectOption {
        value: value.into(),
        label: label.into(),
    }
}

fn fields() -> Vec<InputField> {
    let banks = vec![option("a", "Bank A"), option("b", "Bank B")];
    vec![
        field("phone", "Phone", "string", true, None),
        field("bank", "Bank", "select", true, Some(banks)),
        field("comment", "Comment", "string", false, None),
    ]
}

fn waiting_for_input() -> Operation {
    input_builder().build()
}

fn input_builder() -> OperationBuilder {
    deposit_builder(id(1)).action(Action::InputFields { fields: fields() })
}

fn good_values() -> std::collections::BTreeMap<String, String> {
    values(&[("phone", "+79001234567"), ("bank", "b")])
}

/// A field name and its value.
type Pair = (&'static str, &'static str);

/// Mocks set up by `store`, where the provider never sees input and nothing is written.
fn untouched(store: impl FnOnce(&mut Mocks)) -> Mocks {
    let mut mocks = Mocks::new().with(store);
    mocks.provider.expect_submit_input().never();
    mocks.expect_no_store_writes();
    mocks
}

fn invalid_fields(result: Result<Operation, StepError>) -> Vec<String> {
    match result {
        Err(StepError::Invalid(errors)) => errors.0.into_iter().map(|e| e.field).collect(),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn valid_values_go_to_the_provider_whose_approval_finishes_the_deposit() {
    let mut mocks = Mocks::new();
    mocks.stored(waiting_for_input());
    mocks
        .provider
        .expect_submit_input()
        .withf(|op, given| op.id() == id(1) && *given == good_values())
        .times(1)
        .returning(|_, _| Ok(ProviderVerdict::Approve));
    let finished = mocks.expect_finish(1, || Ok(()));

    let done = mocks.submit_input(good_values()).unwrap();

    assert_eq!(done.status(), Status::Approved);
    assert_eq!(finished.one().moves[0].available, 10_000);
}

#[test]
fn the_provider_may_decline_or_keep_waiting() {
    let mut mocks = Mocks::new();
    mocks.stored(waiting_for_input());
    mocks.provider.expect_submit_input().returning(|_, _| {
        Ok(ProviderVerdict::Decline(Decline::new(
            DeclineCode::PaymentRejected,
        )))
    });
    mocks.expect_finish(1, || Ok(()));
    let done = mocks.submit_input(good_values()).unwrap();
    assert_eq!(done.status(), Status::Declined);
    assert_eq!(
        done.decline(),
        Some(&Decline::new(DeclineCode::PaymentRejected))
    );

    let mut mocks = Mocks::new();
    mocks.stored(waiting_for_input());
    mocks
        .provider
        .expect_submit_input()
        .returning(|_, _| Ok(ProviderVerdict::Pending(now().plus_seconds(5))));
    mocks.store.expect_finish().never();
    let same = mocks.submit_input(good_values()).unwrap();
    assert_eq!(same, waiting_for_input());
}

#[test]
fn unknown_missing_and_off_list_values_are_invalid_and_never_reach_the_provider() {
    let cases: [(&[Pair], &[&str]); 4] = [
        (
            &[("phone", "+79001234567"), ("bank", "a"), ("pin", "1234")],
            &["fields.pin"],
        ),
        (&[("bank", "a")], &["fields.phone"]),
        (
            &[("phone", "+79001234567"), ("bank", "z")],
            &["fields.bank"],
        ),
        (
            &[("phone", ""), ("bank", "c"), ("extra", "x")],
            &["fields.extra", "fields.phone", "fields.bank"],
        ),
    ];
    for (given, expected) in cases {
        let mocks = untouched(|mocks| mocks.stored(waiting_for_input()));

        let result = mocks.submit_input(values(given));

        assert_eq!(invalid_fields(result), expected, "{given:?}");
    }
}

#[test]
fn optional_fields_may_be_left_out() {
    assert_eq!(check_input(&fields(), &good_values()), Ok(()));
    let mut with_comment = good_values();
    with_comment.insert("comment".into(), String::new());
    assert_eq!(check_input(&fields(), &with_comment), Ok(()));
    let errors = check_input(&fields(), &values(&[])).unwrap_err();
    let names: Vec<_> = errors.0.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(names, vec!["fields.phone", "fields.bank"]);
}

#[test]
fn a_deposit_not_waiting_for_input_is_invalid_state() {
    let redirect = deposit_builder(id(1))
        .urls(OperationUrls::default())
        .build();
    let finished = input_builder().status(Status::Approved).build();
    for op in [redirect, finished] {
        let result = untouched(|mocks| mocks.stored(op)).submit_input(good_values());

        assert!(matches!(result, Err(StepError::InvalidState)));
    }
}

#[test]
fn an_expired_deposit_is_declined_and_refuses_input() {
    let mut mocks = Mocks::new();
    mocks.stored(input_builder().expires(now().plus_seconds(-5)).build());
    mocks.provider.expect_submit_input().never();
    let finished = mocks.expect_finish(1, || Ok(()));

    let result = mocks.submit_input(good_values());

    assert!(matches!(result, Err(StepError::InvalidState)));
    assert_eq!(
        finished.one().operation.decline(),
        Some(&Decline::new(DeclineCode::Expired))
    );
}

#[test]
fn another_merchants_deposit_a_payout_or_an_unknown_id_is_not_found() {
    let theirs = input_builder()
        .merchant(other_merchant().id.as_str())
        .build();
    let payout_op = payout(id(1));
    for op in [Some(theirs), Some(payout_op), None] {
        let mocks = untouched(|mocks| {
            mocks.store.expect_get().returning(move |_| Ok(op.clone()));
        });

        let result = mocks.submit_input(good_values());

        assert!(matches!(result, Err(StepError::NotFound)));
    }
}

#[test]
fn storage_unavailable_is_unavailable() {
    let mut mocks = Mocks::new();
    mocks.store.expect_get().returning(|_| Err(unavailable()));
    let result = mocks.submit_input(good_values());
    assert!(matches!(result, Err(StepError::Unavailable(_))));
}

#[test]
fn input_values_refuse_control_characters() {
    let mut with_nul = good_values();
    with_nul.insert("comment".into(), "a\u{0}b".into());
    let errors = check_input(&fields(), &with_nul).unwrap_err();
    assert_eq!(errors.0.len(), 1);
    assert_eq!(errors.0[0].field, "fields.comment");
    assert_eq!(errors.0[0].message, crate::CONTROL_CHARACTERS);
}

#[test]
fn a_provider_out_of_service_takes_no_more_steps() {
    let mocks = untouched(|mocks| mocks.stored(waiting_for_input()));

    let result = block_on(mocks.gateway().without_sandbox().steps().submit_input(
        &merchant(),
        id(1),
        good_values(),
    ));

    assert!(matches!(result, Err(StepError::InvalidState)));
}
