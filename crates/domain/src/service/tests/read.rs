//! Reads, balances and operators' adjustments.

use futures::executor::block_on;

use super::fixtures::*;
use crate::ledger::Balance;
use crate::service::ReadError;
use crate::{Currency, Direction};

/// [`merchant`] reads deposit `id(1)`.
fn read_deposit(mocks: Mocks) -> Result<crate::operation::Operation, ReadError> {
    block_on(
        mocks
            .gateway()
            .reads()
            .read(&merchant(), Direction::Deposit, id(1)),
    )
}

#[test]
fn a_merchant_reads_its_own_operation() {
    let mut mocks = Mocks::new();
    mocks.stored(payout(id(1)));

    let op = block_on(
        mocks
            .gateway()
            .reads()
            .read(&merchant(), Direction::Withdrawal, id(1)),
    )
    .unwrap();

    assert_eq!(op, payout(id(1)));
}

#[test]
fn another_merchants_operation_the_other_direction_or_an_unknown_id_is_not_found() {
    let cases = [
        (other_merchant(), Direction::Deposit, Some(deposit(id(1)))),
        (merchant(), Direction::Withdrawal, Some(deposit(id(1)))),
        (merchant(), Direction::Deposit, Some(payout(id(1)))),
        (merchant(), Direction::Deposit, None),
    ];
    for (who, direction, stored) in cases {
        let mut mocks = Mocks::new();
        mocks
            .store
            .expect_get()
            .returning(move |_| Ok(stored.clone()));

        let result = block_on(mocks.gateway().reads().read(&who, direction, id(1)));

        assert!(
            matches!(result, Err(ReadError::NotFound)),
            "{} {direction}",
            who.id
        );
    }
}

#[test]
fn read_failures_map_to_unavailable_or_internal() {
    let mut mocks = Mocks::new();
    mocks.store.expect_get().returning(|_| Err(unavailable()));
    let result = read_deposit(mocks);
    assert!(matches!(result, Err(ReadError::Unavailable(_))));

    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_get()
        .returning(|_| Err(anyhow::anyhow!("status 7 in row").into()));
    let result = read_deposit(mocks);
    assert!(matches!(result, Err(ReadError::Unknown(_))));
}

#[test]
fn reading_by_merchant_operation_id_asks_only_for_this_merchant_and_direction() {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_find_by_merchant_operation_id()
        .withf(|m, d, id| *m == merchant().id && *d == Direction::Withdrawal && *id == moid())
        .times(1)
        .returning(|_, _, _| Ok(Some((payout(existing_id()), None))));

    let op = block_on(mocks.gateway().reads().read_by_merchant_operation_id(
        &merchant(),
        Direction::Withdrawal,
        &moid(),
    ))
    .unwrap();

    assert_eq!(op.id(), existing_id());
}

#[test]
fn an_unknown_merchant_operation_id_is_not_found() {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_find_by_merchant_operation_id()
        .returning(|_, _, _| Ok(None));
    let result = block_on(mocks.gateway().reads().read_by_merchant_operation_id(
        &merchant(),
        Direction::Deposit,
        &moid(),
    ));
    assert!(matches!(result, Err(ReadError::NotFound)));

    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_find_by_merchant_operation_id()
        .returning(|_, _, _| Err(unavailable()));
    let result = block_on(mocks.gateway().reads().read_by_merchant_operation_id(
        &merchant(),
        Direction::Deposit,
        &moid(),
    ));
    assert!(matches!(result, Err(ReadError::Unavailable(_))));
}

#[test]
fn hosted_pages_read_any_merchants_operation() {
    let mut mocks = Mocks::new();
    let theirs = deposit_builder(id(1))
        .merchant(other_merchant().id.as_str())
        .build();
    mocks.stored(theirs.clone());
    mocks.store.expect_get().returning(|_| Ok(None));
    let gateway = mocks.gateway();

    assert_eq!(block_on(gateway.reads().operation(id(1))).unwrap(), theirs);
    assert!(matches!(
        block_on(gateway.reads().operation(id(2))),
        Err(ReadError::NotFound)
    ));
}

#[test]
fn balances_are_the_merchants_own() {
    let mut mocks = Mocks::new();
    let rub = Balance {
        currency: Currency::RUB,
        available: 10_000,
        held: 500,
    };
    mocks
        .store
        .expect_balances()
        .withf(|m| *m == merchant().id)
        .times(1)
        .returning(move |_| Ok(vec![rub]));

    let balances = block_on(mocks.gateway().reads().balances(&merchant().id)).unwrap();

    assert_eq!(balances, vec![rub]);
}
