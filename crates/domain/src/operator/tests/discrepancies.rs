//! Enabling a merchant, manual entries that name an operation, and resolving discrepancies.

use super::*;
use crate::discrepancy::{RecordedDiscrepancy, Resolution, ResolutionNote, Resolved};
use crate::testkit::{id, OperationBuilder};

fn deposit_of(merchant: &str) -> crate::operation::Operation {
    OperationBuilder::deposit(PaymentMethod::Card)
        .id(id(7))
        .merchant(merchant)
        .amount("250.00")
        .created(now())
        .build()
}

fn open_discrepancy(n: i64) -> RecordedDiscrepancy {
    RecordedDiscrepancy {
        id: n,
        operation_id: id(7),
        provider: "bank".into(),
        reported: "succeeded".into(),
        at: now(),
        resolution: None,
    }
}

/// Discrepancy `n` as resolved now by `actor` with `note`, naming `ledger_entry`.
fn resolved_discrepancy(
    n: i64,
    actor: Actor,
    note: &str,
    ledger_entry: Option<i64>,
) -> RecordedDiscrepancy {
    let resolution = Resolution {
        at: now(),
        actor,
        note: ResolutionNote::from_stored(note),
        ledger_entry,
    };
    RecordedDiscrepancy {
        resolution: Some(resolution),
        ..open_discrepancy(n)
    }
}

#[test]
fn enabling_a_merchant_releases_its_held_callbacks_at_the_clocks_time() {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_enable_merchant()
        .withf(|merchant, at| *merchant == shop() && *at == now())
        .times(1)
        .returning(|_, _| Ok(Some(3)));
    mocks
        .store
        .expect_enable_merchant()
        .returning(|_, _| Ok(None));
    let operator = mocks.operator();

    assert_eq!(
        block_on(operator.enable_merchant(&shop())).unwrap(),
        Some(3)
    );
    let unknown = MerchantId::parse("nobody").unwrap();
    assert_eq!(block_on(operator.enable_merchant(&unknown)).unwrap(), None);
}

#[test]
fn an_entry_naming_the_merchants_operation_carries_it_and_reports_what_it_resolved() {
    let mut mocks = Mocks::new();
    expect_shop_exists(&mut mocks.store);
    mocks
        .operations
        .expect_get()
        .withf(|asked| *asked == id(7))
        .times(1)
        .returning(|_| Ok(Some(deposit_of("shop"))));
    mocks
        .store
        .expect_apply_manual_move()
        .withf(|m, n| n == &note() && m.operation_id == Some(id(7)) && m.available == -25_000)
        .times(1)
        .returning(|_, _| {
            Ok(ManualEntry {
                balance: Balance {
                    currency: Currency::RUB,
                    available: 0,
                    held: 0,
                },
                entry_id: 12,
                resolved: vec![4, 5],
            })
        });

    let adjustment = manual("250.00", ManualMove::Debit, Some(id(7)));
    let written = block_on(mocks.operator().adjust_balance(&adjustment, &note())).unwrap();

    assert_eq!((written.entry_id, written.resolved), (12, vec![4, 5]));
}

#[test]
fn an_entry_naming_an_unknown_or_anothers_operation_is_refused_before_any_move() {
    for (found, currency) in [
        (None, Currency::RUB),
        (Some(deposit_of("other")), Currency::RUB),
        (Some(deposit_of("shop")), Currency::parse("USD").unwrap()),
    ] {
        let mut mocks = Mocks::new();
        expect_shop_exists(&mut mocks.store);
        let stored = found.clone();
        mocks
            .operations
            .expect_get()
            .returning(move |_| Ok(stored.clone()));
        mocks.store.expect_apply_manual_move().never();
        let mut adjustment = manual("1.00", ManualMove::Credit, Some(id(7)));
        adjustment.currency = currency;

        let error = block_on(mocks.operator().adjust_balance(&adjustment, &note())).unwrap_err();

        match (&found, error) {
            (None, BalanceError::UnknownOperation { operation }) => assert_eq!(operation, id(7)),
            (
                Some(op),
                BalanceError::NotTheOperations {
                    operation,
                    merchant,
                    currency,
                },
            ) => {
                assert_eq!(operation, id(7));
                assert_eq!(&merchant, op.merchant_id());
                assert_eq!(currency, Currency::RUB);
            }
            (_, other) => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn a_discrepancy_is_resolved_with_a_trimmed_note_by_the_actor_now() {
    let mut mocks = Mocks::new();
    let done = resolved_discrepancy(4, Actor::cli("ops"), "refunded by the bank", None);
    let answer = done.clone();
    mocks
        .store
        .expect_resolve_discrepancy()
        .withf(|n, r| {
            *n == 4
                && r.at == now()
                && r.actor == Actor::cli("ops")
                && r.note.as_str() == "refunded by the bank"
                && r.ledger_entry.is_none()
        })
        .times(1)
        .returning(move |_, _| Ok(Resolved::Now(answer.clone())));

    let resolved = block_on(mocks.operator().resolve_discrepancy(
        4,
        &Actor::cli("ops"),
        "  refunded by the bank ",
    ))
    .unwrap();

    assert_eq!(resolved, done);
}

#[test]
fn a_bad_note_never_reaches_the_store_and_a_resolved_or_unknown_one_is_refused() {
    let mut mocks = Mocks::new();
    mocks.store.expect_resolve_discrepancy().never();
    let error = block_on(
        mocks
            .operator()
            .resolve_discrepancy(4, &Actor::cli("ops"), " "),
    )
    .unwrap_err();
    assert!(matches!(error, ResolveError::Note(_)), "{error:?}");

    let mut mocks = Mocks::new();
    let earlier = resolved_discrepancy(4, Actor::operator("alice"), "checked", Some(12));
    let stored = earlier.clone();
    mocks
        .store
        .expect_resolve_discrepancy()
        .withf(|n, _| *n == 4)
        .returning(move |_, _| Ok(Resolved::Already(stored.clone())));
    mocks
        .store
        .expect_resolve_discrepancy()
        .returning(|_, _| Ok(Resolved::NotFound));
    let operator = mocks.operator();

    match block_on(operator.resolve_discrepancy(4, &Actor::cli("ops"), "again")) {
        Err(ResolveError::AlreadyResolved(found)) => assert_eq!(*found, earlier),
        other => panic!("unexpected {other:?}"),
    }
    match block_on(operator.resolve_discrepancy(5, &Actor::cli("ops"), "again")) {
        Err(ResolveError::NotFound(5)) => {}
        other => panic!("unexpected {other:?}"),
    }
}
