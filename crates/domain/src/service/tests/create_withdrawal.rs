//! `create_withdrawal`: the hold, a decline at creation, balance and idempotency
//! (the idempotency and ledger rules of docs/api.md).

use futures::executor::block_on;

use super::fixtures::*;
use crate::ledger::EntryKind;
use crate::merchant::parse_access;
use crate::operation::{Decline, DeclineCode};
use crate::ports::{InsertError, PayoutStart};
use crate::service::CreateError;
use crate::signature::Fingerprint;
use crate::{Direction, Status, WithdrawalRequisites};

fn provider_accepts(mocks: &mut Mocks) {
    mocks
        .provider
        .expect_start_payout()
        .times(1)
        .returning(|_, _, _| {
            Ok(PayoutStart::Accepted {
                state: Some(ProviderState::new("approve")),
                due_at: now().plus_seconds(2),
            })
        });
}

fn provider_declines(mocks: &mut Mocks) {
    mocks
        .provider
        .expect_start_payout()
        .times(1)
        .returning(|_, _, _| {
            Ok(PayoutStart::Declined(Decline::new(
                DeclineCode::ProviderDeclined,
            )))
        });
}

#[test]
fn creation_inserts_exactly_a_hold_first() {
    let mut mocks = Mocks::new();
    provider_accepts(&mut mocks);
    let inserted = mocks.expect_insert(|| Ok(()));

    let created = mocks
        .create_withdrawal(withdrawal_request("250.00", "sbp", false, false))
        .unwrap();

    let new = inserted.one();
    assert!(!created.replayed);
    assert_eq!(created.operation, new.operation);
    assert_eq!(new.moves.len(), 1);
    let hold = &new.moves[0];
    assert_eq!(hold.kind, EntryKind::WithdrawalHold);
    assert_eq!((hold.available, hold.held), (-25_000, 25_000));
    assert_eq!(hold.merchant_id, merchant().id);
    assert_eq!(hold.currency, crate::Currency::RUB);
    assert_eq!(hold.operation_id, Some(new_id()));
    assert_eq!(hold.at, now());
    assert_eq!(new.callback, None);
}

#[test]
fn an_accepted_payout_is_processing_with_the_providers_plan() {
    let mut mocks = Mocks::new();
    provider_accepts(&mut mocks);
    let inserted = mocks.expect_insert(|| Ok(()));

    mocks
        .create_withdrawal(withdrawal_request("250.00", "sbp", false, false))
        .unwrap();

    let op = inserted.one().operation;
    assert_eq!(op.direction(), Direction::Withdrawal);
    assert_eq!(op.status(), Status::Processing);
    assert_eq!(op.route_id(), 12);
    assert_eq!(op.due_at(), Some(now().plus_seconds(2)));
    assert_eq!(op.provider_state(), Some(&ProviderState::new("approve")));
    assert_eq!(op.expires_at(), None, "payouts never expire");
    assert_eq!(op.action(), None);
    assert_eq!(
        op.requisites(),
        Some(
            &KeptObject::new()
                .with("phone", "+79001234567")
                .with("accountName", "Ivan Ivanov")
                .with("bankName", "Bank A")
        )
    );
}

#[test]
fn the_provider_sees_the_full_card_number_but_storage_only_the_masked_one() {
    let mut mocks = Mocks::new();
    mocks
        .provider
        .expect_start_payout()
        .withf(|payout, requisites, route| {
            let full = match requisites {
                WithdrawalRequisites::Card { pan, .. } => pan.expose() == "4242424242424242",
                WithdrawalRequisites::Sbp { .. } => false,
            };
            let stored = payout.requisites().and_then(|r| r.text("pan"));
            full && stored == Some("424242******4242") && route.id == 11
        })
        .times(1)
        .returning(|_, _, _| {
            Ok(PayoutStart::Accepted {
                state: None,
                due_at: now(),
            })
        });
    let inserted = mocks.expect_insert(|| Ok(()));

    mocks
        .create_withdrawal(withdrawal_request("250.00", "card", false, false))
        .unwrap();

    let stored = format!("{:?}", inserted.one());
    assert!(
        !stored.contains("4242424242424242"),
        "full PAN reached the store"
    );
    assert!(stored.contains("424242******4242"));
}

