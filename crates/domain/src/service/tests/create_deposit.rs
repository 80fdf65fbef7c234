//! `create_deposit`: access -> idempotency -> route -> provider -> store
//! (the error, field and idempotency rules of docs/api.md).

use super::fixtures::*;
use crate::operation::{Action, Decline, DeclineCode};
use crate::ports::DepositStart;
use crate::route::Flow;
use crate::signature::Fingerprint;
use crate::{Direction, PaymentMethod, Status};

fn redirect() -> Action {
    Action::Redirect {
        url: format!("http://127.0.0.1:8080/pay/{}", new_id()),
    }
}

pub(super) fn provider_waits(mocks: &mut Mocks) {
    mocks
        .provider
        .expect_start_deposit()
        .times(1)
        .returning(|_, _| Ok(DepositStart::Wait(redirect())));
}

fn provider_declines(mocks: &mut Mocks) {
    mocks.provider.expect_start_deposit().returning(|_, _| {
        Ok(DepositStart::Declined(Decline::new(
            DeclineCode::ProviderDeclined,
        )))
    });
}

#[test]
fn a_new_deposit_is_stored_processing_with_the_providers_action() {
    let mut mocks = Mocks::new();
    mocks
        .provider
        .expect_start_deposit()
        .withf(|op, route| {
            op.id() == new_id()
                && op.status() == Status::Processing
                && route.id == 1
                && route.method == PaymentMethod::Card
        })
        .times(1)
        .returning(|_, _| Ok(DepositStart::Wait(redirect())));
    let request = deposit_request("100.00", "card", false, false);

    let (created, new) = mocks.stores_deposit(request);

    assert!(!created.replayed);
    assert_eq!(new.operation, created.operation);
    let op = created.operation;
    assert_eq!(op.id(), new_id());
    assert_eq!(*op.merchant_id(), merchant().id);
    assert_eq!(op.direction(), Direction::Deposit);
    assert_eq!(op.status(), Status::Processing);
    assert_eq!(op.amount().minor(), 10_000);
    assert_eq!(op.route_id(), 1);
    assert_eq!(op.action(), Some(&redirect()));
    assert_eq!(op.decline(), None);
    assert_eq!((op.created_at(), op.updated_at()), (now(), now()));
    assert_eq!(
        op.expires_at(),
        Some(now().plus_seconds(600)),
        "default lifetime"
    );
    assert!(
        new.moves.is_empty(),
        "a deposit moves no money until approved"
    );
    assert_eq!(new.callback, None, "no callback while processing");
    assert_eq!(
        new.fingerprint, None,
        "no merchantOperationId, nothing to compare"
    );
}

#[test]
fn the_routes_lifetime_sets_the_expiry() {
    let mut mocks = Mocks::new();
    let mut table = routes();
    table[2].lifetime_secs = Some(90); // sbp_qr
    assert_eq!(table[2].flow, Flow::Qr);
    mocks.set_routes(table);
    provider_waits(&mut mocks);

    let (created, new) = mocks.stores_deposit(deposit_request("10.00", "sbp_qr", false, false));

    assert_eq!(created.operation.route_id(), 3);
    assert_eq!(new.operation.expires_at(), Some(now().plus_seconds(90)));
    assert_eq!(created.operation.lifetime_left(now()), Some(90));
}

#[test]
fn the_highest_priority_fitting_route_is_used() {
    let mut mocks = Mocks::new();
    let mut table = routes();
    let mut better = route(42, Direction::Deposit, PaymentMethod::Card);
    better.priority = 500;
    let mut too_small = route(43, Direction::Deposit, PaymentMethod::Card);
    too_small.priority = 900;
    too_small.max_amount = 5_000;
    table.extend([better, too_small]);
    mocks.set_routes(table);
    mocks
        .provider
        .expect_start_deposit()
        .withf(|_, route| route.id == 42)
        .times(1)
        .returning(|_, _| Ok(DepositStart::Wait(redirect())));

    let (_, new) = mocks.stores_deposit(deposit_request("100.00", "card", false, false));

    assert_eq!(new.operation.route_id(), 42);
}

#[test]
fn the_fingerprint_is_a_keyed_hash_under_the_deposit_secret() {
    let mocks = Mocks::new().with(provider_waits);

    let (_, new) = mocks.stores_deposit(deposit_request("100.00", "card", true, false));

    let expected = Fingerprint::of(merchant().deposit_keys.newest(), CANONICAL);
    assert_eq!(new.fingerprint, Some(expected));
    assert_ne!(
        new.fingerprint,
        Some(Fingerprint::of(
            merchant().withdrawal_keys.newest(),
            CANONICAL
        ))
    );
    assert!(!new.fingerprint.unwrap().as_str().contains("amount"));
    assert_eq!(new.operation.merchant_operation_id(), Some(&moid()));
}

#[test]
fn requisites_given_with_the_deposit_are_stored_as_parsed() {
    let mut request = deposit_request("100.00", "card", false, false);
    let given = KeptObject::new()
        .with("pan", "4242424242424242")
        .with("cvc", "123");
    request.requisites = Some(crate::sanitize_requisites(&given));

    let (_, new) = Mocks::new().with(provider_waits).stores_deposit(request);

    let stored = new.operation.requisites().cloned();
    assert_eq!(
        stored,
        Some(KeptObject::new().with("pan", "424242******4242"))
    );
}

#[test]
fn a_decline_at_creation_is_an_answer_not_an_error() {
    let mocks = Mocks::new().with(provider_declines);

    let (created, new) = mocks.stores_deposit(deposit_request("100.05", "card", true, true));

    assert_eq!(created.operation, new.operation);
    assert_eq!(new.operation.status(), Status::Declined);
    assert_eq!(
        new.operation.decline().map(|d| d.code.as_str()),
        Some("ProviderDeclined")
    );
    assert!(new.moves.is_empty(), "a declined deposit moves no money");
    let callback = new.callback.expect("callbackUrl given");
    assert_eq!(callback.operation_id, new_id());
    assert_eq!(callback.url.as_str(), CALLBACK_URL);
    assert_eq!(callback.queued_at, now());
    assert_callback_declined(&callback, DeclineCode::ProviderDeclined);
}

#[test]
fn a_decline_at_creation_without_callback_url_queues_nothing() {
    let request = deposit_request("100.05", "card", false, false);

    let (created, new) = Mocks::new().with(provider_declines).stores_deposit(request);

    assert_eq!(created.operation.status(), Status::Declined);
    assert_eq!(new.callback, None);
}
