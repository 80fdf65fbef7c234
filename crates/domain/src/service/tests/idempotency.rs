//! Idempotency of creations (the idempotency rules of docs/api.md): replays, duplicates and the rule that an
//! earlier operation answers before routing.

use super::create_deposit::provider_waits;
use super::fixtures::*;
use crate::operation::Operation;
use crate::ports::InsertError;
use crate::request::NewDeposit;
use crate::service::{CreateError, Created};
use crate::{Direction, Status};

/// The request every case here sends: 100.00 by card with [`MOID`].
fn request() -> NewDeposit {
    deposit_request("100.00", "card", true, false)
}

/// Creates [`request`] with no route at all, where the store knows `earlier`, created by
/// `canonical`: the provider is never called and nothing is written.
fn without_routes(earlier: Operation, canonical: &'static [u8]) -> Result<Created, CreateError> {
    let mut mocks = Mocks::new();
    mocks.set_routes(Vec::new());
    mocks.earlier(Direction::Deposit, earlier, canonical);
    mocks.expect_no_deposit_started();
    mocks.create_deposit(request())
}

/// Creates [`request`] whose insert is a duplicate; `lookup` says what the store finds then.
fn duplicate_insert(lookup: impl FnOnce(&mut Mocks)) -> Result<Created, CreateError> {
    let mut mocks = Mocks::new().with(provider_waits);
    mocks.expect_insert(|| Err(InsertError::Duplicate));
    lookup(&mut mocks);
    mocks.create_deposit(request())
}

#[test]
fn an_earlier_identical_request_replays_even_when_no_route_fits_any_more() {
    let earlier = deposit(existing_id());

    let created = without_routes(earlier.clone(), CANONICAL).unwrap();

    assert_replay_of(&created, &earlier);
}

#[test]
fn an_earlier_different_request_is_a_duplicate_even_when_no_route_fits() {
    let result = without_routes(deposit(existing_id()), br#"{"amount":"5.00"}"#);

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

    let result = mocks.create_deposit(request());

    assert!(matches!(result, Err(CreateError::NoRouteFound)));
}

#[test]
fn a_duplicate_insert_of_the_same_request_answers_the_stored_operation() {
    let earlier = deposit_builder(existing_id())
        .status(Status::Approved)
        .build();
    let known = earlier.clone();

    let created =
        duplicate_insert(|mocks| mocks.earlier(Direction::Deposit, known, CANONICAL)).unwrap();

    assert!(created.replayed);
    assert_eq!(
        created.operation, earlier,
        "the original's current state, not the new one"
    );
}

#[test]
fn a_duplicate_insert_of_a_different_request_is_duplicate_operation() {
    let result =
        duplicate_insert(|mocks| mocks.earlier(Direction::Deposit, deposit(existing_id()), b"{}"));

    assert!(matches!(result, Err(CreateError::DuplicateOperation)));
}

#[test]
fn a_duplicate_reported_without_an_operation_behind_it_is_an_internal_error() {
    let result = duplicate_insert(|mocks| {
        mocks
            .store
            .expect_find_by_merchant_operation_id()
            .returning(|_, _, _| Ok(None));
    });

    assert!(matches!(result, Err(CreateError::Unknown(_))));
}

/// [`merchant`] after a rotation of its deposit secret: version 2 is newest, version 1 (the
/// one that keyed earlier fingerprints) ended before now.
fn rotated_merchant() -> crate::merchant::Merchant {
    use crate::merchant::{KeyRing, Secret, SigningKey};
    let mut rotated = merchant();
    let old = rotated.deposit_keys.newest().clone();
    rotated.deposit_keys = KeyRing::new(vec![
        SigningKey {
            version: 2,
            secret: Secret::new("n".repeat(64)),
            created_at: old.created_at,
            expires_at: None,
        },
        SigningKey {
            expires_at: Some(crate::Timestamp::from_millis(0)),
            ..old
        },
    ])
    .unwrap();
    rotated
}

#[test]
fn a_replay_of_a_request_made_before_a_rotation_is_checked_with_the_revoked_secret() {
    let earlier = deposit(existing_id());
    let mut mocks = Mocks::new();
    mocks.set_routes(Vec::new());
    // The earlier fingerprint was keyed with version 1, the secret of the time.
    mocks.earlier(Direction::Deposit, earlier.clone(), CANONICAL);
    mocks.expect_no_deposit_started();
    let created = deposit_by(&mocks.gateway(), &rotated_merchant(), request()).unwrap();
    assert_replay_of(&created, &earlier);

    let mut mocks = Mocks::new();
    mocks.set_routes(Vec::new());
    mocks.earlier(
        Direction::Deposit,
        deposit(existing_id()),
        br#"{"amount":"5.00"}"#,
    );
    mocks.expect_no_deposit_started();
    let result = deposit_by(&mocks.gateway(), &rotated_merchant(), request());
    assert!(matches!(result, Err(CreateError::DuplicateOperation)));
}

#[test]
fn a_new_fingerprint_is_keyed_with_the_newest_secret_and_records_its_version() {
    let mut mocks = Mocks::new().with(provider_waits);
    let inserted = mocks.expect_insert(|| Ok(()));
    deposit_by(&mocks.gateway(), &rotated_merchant(), request()).unwrap();
    let print = inserted
        .one()
        .fingerprint
        .expect("a merchantOperationId was given");
    assert_eq!(print.key_version(), 2);
    assert!(print.matches(&rotated_merchant().deposit_keys, CANONICAL));
}

#[test]
fn a_replay_keyed_by_a_rotation_newer_than_the_request_reads_the_merchant_again() {
    // Another request, authenticated after a rotation this one did not see, stored its
    // fingerprint under version 2: the merchant is read again to check it.
    let earlier = deposit(existing_id());
    let rotated = rotated_merchant();
    let stored = crate::signature::Fingerprint::of(rotated.deposit_keys.newest(), CANONICAL);
    let mut mocks = Mocks::new();
    mocks.set_routes(Vec::new());
    let known = earlier.clone();
    mocks
        .store
        .expect_find_by_merchant_operation_id()
        .times(1)
        .returning(move |_, _, _| Ok(Some((known.clone(), Some(stored.clone())))));
    mocks
        .merchants
        .expect_merchant()
        .times(1)
        .returning(move |_| Ok(Some(rotated.clone())));
    mocks.expect_no_deposit_started();
    let created = deposit_by(&mocks.gateway(), &merchant(), request()).unwrap();
    assert_replay_of(&created, &earlier);
}
