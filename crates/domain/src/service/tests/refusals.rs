//! Creations refused before anything is stored: access (403), route (422), and failures of
//! the provider or the database (503 / 500).

use futures::executor::block_on;

use super::create_deposit::provider_waits;
use super::fixtures::*;
use crate::merchant::parse_access;
use crate::ports::{InsertError, ProviderError};
use crate::service::CreateError;

/// A deposit of `amount` by card.
fn card(amount: &str) -> crate::request::NewDeposit {
    deposit_request(amount, "card", false, false)
}

#[test]
fn a_method_the_merchant_may_not_use_is_forbidden_and_touches_nothing() {
    let mut mocks = Mocks::new();
    mocks.routes = crate::ports::MockRouteTable::new();
    mocks.routes.expect_routes().never();
    mocks.store.expect_find_by_merchant_operation_id().never();
    mocks.expect_no_deposit_started();
    let mut limited = merchant();
    limited.access = parse_access("deposit:card,withdrawal:sbp").unwrap();
    let gateway = mocks.gateway();

    for method in ["sbp", "sbp_qr", "bank_a_pay"] {
        let result = deposit_by(
            &gateway,
            &limited,
            deposit_request("100.00", method, true, true),
        );
        assert!(matches!(result, Err(CreateError::Forbidden)), "{method}");
    }
}

#[test]
fn no_fitting_route_is_no_route_found_and_stores_nothing() {
    let mut mocks = Mocks::new();
    let mut table = routes();
    table[0].enabled = false; // card
    table[1].max_amount = 9_999; // sbp: up to 99.99
    mocks.set_routes(table);
    mocks.expect_no_deposit_started();
    let gateway = mocks.gateway();

    for (amount, method) in [("100.00", "card"), ("100.00", "sbp")] {
        let result = deposit_by(
            &gateway,
            &merchant(),
            deposit_request(amount, method, false, false),
        );
        assert!(matches!(result, Err(CreateError::NoRouteFound)), "{method}");
    }
}

#[test]
fn routes_of_providers_without_an_enabled_record_are_never_chosen() {
    let mut mocks = Mocks::new();
    let mut table = routes();
    let mut preferred = table[0].clone(); // card, but to another provider, at a higher priority
    preferred.id = 50;
    preferred.priority = 1_000;
    preferred.provider = "elsewhere".into();
    table.push(preferred);
    mocks.set_routes(table);
    provider_waits(&mut mocks);
    mocks.expect_insert(|| Ok(()));
    mocks.providers.expect_acquirers().returning(|| Ok(vec![]));
    let gateway = mocks.gateway();

    let created = deposit_by(&gateway, &merchant(), card("100.00")).unwrap();

    assert_eq!(created.operation.route_id(), 1);
}

#[test]
fn without_the_sandbox_its_routes_take_no_new_operations() {
    let mut mocks = Mocks::new();
    mocks.provider.expect_start_payout().never();
    mocks.expect_no_deposit_started();
    let gateway = mocks.gateway().without_sandbox();

    let deposit = deposit_by(&gateway, &merchant(), card("100.00"));
    let payout = block_on(gateway.creation().create_withdrawal(
        &merchant(),
        withdrawal_request("100.00", "card", false, false),
        CANONICAL,
    ));

    assert!(matches!(deposit, Err(CreateError::NoRouteFound)));
    assert!(matches!(payout, Err(CreateError::NoRouteFound)));
}

#[test]
fn a_well_formed_currency_without_routes_is_no_route_found() {
    let mut request = card("100.00");
    request.common.currency = crate::Currency::parse("USD").unwrap();

    let result = Mocks::new()
        .with(Mocks::expect_no_deposit_started)
        .create_deposit(request);

    assert!(matches!(result, Err(CreateError::NoRouteFound)));
}

#[test]
fn a_provider_failure_is_unavailable_and_stores_nothing() {
    let mut mocks = Mocks::new();
    mocks
        .provider
        .expect_start_deposit()
        .returning(|_, _| Err(ProviderError("timeout".into())));
    mocks.expect_no_store_writes();

    let result = mocks.create_deposit(card("100.00"));

    assert!(matches!(result, Err(CreateError::Unavailable(_))));
}

/// A failure, set up on the mocks.
type Failure = fn(&mut Mocks);

#[test]
fn storage_unavailable_anywhere_is_unavailable() {
    // Each failure, and whether the request has a merchantOperationId.
    let cases: [(Failure, bool); 3] = [
        // The route table cannot be read.
        (
            |mocks| {
                mocks.routes = crate::ports::MockRouteTable::new();
                mocks
                    .routes
                    .expect_routes()
                    .returning(|| Err(unavailable()));
            },
            false,
        ),
        // The insert cannot reach the database.
        (
            |mocks| {
                provider_waits(mocks);
                mocks.expect_insert(|| Err(InsertError::Store(unavailable())));
            },
            false,
        ),
        // The idempotency lookup cannot reach the database.
        (
            |mocks| {
                mocks.set_routes(Vec::new());
                mocks
                    .store
                    .expect_find_by_merchant_operation_id()
                    .returning(|_, _, _| Err(unavailable()));
            },
            true,
        ),
    ];
    for (failure, moid) in cases {
        let request = deposit_request("100.00", "card", moid, false);
        let result = Mocks::new().with(failure).create_deposit(request);
        assert!(matches!(result, Err(CreateError::Unavailable(_))));
    }
}

#[test]
fn other_storage_failures_are_internal() {
    let mut mocks = Mocks::new().with(provider_waits);
    mocks.expect_insert(|| Err(InsertError::Store(anyhow::anyhow!("corrupt row").into())));

    let result = mocks.create_deposit(card("100.00"));

    assert!(matches!(result, Err(CreateError::Unknown(_))));
}
