//! The operator's rules against mockall mocks of the ports: a refused value never reaches the
//! store, an accepted one reaches it typed, and the store's refusals come back typed.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use futures::executor::block_on;

use super::*;
use crate::ledger::{Balance, EntryKind};
use crate::merchant::full_access;
use crate::ports::{Chain, MockClock, MockIdGenerator, MockOperationStore, MockOperatorStore};
use crate::route::{route_amounts, route_lifetime, Flow};
use crate::testkit::note;
use crate::Timestamp;

/// 2026-11-21T10:00:00Z.
const NOW_MS: i64 = 1_795_255_200_000;

fn now() -> Timestamp {
    Timestamp::from_millis(NOW_MS)
}

fn generated_id() -> MerchantId {
    MerchantId::from_uuid(uuid::Uuid::from_u128(
        0x6f1c_0000_0000_4000_8000_0000_0000_0042,
    ))
}

fn shop() -> MerchantId {
    MerchantId::parse("shop").unwrap()
}

fn amount(text: &str) -> Amount {
    Amount::parse(text, Currency::RUB).unwrap()
}

fn unavailable() -> StoreError {
    StoreError::Unavailable("database is locked".into())
}

/// Stores that expect nothing (any call fails the test), a clock at [`now`] and ids that hand
/// out [`generated_id`].
struct Mocks {
    store: MockOperatorStore,
    operations: MockOperationStore,
    ids: MockIdGenerator,
}

impl Mocks {
    fn new() -> Self {
        let mut ids = MockIdGenerator::new();
        ids.expect_merchant_id().returning(generated_id);
        Self {
            store: MockOperatorStore::new(),
            operations: MockOperationStore::new(),
            ids,
        }
    }

    fn operator(self) -> Operator {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(now());
        Operator::new(
            Arc::new(self.store),
            Arc::new(self.operations),
            Arc::new(clock),
            Arc::new(self.ids),
        )
    }
}

fn new_merchant(name: &str) -> NewMerchant {
    NewMerchant {
        id: None,
        name: name.into(),
        access: full_access(),
        deposit_secret: Secret::new("d".repeat(64)),
        withdrawal_secret: Secret::new("w".repeat(64)),
        require_timestamp: false,
        require_signature_v2: false,
    }
}

fn new_route() -> NewRoute {
    NewRoute {
        direction: Direction::Deposit,
        method: PaymentMethod::Card,
        currency: Currency::RUB,
        min_amount: 100,
        max_amount: 50_000,
        priority: 200,
        provider: "sandbox".into(),
        flow: Flow::Confirmation,
        lifetime_secs: Some(120),
    }
}