#[test]
fn a_decline_at_creation_releases_the_hold_and_queues_the_callback() {
    let mut mocks = Mocks::new();
    provider_declines(&mut mocks);
    let inserted = mocks.expect_insert(|| Ok(()));

    let created = mocks
        .create_withdrawal(withdrawal_request("100.05", "card", true, true))
        .unwrap();

    let new = inserted.one();
    assert_eq!(created.operation.status(), Status::Declined);
    assert_eq!(
        created.operation.decline(),
        Some(&Decline::new(DeclineCode::ProviderDeclined))
    );
    let kinds: Vec<_> = new.moves.iter().map(|m| m.kind).collect();
    assert_eq!(
        kinds,
        vec![EntryKind::WithdrawalHold, EntryKind::WithdrawalReleased]
    );
    let release = &new.moves[1];
    assert_eq!((release.available, release.held), (10_005, -10_005));
    assert_eq!(net(&new.moves), (0, 0), "hold and release cancel out");
    let callback = new.callback.expect("callbackUrl given");
    assert_eq!(callback.direction, Direction::Withdrawal);
    assert_eq!(callback.data.direction, Direction::Withdrawal);
    assert_eq!(callback.data.status, crate::Status::Declined);
    assert_eq!(
        callback.data.decline.map(|d| d.code),
        Some(DeclineCode::ProviderDeclined)
    );
}

#[test]
fn a_decline_at_creation_without_callback_url_queues_nothing() {
    let mut mocks = Mocks::new();
    provider_declines(&mut mocks);
    let inserted = mocks.expect_insert(|| Ok(()));

    mocks
        .create_withdrawal(withdrawal_request("100.05", "sbp", false, false))
        .unwrap();

    let new = inserted.one();
    assert_eq!(new.operation.status(), Status::Declined);
    assert_eq!(new.moves.len(), 2);
    assert_eq!(new.callback, None);
}

#[test]
fn a_balance_too_low_is_insufficient_balance() {
    let mut mocks = Mocks::new();
    provider_accepts(&mut mocks);
    mocks.expect_insert(|| Err(InsertError::InsufficientBalance));

    let result = mocks.create_withdrawal(withdrawal_request("250.00", "sbp", true, true));

    assert!(matches!(result, Err(CreateError::InsufficientBalance)));
}

#[test]
fn a_method_the_merchant_may_not_pay_out_with_is_forbidden() {
    let mut mocks = Mocks::new();
    mocks.provider.expect_start_payout().never();
    mocks.expect_no_store_writes();
    let mut limited = merchant();
    limited.access = parse_access("deposit:card,deposit:sbp,withdrawal:sbp").unwrap();

    let result = block_on(mocks.gateway().create_withdrawal(
        &limited,
        withdrawal_request("250.00", "card", false, false),
        CANONICAL,
    ));

    assert!(matches!(result, Err(CreateError::Forbidden)));
}

#[test]
fn a_payout_without_route_is_no_route_found() {
    let mut mocks = Mocks::new();
    let table = routes()
        .into_iter()
        .filter(|r| r.direction == Direction::Deposit)
        .collect();
    mocks.set_routes(table);
    mocks.provider.expect_start_payout().never();
    mocks.expect_no_store_writes();

    let result = mocks.create_withdrawal(withdrawal_request("250.00", "card", false, false));

    assert!(matches!(result, Err(CreateError::NoRouteFound)));
}

#[test]
fn a_replayed_payout_is_looked_up_as_a_withdrawal_under_the_withdrawal_secret() {
    let mut mocks = Mocks::new();
    provider_accepts(&mut mocks);
    let inserted = mocks.expect_insert(|| Err(InsertError::Duplicate));
    let earlier = payout(existing_id());
    mocks.earlier(Direction::Withdrawal, earlier.clone(), CANONICAL);

    let created = mocks
        .create_withdrawal(withdrawal_request("250.00", "card", true, false))
        .unwrap();

    assert!(created.replayed);
    assert_eq!(created.operation, earlier);
    assert_eq!(
        inserted.one().fingerprint,
        Some(Fingerprint::of(&merchant().withdrawal_secret, CANONICAL))
    );
}

#[test]
fn a_payout_id_reused_with_another_request_is_duplicate_operation() {
    let mut mocks = Mocks::new();
    provider_accepts(&mut mocks);
    mocks.expect_insert(|| Err(InsertError::Duplicate));
    mocks.earlier(
        Direction::Withdrawal,
        payout(existing_id()),
        br#"{"amount":"1.00"}"#,
    );

    let result = mocks.create_withdrawal(withdrawal_request("250.00", "card", true, false));

    assert!(matches!(result, Err(CreateError::DuplicateOperation)));
}
