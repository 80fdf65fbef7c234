//! The fee accounts' income for the console's overview (`ConsoleStore::fee_income`): fees
//! charged by real deposits and payouts, summed per currency from a given instant on.

use std::time::Duration;

use domain::fee::{FeeDirection, FeeTerms, Percent, Tariff};
use domain::ports::{ConsoleStore, TariffStore};
use domain::route::{Flow, NewRoute};
use domain::service::Gateway;
use domain::{Currency, Direction, PaymentMethod};

use crate::helpers::{
    approve, deposit, each_backend, gateway, merchant, now, operator, withdrawal,
};

fn usd() -> Currency {
    Currency::parse("USD").expect("USD")
}

/// A card tariff of `shop` in `currency`: `percent` % plus `fixed` minor units.
fn card_tariff(
    shop: &domain::merchant::Merchant,
    direction: FeeDirection,
    currency: Currency,
    percent: &str,
    fixed: i64,
) -> Tariff {
    let percent = Percent::parse(percent).expect("percent");
    Tariff {
        merchant_id: shop.id.clone(),
        direction,
        method: PaymentMethod::Card,
        currency,
        terms: FeeTerms::new(percent, fixed, None, None).expect("terms"),
    }
}

/// An approved card deposit of `minor` units of `currency` for `shop`.
async fn approved_deposit(
    gw: &Gateway,
    shop: &domain::merchant::Merchant,
    minor: i64,
    currency: Currency,
) {
    let mut new = deposit(minor, None);
    new.common.currency = currency;
    let created = gw
        .creation()
        .create_deposit(shop, new, b"d")
        .await
        .expect("deposit");
    approve(gw, created.operation.id()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fee_income_sums_each_currencys_fees_from_an_instant_on() {
    each_backend(|t| async move {
        let shop = merchant(&t.db).await;
        let usd_route = NewRoute {
            direction: Direction::Deposit,
            method: PaymentMethod::Card,
            currency: usd(),
            min_amount: 1,
            max_amount: 1_000_000_00,
            priority: 100,
            provider: "sandbox".into(),
            flow: Flow::Redirect,
            lifetime_secs: None,
        };
        operator(&t.db)
            .add_route(usd_route)
            .await
            .expect("a USD route");
        for tariff in [
            card_tariff(&shop, FeeDirection::Deposit, Currency::RUB, "2", 10_00),
            card_tariff(&shop, FeeDirection::Withdrawal, Currency::RUB, "1", 0),
            card_tariff(&shop, FeeDirection::Deposit, usd(), "0", 3_00),
        ] {
            t.db.put_tariff(&tariff, now()).await.expect("tariff");
        }
        let gw = gateway(&t.db);

        // Before `since`: 12.00 RUB earned, left out.
        approved_deposit(&gw, &shop, 100_00, Currency::RUB).await;
        assert_eq!(
            t.db.fee_income(domain::Timestamp::from_millis(0))
                .await
                .expect("read"),
            vec![(Currency::RUB, 12_00)]
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
        let since = now();
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(t.db.fee_income(since).await.expect("read"), vec![]);

        // From `since`: a deposit of 1,000.00 RUB pays 30.00, a payout of 100.00 RUB 1.00, a
        // deposit of 20.00 USD 3.00.
        approved_deposit(&gw, &shop, 1_000_00, Currency::RUB).await;
        let payout = gw
            .creation()
            .create_withdrawal(&shop, withdrawal(100_00, None), b"w")
            .await
            .expect("payout");
        approve(&gw, payout.operation.id()).await;
        approved_deposit(&gw, &shop, 20_00, usd()).await;

        let earned = t.db.fee_income(since).await.expect("read");
        assert_eq!(earned, vec![(Currency::RUB, 31_00), (usd(), 3_00)]);
        // The same sums as the ledger's fee income entries themselves.
        let rub_in_ledger = t.count(&format!(
            "SELECT CAST(SUM(available_delta) AS BIGINT) AS n FROM ledger \
             WHERE kind = 'fee_income' AND currency = 'RUB' AND created_at >= {}",
            since.millis()
        ));
        assert_eq!(rub_in_ledger, 31_00);
        t.assert_ledger_verifies().await;
    })
    .await;
}