/// `error`, with its causes, says the store was unavailable because the database was locked.
fn assert_cause_kept(error: &(dyn std::error::Error + 'static)) {
    assert_eq!(
        Chain(error).to_string(),
        "storage unavailable: database is locked"
    );
}

/// The store takes one new merchant, which `check` accepts with the time it is stored at.
fn expect_merchant_stored(
    mocks: &mut Mocks,
    check: impl Fn(&Merchant, &Timestamp) -> bool + Send + 'static,
) {
    mocks
        .store
        .expect_insert_merchant()
        .withf(check)
        .times(1)
        .returning(|_, _| Ok(()));
}

/// A manual move of `amount` RUB of [`shop`]'s balance, naming `operation`.
fn manual(amount_text: &str, how: ManualMove, operation: Option<OperationId>) -> ManualAdjustment {
    ManualAdjustment {
        merchant: shop(),
        currency: Currency::RUB,
        amount: amount(amount_text),
        kind: how,
        operation,
    }
}

/// Moves `amount` RUB of [`shop`]'s balance by hand.
fn adjust(mocks: Mocks, amount_text: &str, how: ManualMove) -> Result<ManualEntry, BalanceError> {
    block_on(
        mocks
            .operator()
            .adjust_balance(&manual(amount_text, how, None), &note()),
    )
}

// --- merchants ---------------------------------------------------------------------------

#[test]
fn a_new_merchant_gets_a_fresh_id_a_trimmed_name_and_is_stored_enabled() {
    let mut mocks = Mocks::new();
    expect_merchant_stored(&mut mocks, |m, at| {
        m.id == generated_id()
            && m.name == "Shop X"
            && m.enabled
            && m.access == full_access()
            && m.deposit_keys.keys().len() == 1
            && m.deposit_keys.newest().secret.expose() == "d".repeat(64)
            && m.deposit_keys.newest().version == 1
            && m.withdrawal_keys.newest().secret.expose() == "w".repeat(64)
            && m.withdrawal_keys.newest().expires_at.is_none()
            && !m.require_timestamp
            && *at == now()
    });

    let created = block_on(
        mocks
            .operator()
            .create_merchant(new_merchant("  Shop X \t")),
    )
    .unwrap();

    assert_eq!(created.id, generated_id());
    assert_eq!(created.name, "Shop X");
    assert!(created.enabled);
}

#[test]
fn an_explicit_merchant_id_is_kept_and_no_id_is_generated() {
    let mut mocks = Mocks::new();
    mocks.ids = MockIdGenerator::new();
    expect_merchant_stored(&mut mocks, |m, _| m.id == shop());
    let new = NewMerchant {
        id: Some(shop()),
        ..new_merchant("shop")
    };

    let created = block_on(mocks.operator().create_merchant(new)).unwrap();

    assert_eq!(created.id, shop());
}

#[test]
fn merchant_names_must_be_1_to_128_characters_after_trimming() {
    for name in ["", "   ", "\u{a0}"] {
        let result = block_on(Mocks::new().operator().create_merchant(new_merchant(name)));
        let Err(CreateMerchantError::Invalid(rule)) = result else {
            panic!("{name:?} accepted");
        };
        assert_eq!(rule, MerchantRule::NameLength { max: 128 });
        assert_eq!(rule.to_string(), "the name must be 1 to 128 characters");
    }
    // Characters, not bytes: 128 Cyrillic letters fit, 129 do not.
    assert_eq!(merchant_name(&"я".repeat(128)).unwrap(), "я".repeat(128));
    assert_eq!(
        merchant_name(&"я".repeat(129)),
        Err(MerchantRule::NameLength { max: 128 })
    );
}

#[test]
fn merchant_names_refuse_control_characters() {
    for name in ["Shop\nX", "Shop\u{0}", "\u{7f}Shop", "Sh\top"] {
        let result = block_on(Mocks::new().operator().create_merchant(new_merchant(name)));
        let Err(CreateMerchantError::Invalid(rule)) = result else {
            panic!("{name:?} accepted");
        };
        assert_eq!(rule, MerchantRule::NameControlCharacter, "{name:?}");
        assert_eq!(
            rule.to_string(),
            "the name must not contain control characters (U+0000 to U+001F or U+007F)"
        );
    }
}

#[test]
fn merchant_access_pairs_must_exist_in_their_direction() {
    let mut new = new_merchant("Shop");
    new.access
        .insert((Direction::Withdrawal, PaymentMethod::SbpQr));

    let result = block_on(Mocks::new().operator().create_merchant(new));

    assert!(matches!(
        result,
        Err(CreateMerchantError::Invalid(MerchantRule::AccessPair {
            direction: Direction::Withdrawal,
            method: PaymentMethod::SbpQr,
        }))
    ));
}

#[test]
fn a_merchant_without_methods_is_allowed() {
    let mut mocks = Mocks::new();
    expect_merchant_stored(&mut mocks, |m, _| m.access.is_empty());
    let new = NewMerchant {
        access: BTreeSet::new(),
        ..new_merchant("Shop")
    };

    assert!(block_on(mocks.operator().create_merchant(new)).is_ok());
}

#[test]
fn a_taken_name_or_id_comes_back_typed() {
    for name_taken in [true, false] {
        let mut mocks = Mocks::new();
        mocks
            .store
            .expect_insert_merchant()
            .times(1)
            .returning(move |_, _| {
                Err(if name_taken {
                    MerchantInsertError::NameTaken
                } else {
                    MerchantInsertError::IdTaken
                })
            });

        let result = block_on(mocks.operator().create_merchant(new_merchant("Shop")));

        if name_taken {
            assert!(matches!(result, Err(CreateMerchantError::NameTaken)));
        } else {
            assert!(matches!(result, Err(CreateMerchantError::IdTaken)));
        }
    }
}

#[test]
fn a_storage_failure_keeps_its_cause() {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_insert_merchant()
        .returning(|_, _| Err(MerchantInsertError::Store(unavailable())));

    let error = block_on(mocks.operator().create_merchant(new_merchant("Shop"))).unwrap_err();

    assert!(matches!(
        error,
        CreateMerchantError::Store(StoreError::Unavailable(_))
    ));
    assert_cause_kept(&error);
}

#[test]
fn merchants_are_listed_found_and_disabled_through_the_store() {
    let mut mocks = Mocks::new();
    let stored = new_merchant("Shop").check(shop(), now()).unwrap();
    let listed = stored.clone();
    mocks
        .store
        .expect_list_merchants()
        .times(1)
        .returning(move || Ok(vec![listed.clone()]));
    let found = stored.clone();
    mocks
        .store
        .expect_merchant_by_name()
        .withf(|name| name == "Shop")
        .times(1)
        .returning(move |_| Ok(Some(found.clone())));
    mocks
        .store
        .expect_disable_merchant()
        .withf(|id| *id == shop())
        .times(1)
        .returning(|_| Ok(true));
    let operator = mocks.operator();

    assert_eq!(
        block_on(operator.merchants()).unwrap(),
        vec![stored.clone()]
    );
    assert_eq!(
        block_on(operator.merchant_by_name("Shop")).unwrap(),
        Some(stored)
    );
    assert!(block_on(operator.disable_merchant(&shop())).unwrap());
}

// --- routes ------------------------------------------------------------------------------

#[test]
fn a_valid_route_is_stored_and_returned_enabled_with_its_id() {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_insert_route()
        .withf(|route| *route.get() == new_route())
        .times(1)
        .returning(|_| Ok(42));

    let route = block_on(mocks.operator().add_route(new_route())).unwrap();

    assert_eq!(
        route,
        Route {
            id: 42,
            direction: Direction::Deposit,
            method: PaymentMethod::Card,
            currency: Currency::RUB,
            min_amount: 100,
            max_amount: 50_000,
            priority: 200,
            provider: "sandbox".into(),
            flow: Flow::Confirmation,
            lifetime_secs: Some(120),
            enabled: true,
        }
    );
}

/// Adds `new` on a store that expects nothing: the rule it breaks.
fn refused(new: NewRoute) -> RouteRule {
    match block_on(Mocks::new().operator().add_route(new)) {
        Err(AddRouteError::Invalid(rule)) => rule,
        other => panic!("not refused by a rule: {other:?}"),
    }
}

#[test]
fn a_route_method_must_exist_in_its_direction() {
    let rule = refused(NewRoute {
        direction: Direction::Withdrawal,
        method: PaymentMethod::SbpQr,
        ..new_route()
    });
    assert_eq!(
        rule,
        RouteRule::MethodForDirection {
            direction: Direction::Withdrawal,
            method: PaymentMethod::SbpQr,
        }
    );
    assert_eq!(
        rule.to_string(),
        "this method is not allowed in this direction"
    );
}

#[test]
fn route_bounds_start_at_one_minor_unit_and_do_not_cross() {
    for (min, max) in [(0, 100), (-5, 100), (10, 5), (1, 0)] {
        let rule = refused(NewRoute {
            min_amount: min,
            max_amount: max,
            ..new_route()
        });
        assert_eq!(rule, RouteRule::AmountBounds { min, max });
    }
    for (min, max) in [(1, 1), (1, i64::MAX), (500, 500)] {
        assert!(route_amounts(min, max).is_ok(), "{min}..={max}");
    }
}

#[test]
fn a_route_lifetime_is_positive_or_the_default() {
    for secs in [0, -1, i64::MIN] {
        let rule = refused(NewRoute {
            lifetime_secs: Some(secs),
            ..new_route()
        });
        assert_eq!(rule, RouteRule::Lifetime { secs });
    }
    assert!(route_lifetime(None).is_ok());
    assert!(route_lifetime(Some(1)).is_ok());
}

#[test]
fn a_route_names_its_provider() {
    for provider in ["", "  "] {
        let rule = refused(NewRoute {
            provider: provider.into(),
            ..new_route()
        });
        assert_eq!(rule, RouteRule::Provider);
    }
}

#[test]
fn the_first_broken_route_rule_is_reported() {
    let rule = refused(NewRoute {
        direction: Direction::Withdrawal,
        method: PaymentMethod::SbpQr,
        min_amount: 0,
        lifetime_secs: Some(0),
        provider: String::new(),
        ..new_route()
    });
    assert!(matches!(rule, RouteRule::MethodForDirection { .. }));
    let rule = refused(NewRoute {
        min_amount: 0,
        lifetime_secs: Some(0),
        ..new_route()
    });
    assert!(matches!(rule, RouteRule::AmountBounds { .. }));
}

#[test]
fn routes_are_listed_and_disabled_through_the_store() {
    let mut mocks = Mocks::new();
    let stored = new_route().check().unwrap().into_route(7);
    let listed = stored.clone();
    mocks
        .store
        .expect_list_routes()
        .times(1)
        .returning(move || Ok(vec![listed.clone()]));
    mocks
        .store
        .expect_disable_route()
        .withf(|id| *id == 7)
        .times(1)
        .returning(|_| Ok(true));
    mocks
        .store
        .expect_disable_route()
        .withf(|id| *id == 9_999)
        .times(1)
        .returning(|_| Ok(false));
    let operator = mocks.operator();

    assert_eq!(block_on(operator.routes()).unwrap(), vec![stored]);
    assert!(block_on(operator.disable_route(7)).unwrap());
    assert!(!block_on(operator.disable_route(9_999)).unwrap());
}

// --- balances ----------------------------------------------------------------------------

fn expect_shop_exists(store: &mut MockOperatorStore) {
    let known = new_merchant("Shop").check(shop(), now()).unwrap();
    store
        .expect_find_merchant()
        .withf(|id| *id == shop())
        .times(1)
        .returning(move |_| Ok(Some(known.clone())));
}

#[test]
fn a_credit_is_a_manual_ledger_entry_and_answers_the_new_balance() {
    let mut mocks = Mocks::new();
    expect_shop_exists(&mut mocks.store);
    let after = Balance {
        currency: Currency::RUB,
        available: 22_345,
        held: 500,
    };
    mocks
        .store
        .expect_apply_manual_move()
        .withf(|m, n| {
            n == &note()
                && m.kind == EntryKind::ManualCredit
                && (m.available, m.held) == (12_345, 0)
                && m.merchant_id == shop()
                && m.currency == Currency::RUB
                && m.operation_id.is_none()
                && m.at == now()
        })
        .times(1)
        .returning(move |_, _| {
            Ok(ManualEntry {
                balance: after,
                entry_id: 9,
                resolved: vec![],
            })
        });

    let written = adjust(mocks, "123.45", ManualMove::Credit).unwrap();

    assert_eq!(written.balance, after);
    assert_eq!(written.entry_id, 9);
}

#[test]
fn a_debit_takes_from_available_and_is_refused_when_it_is_not_covered() {
    let mut mocks = Mocks::new();
    expect_shop_exists(&mut mocks.store);
    mocks
        .store
        .expect_apply_manual_move()
        .withf(|m, _| m.kind == EntryKind::ManualDebit && (m.available, m.held) == (-12_345, 0))
        .times(1)
        .returning(|_, _| Err(ManualMoveError::InsufficientBalance));

    let error = adjust(mocks, "123.45", ManualMove::Debit).unwrap_err();

    assert!(matches!(
        error,
        BalanceError::InsufficientBalance { amount: a, currency: Currency::RUB } if a == amount("123.45")
    ));
    assert_eq!(
        error.to_string(),
        "the available balance is lower than 123.45 RUB"
    );
}

#[test]
fn an_unknown_merchant_is_refused_before_any_move() {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_find_merchant()
        .times(1)
        .returning(|_| Ok(None));

    let error = adjust(mocks, "1.00", ManualMove::Credit).unwrap_err();

    assert!(matches!(&error, BalanceError::UnknownMerchant { merchant } if merchant == &shop()));
    assert_eq!(error.to_string(), "no merchant shop");
}

#[test]
fn a_balance_move_without_database_keeps_its_cause() {
    let mut mocks = Mocks::new();
    expect_shop_exists(&mut mocks.store);
    mocks
        .store
        .expect_apply_manual_move()
        .returning(|_, _| Err(ManualMoveError::Store(unavailable())));

    let error = adjust(mocks, "1.00", ManualMove::Credit).unwrap_err();

    assert!(matches!(
        error,
        BalanceError::Store(StoreError::Unavailable(_))
    ));
    assert_cause_kept(&error);
}

#[test]
fn the_ledger_check_answers_the_stores_mismatches() {
    let mut mocks = Mocks::new();
    let mismatch = crate::ledger::LedgerMismatch {
        merchant_id: shop(),
        currency: Currency::RUB,
        balance_available: 6_001,
        balance_held: 0,
        ledger_available: 6_000,
        ledger_held: 0,
    };
    let found = mismatch.clone();
    mocks
        .store
        .expect_verify_ledger()
        .times(1)
        .returning(move || Ok(vec![found.clone()]));
    let flows = |currency, fees| crate::ledger::Flows {
        currency,
        merchants: 6_001,
        fees,
        came_in: 10_000,
        went_out: 4_000,
    };
    let usd = Currency::parse("USD").unwrap();
    let both = vec![flows(Currency::RUB, 0), flows(usd, -1)];
    let listed = both.clone();
    mocks
        .store
        .expect_ledger_flows()
        .times(1)
        .returning(move || Ok(listed.clone()));

    let broken = crate::ledger::BrokenEntry {
        merchant_id: shop(),
        currency: Currency::RUB,
        entry_id: 7,
    };
    let found = broken.clone();
    mocks
        .store
        .expect_broken_entries()
        .withf(|limit| *limit == crate::operator::BROKEN_SHOWN)
        .times(1)
        .returning(move |_| Ok(vec![found.clone()]));

    let report = block_on(mocks.operator().verify_ledger()).unwrap();
    assert_eq!(report.mismatches, vec![mismatch]);
    assert_eq!(report.broken, vec![broken]);
    assert_eq!(report.flows, both);
    let unbalanced: Vec<_> = report.unbalanced().map(|f| f.currency).collect();
    assert_eq!(
        unbalanced,
        vec![Currency::RUB],
        "6,001 held against 6,000 that came in net"
    );
    assert_eq!(report.problems(), 3);
}

/// Mocks whose store lists `providers`.
fn listing_providers(providers: Vec<AcquirerProvider>) -> Mocks {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_list_providers()
        .returning(move || Ok(providers.clone()));
    mocks
}

fn bank_record() -> AcquirerProvider {
    AcquirerProvider {
        name: ProviderName::parse("bank").unwrap(),
        protocol: crate::provider::ProtocolName::from_stored("acquirer".into()),
        url: ProviderUrl::parse("https://acq.example", false).unwrap(),
        credentials: Credentials::new("key", "secret").unwrap(),
        timeout: std::time::Duration::from_secs(5),
        allow_insecure: false,
        enabled: true,
    }
}

fn new_provider(name: &str, url: &str) -> NewProvider {
    NewProvider {
        name: name.into(),
        protocol: crate::provider::ProtocolName::from_stored("acquirer".into()),
        url: url.into(),
        allow_insecure: false,
        timeout: std::time::Duration::from_secs(5),
        credentials: Credentials::new("key", "secret").unwrap(),
    }
}

#[test]
fn a_new_provider_is_checked_then_stored_enabled() {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_insert_provider()
        .withf(|p, at| p.name.as_str() == "bank" && p.enabled && *at == now())
        .times(1)
        .returning(|_, _| Ok(()));

    let added = block_on(
        mocks
            .operator()
            .add_provider(new_provider("bank", "https://acq.example/")),
    )
    .unwrap();

    assert_eq!(added.url.as_str(), "https://acq.example");
}

#[test]
fn provider_rules_refuse_before_the_store_and_sandbox_is_taken() {
    for (name, url, field) in [
        ("Bank", "https://acq.example", "--name"),
        ("bank", "http://acq.example", "--url"),
        ("bank", "not a url", "--url"),
    ] {
        let result = block_on(
            Mocks::new()
                .operator()
                .add_provider(new_provider(name, url)),
        );
        assert!(
            matches!(&result, Err(ProviderError::Invalid { field: f, .. }) if *f == field),
            "{name} {url}: {result:?}"
        );
    }
    let mut slow = new_provider("bank", "https://acq.example");
    slow.timeout = std::time::Duration::from_secs(56);
    let result = block_on(Mocks::new().operator().add_provider(slow));
    assert!(matches!(
        result,
        Err(ProviderError::Invalid {
            field: "--timeout",
            ..
        })
    ));
    let result = block_on(
        Mocks::new()
            .operator()
            .add_provider(new_provider("sandbox", "https://acq.example")),
    );
    assert!(matches!(result, Err(ProviderError::NameTaken(_))));
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_insert_provider()
        .returning(|_, _| Err(crate::ports::ProviderInsertError::NameTaken));
    let result = block_on(
        mocks
            .operator()
            .add_provider(new_provider("bank", "https://acq.example")),
    );
    assert!(matches!(result, Err(ProviderError::NameTaken(_))));
}

#[test]
fn a_provider_update_keeps_what_it_does_not_change() {
    let mut mocks = listing_providers(vec![bank_record()]);
    mocks
        .store
        .expect_update_provider()
        .withf(|p, _| {
            !p.enabled
                && p.url.as_str() == "https://acq.example"
                && p.credentials.api_key.expose() == "key"
        })
        .times(1)
        .returning(|_, _| Ok(true));
    let changes = ProviderChanges {
        enabled: Some(false),
        ..ProviderChanges::default()
    };

    let updated = block_on(mocks.operator().update_provider("bank", changes)).unwrap();

    assert!(!updated.enabled);
    let mocks = listing_providers(vec![]);
    let unknown = block_on(
        mocks
            .operator()
            .update_provider("nobody", ProviderChanges::default()),
    );
    assert!(matches!(unknown, Err(ProviderError::Unknown(_))));
}

#[test]
fn an_acquirer_route_needs_a_known_provider_and_the_acquirers_flow() {
    let to_bank = |flow| NewRoute {
        provider: "bank".into(),
        flow,
        ..new_route()
    };
    let mut mocks = listing_providers(vec![]);
    mocks.store.expect_insert_route().never();
    let unknown = block_on(mocks.operator().add_route(to_bank(Flow::Redirect)));
    assert!(matches!(unknown, Err(AddRouteError::UnknownProvider(_))));

    let mut mocks = listing_providers(vec![bank_record()]);
    mocks.store.expect_insert_route().never();
    let wrong_flow = block_on(mocks.operator().add_route(to_bank(Flow::Confirmation)));
    assert!(matches!(
        wrong_flow,
        Err(AddRouteError::Invalid(RouteRule::AcquirerFlow {
            expected: "redirect"
        }))
    ));

    let mut mocks = listing_providers(vec![bank_record()]);
    mocks
        .store
        .expect_insert_route()
        .times(1)
        .returning(|_| Ok(7));
    let route = block_on(mocks.operator().add_route(to_bank(Flow::Redirect))).unwrap();
    assert_eq!((route.id, route.provider.as_str()), (7, "bank"));
}

#[test]
fn routes_are_enabled_and_reprioritised_through_the_store() {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_enable_route()
        .withf(|id| *id == 3)
        .returning(|_| Ok(true));
    mocks
        .store
        .expect_set_route_priority()
        .withf(|id, p| (*id, *p) == (3, -5))
        .returning(|_, _| Ok(false));
    let operator = mocks.operator();

    assert!(block_on(operator.enable_route(3)).unwrap());
    assert!(!block_on(operator.set_route_priority(3, -5)).unwrap());
}

mod discrepancies;

// --- an operation's story ------------------------------------------------------------------

mod story {
    use super::*;
    use crate::attempt::{Attempt, AttemptState};
    use crate::callback::{CallbackAttempt, CallbackState};
    use crate::story::{CallbackDelivery, LedgerEntry};
    use crate::testkit::{id, OperationBuilder};

    fn payout() -> crate::operation::Operation {
        OperationBuilder::payout(PaymentMethod::Card)
            .id(id(7))
            .merchant("shop")
            .amount("250.00")
            .callback("https://shop.example/cb")
            .created(now())
            .build()
    }

    fn attempt() -> Attempt {
        let mut attempt = Attempt::sent(id(7), 1, 3, "bank", now(), now());
        attempt.state = AttemptState::Ok;
        attempt.acquirer_id = Some("pay_1".into());
        attempt.latency_ms = Some(42);
        attempt
    }

    fn hold() -> LedgerEntry {
        LedgerEntry {
            id: 11,
            kind: EntryKind::WithdrawalHold,
            currency: Currency::RUB,
            available: -25_000,
            held: 25_000,
            at: now(),
            refund_id: None,
            note: None,
        }
    }

    fn delivered() -> CallbackDelivery {
        CallbackDelivery {
            refund_id: None,
            dispute: None,
            url: "https://shop.example/cb".into(),
            state: CallbackState::Delivered,
            attempts: 1,
            next_attempt_at: None,
            last_error: None,
            queued_at: now(),
            updated_at: now(),
            deliveries: vec![CallbackAttempt {
                operation_id: id(7),
                refund_id: None,
                dispute: None,
                attempt: 1,
                at: now(),
                duration_ms: 9,
                http_status: Some(200),
                error: None,
            }],
        }
    }

    #[test]
    fn the_story_gathers_the_operation_its_attempts_ledger_and_callbacks() {
        let mut mocks = Mocks::new();
        mocks
            .operations
            .expect_get()
            .withf(|asked| *asked == id(7))
            .times(1)
            .returning(|_| Ok(Some(payout())));
        mocks
            .operations
            .expect_attempts()
            .withf(|asked| *asked == id(7))
            .times(1)
            .returning(|_| Ok(vec![attempt()]));
        mocks
            .store
            .expect_operation_ledger()
            .withf(|asked| *asked == id(7))
            .times(1)
            .returning(|_| Ok(vec![hold()]));
        mocks
            .store
            .expect_operation_callbacks()
            .withf(|asked| *asked == id(7))
            .times(1)
            .returning(|_| Ok(vec![delivered()]));
        mocks
            .store
            .expect_operation_discrepancies()
            .withf(|asked| *asked == id(7))
            .times(1)
            .returning(|_| Ok(vec![]));

        let story = block_on(mocks.operator().operation_story(id(7)))
            .unwrap()
            .expect("a story");

        assert_eq!(story.operation, payout());
        assert_eq!(story.attempts, vec![attempt()]);
        assert_eq!(story.ledger, vec![hold()]);
        assert_eq!(story.callbacks, vec![delivered()]);
        assert_eq!(story.discrepancies, vec![]);
    }

    #[test]
    fn an_unknown_operation_has_no_story_and_nothing_else_is_read() {
        let mut mocks = Mocks::new();
        mocks.operations.expect_get().returning(|_| Ok(None));
        mocks.operations.expect_attempts().never();
        mocks.store.expect_operation_ledger().never();
        mocks.store.expect_operation_callbacks().never();

        assert_eq!(
            block_on(mocks.operator().operation_story(id(8))).unwrap(),
            None
        );
    }

    #[test]
    fn a_store_failure_comes_back_with_its_cause() {
        let mut mocks = Mocks::new();
        mocks
            .operations
            .expect_get()
            .returning(|_| Ok(Some(payout())));
        mocks.operations.expect_attempts().returning(|_| Ok(vec![]));
        mocks
            .store
            .expect_operation_ledger()
            .returning(|_| Err(unavailable()));

        let error = block_on(mocks.operator().operation_story(id(7))).unwrap_err();

        assert_cause_kept(&error);
    }
}

#[test]
fn overlaps_are_seconds_minutes_hours_or_days_up_to_720_hours() {
    assert_eq!(parse_overlap("0s"), Ok(0));
    assert_eq!(parse_overlap("90s"), Ok(90));
    assert_eq!(parse_overlap("15m"), Ok(900));
    assert_eq!(parse_overlap("24h"), Ok(86_400));
    assert_eq!(parse_overlap("30d"), Ok(MAX_OVERLAP_SECS));
    assert_eq!(parse_overlap("720h"), Ok(MAX_OVERLAP_SECS));
    for refused in [
        "",
        "h",
        "24",
        "721h",
        "31d",
        "2592001s",
        "-1h",
        "+1h",
        "1.5h",
        "1H",
        " 1h",
        "1h ",
        "1w",
        "1hh",
        "9999999999s",
        "１h",
    ] {
        assert!(parse_overlap(refused).is_err(), "{refused:?}");
    }
    assert!(parse_overlap("721h").unwrap_err().contains("720h"));
}

#[test]
fn a_rotation_ends_older_secrets_after_the_overlap_and_reports_the_new_ring() {
    let mut mocks = Mocks::new();
    let after = KeyRing::new(vec![
        crate::merchant::SigningKey {
            version: 2,
            secret: Secret::new("n".repeat(64)),
            created_at: now(),
            expires_at: None,
        },
        crate::merchant::SigningKey {
            version: 1,
            secret: Secret::new("d".repeat(64)),
            created_at: now(),
            expires_at: Some(now().plus_seconds(3600)),
        },
    ])
    .unwrap();
    let ring = after.clone();
    mocks
        .store
        .expect_rotate_key()
        .withf(|rotation| {
            rotation.merchant == shop()
                && rotation.direction == Direction::Withdrawal
                && rotation.secret.expose() == "n".repeat(64)
                && rotation.at == now()
                && rotation.older_end == now().plus_seconds(3600)
        })
        .times(1)
        .returning(move |_| Ok(Some(ring.clone())));
    let rotated = block_on(mocks.operator().rotate_secret(
        &shop(),
        Direction::Withdrawal,
        Secret::new("n".repeat(64)),
        3600,
    ))
    .unwrap()
    .expect("a known merchant");
    assert_eq!(rotated.keys, after);
    assert_eq!(rotated.old_secret_expires_at, now().plus_seconds(3600));
    assert_eq!(rotated.direction, Direction::Withdrawal);
}

#[test]
fn a_rotation_of_an_unknown_merchant_is_none_and_a_zero_overlap_ends_at_once() {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_rotate_key()
        .withf(|rotation| rotation.older_end == rotation.at)
        .times(1)
        .returning(|_| Ok(None));
    let rotated = block_on(mocks.operator().rotate_secret(
        &shop(),
        Direction::Deposit,
        Secret::new("n".repeat(64)),
        0,
    ))
    .unwrap();
    assert!(rotated.is_none());
}

#[test]
fn signing_rules_are_changed_through_the_store() {
    let mut mocks = Mocks::new();
    let change = SigningRulesChange {
        require_timestamp: Some(true),
        require_signature_v2: Some(false),
    };
    mocks
        .store
        .expect_change_signing_rules()
        .withf(move |id, asked| *id == shop() && *asked == change)
        .times(1)
        .returning(|_, _| Ok(true));
    assert!(block_on(mocks.operator().change_signing_rules(&shop(), change)).unwrap());
}
