//! Idempotency of creations (the idempotency rules of docs/api.md): replays, duplicates and the rule that an
//! earlier operation answers before routing.

use super::create_deposit::provider_waits;
use super::fixtures::*;
use crate::ports::InsertError;
use crate::service::CreateError;
use crate::{Direction, Status};

#[test]
fn an_earlier_identical_request_replays_even_when_no_route_fits_any_more() {
    let mut mocks = Mocks::new();
    mocks.set_routes(Vec::new());
    let earlier = deposit(existing_id());
    mocks.earlier(Direction::Deposit, earlier.clone(), CANONICAL);
    mocks.provider.expect_start_deposit().never();
    mocks.expect_no_store_writes();

    let created = mocks
        .create_deposit(deposit_request("100.00", "card", true, false))
        .unwrap();

    assert!(created.replayed);
    assert_eq!(created.operation, earlier);
}

#[test]
fn an_earlier_different_request_is_a_duplicate_even_when_no_route_fits() {
    let mut mocks = Mocks::new();
    mocks.set_routes(Vec::new());
    mocks.earlier(
        Direction::Deposit,
        deposit(existing_id()),
        br#"{"amount":"5.00"}"#,
    );
    mocks.provider.expect_start_deposit().never();
    mocks.expect_no_store_writes();

    let result = mocks.create_deposit(deposit_request("100.00", "card", true, false));

    assert!(matches!(result, Err(CreateError::DuplicateOperation)));
}

#[test]
fn no_route_and_no_earlier_operation_is_no_route_found() {
    let mut mocks = Mocks::new();
    mocks.set_routes(Vec::new());
    mocks
        .store
        .expect_find_by_merchant_operation_id()
        .withf(|m, d, id| *m == merchant().id && *d == Direction::Deposit && *id == moid())
        .times(1)
        .returning(|_, _, _| Ok(None));
    mocks.expect_no_store_writes();

    let result = mocks.create_deposit(deposit_request("100.00", "card", true, false));

    assert!(matches!(result, Err(CreateError::NoRouteFound)));
}

#[test]
fn a_duplicate_insert_of_the_same_request_answers_the_stored_operation() {
    let mut mocks = Mocks::new();
    provider_waits(&mut mocks);
    mocks.expect_insert(|| Err(InsertError::Duplicate));
    let earlier = deposit_builder(existing_id())
        .status(Status::Approved)
        .build();
    mocks.earlier(Direction::Deposit, earlier.clone(), CANONICAL);

    let created = mocks
        .create_deposit(deposit_request("100.00", "card", true, false))
        .unwrap();

    assert!(created.replayed);
    assert_eq!(
        created.operation, earlier,
        "the original's current state, not the new one"
    );
}

#[test]
fn a_duplicate_insert_of_a_different_request_is_duplicate_operation() {
    let mut mocks = Mocks::new();
    provider_waits(&mut mocks);
    mocks.expect_insert(|| Err(InsertError::Duplicate));
    mocks.earlier(Direction::Deposit, deposit(existing_id()), b"{}");

    let result = mocks.create_deposit(deposit_request("100.00", "card", true, false));

    assert!(matches!(result, Err(CreateError::DuplicateOperation)));
}

#[test]
fn a_duplicate_reported_without_an_operation_behind_it_is_an_internal_error() {
    let mut mocks = Mocks::new();
    provider_waits(&mut mocks);
    mocks.expect_insert(|| Err(InsertError::Duplicate));
    mocks
        .store
        .expect_find_by_merchant_operation_id()
        .returning(|_, _, _| Ok(None));

    let result = mocks.create_deposit(deposit_request("100.00", "card", true, false));

    assert!(matches!(result, Err(CreateError::Unknown(_))));
}
