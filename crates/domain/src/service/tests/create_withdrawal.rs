//! `create_withdrawal`: the hold, a decline at creation, balance and idempotency
//! (the idempotency and ledger rules of docs/api.md).

use futures::executor::block_on;

use super::fixtures::*;
use crate::ledger::EntryKind;
use crate::merchant::{parse_access, Merchant};
use crate::operation::{Decline, DeclineCode, Operation};
use crate::ports::{InsertError, NewOperation, PayoutStart};
use crate::service::{CreateError, Created};
use crate::signature::Fingerprint;
use crate::{Direction, Status, WithdrawalRequisites};

/// The provider answers the one payout it is sent with `start()`.
fn provider_answers(start: fn() -> PayoutStart) -> impl FnOnce(&mut Mocks) {
    move |mocks| {
        mocks
            .provider
            .expect_start_payout()
            .times(1)
            .returning(move |_, _, _| Ok(start()));
    }
}

fn accepted() -> PayoutStart {
    PayoutStart::Accepted {
        state: Some(ProviderState::new("approve")),
        due_at: now().plus_seconds(2),
    }
}

fn declined() -> PayoutStart {
    PayoutStart::Declined(Decline::new(DeclineCode::ProviderDeclined))
}

/// Creates a 250.00 card payout as `who`, refused before the provider or the store is touched.
fn refused(mut mocks: Mocks, who: &Merchant) -> Result<Created, CreateError> {
    mocks.provider.expect_start_payout().never();
    mocks.expect_no_store_writes();
    block_on(mocks.gateway().creation().create_withdrawal(
        who,
        withdrawal_request("250.00", "card", false, false),
        CANONICAL,
    ))
}

/// Creates a 250.00 card payout with [`MOID`] whose insert is a duplicate of `earlier`, first
/// created by `canonical`: the answer and what the insert tried.
fn duplicate_of(
    earlier: Operation,
    canonical: &'static [u8],
) -> (Result<Created, CreateError>, NewOperation) {
    let mut mocks = Mocks::new().with(provider_answers(accepted));
    let inserted = mocks.expect_insert(|| Err(InsertError::Duplicate));
    mocks.earlier(Direction::Withdrawal, earlier, canonical);
    let result = mocks.create_withdrawal(withdrawal_request("250.00", "card", true, false));
    (result, inserted.one())
}

#[test]
fn creation_inserts_exactly_a_hold_first() {
    let mocks = Mocks::new().with(provider_answers(accepted));

    let (created, new) = mocks.stores_withdrawal(withdrawal_request("250.00", "sbp", false, false));

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
    let mocks = Mocks::new().with(provider_answers(accepted));

    let (_, new) = mocks.stores_withdrawal(withdrawal_request("250.00", "sbp", false, false));

    let op = new.operation;
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

    let (_, new) = mocks.stores_withdrawal(withdrawal_request("250.00", "card", false, false));

    let stored = format!("{new:?}");
    assert!(
        !stored.contains("4242424242424242"),
        "full PAN reached the store"
    );
    assert!(stored.contains("424242******4242"));
}

#[test]
fn a_decline_at_creation_releases_the_hold_and_queues_the_callback() {
    let mocks = Mocks::new().with(provider_answers(declined));

    let (created, new) = mocks.stores_withdrawal(withdrawal_request("100.05", "card", true, true));

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
    assert_callback_declined(&callback, DeclineCode::ProviderDeclined);
}

#[test]
fn a_decline_at_creation_without_callback_url_queues_nothing() {
    let request = withdrawal_request("100.05", "sbp", false, false);

    let (_, new) = Mocks::new()
        .with(provider_answers(declined))
        .stores_withdrawal(request);

    assert_eq!(new.operation.status(), Status::Declined);
    assert_eq!(new.moves.len(), 2);
    assert_eq!(new.callback, None);
}

#[test]
fn a_balance_too_low_is_insufficient_balance() {
    let mut mocks = Mocks::new().with(provider_answers(accepted));
    mocks.expect_insert(|| Err(InsertError::InsufficientBalance));

    let result = mocks.create_withdrawal(withdrawal_request("250.00", "sbp", true, true));

    assert!(matches!(result, Err(CreateError::InsufficientBalance)));
}

#[test]
fn a_method_the_merchant_may_not_pay_out_with_is_forbidden() {
    let mut limited = merchant();
    limited.access = parse_access("deposit:card,deposit:sbp,withdrawal:sbp").unwrap();

    let result = refused(Mocks::new(), &limited);

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

    let result = refused(mocks, &merchant());

    assert!(matches!(result, Err(CreateError::NoRouteFound)));
}

#[test]
fn a_replayed_payout_is_looked_up_as_a_withdrawal_under_the_withdrawal_secret() {
    let earlier = payout(existing_id());

    let (result, new) = duplicate_of(earlier.clone(), CANONICAL);

    let created = result.unwrap();
    assert_replay_of(&created, &earlier);
    assert_eq!(
        new.fingerprint,
        Some(Fingerprint::of(
            merchant().withdrawal_keys.newest(),
            CANONICAL
        ))
    );
}

#[test]
fn a_payout_id_reused_with_another_request_is_duplicate_operation() {
    let (result, _) = duplicate_of(payout(existing_id()), br#"{"amount":"1.00"}"#);

    assert!(matches!(result, Err(CreateError::DuplicateOperation)));
}
