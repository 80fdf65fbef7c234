//! The operator's tariffs: setting, removing and listing them, and the fee a new movement
//! pays under them (see [`crate::fee`] for the arithmetic).

use std::sync::Arc;

use crate::fee::{Fee, FeeDirection, FeeTerms, Tariff};
use crate::ports::{Clock, OperatorStore, StoreError, TariffKey, TariffStore};
use crate::route::{route_currency, RouteRule};
use crate::{Amount, Direction, PaymentMethod};

/// Why a tariff was not set. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum TariffError {
    #[error("no such merchant")]
    UnknownMerchant,
    /// The method does not move money in this direction (a refund's is its deposit's).
    #[error("{method} is not a method of {direction}s", method = .0.as_str(), direction = .1.as_str())]
    Method(PaymentMethod, FeeDirection),
    #[error(transparent)]
    Currency(#[from] RouteRule),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The tariff use cases, over the [`TariffStore`] (and the [`OperatorStore`], to know the
/// merchant).
#[derive(Clone)]
pub struct Tariffs {
    store: Arc<dyn TariffStore>,
    merchants: Arc<dyn OperatorStore>,
    clock: Arc<dyn Clock>,
}

impl Tariffs {
    pub fn new(
        store: Arc<dyn TariffStore>,
        merchants: Arc<dyn OperatorStore>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            store,
            merchants,
            clock,
        }
    }

    /// Sets the whole tariff under its key (replacing one there), after the rules: a known
    /// merchant, a method of the direction, a currency the method moves money in. Returns
    /// the terms it replaced.
    pub async fn set(&self, tariff: &Tariff) -> Result<Option<FeeTerms>, TariffError> {
        let moved_in = match tariff.direction {
            FeeDirection::Withdrawal => Direction::Withdrawal,
            FeeDirection::Deposit | FeeDirection::Refund => Direction::Deposit,
        };
        if !moved_in.methods().contains(&tariff.method) {
            return Err(TariffError::Method(tariff.method, tariff.direction));
        }
        route_currency(tariff.method, tariff.currency)?;
        if self
            .merchants
            .find_merchant(&tariff.merchant_id)
            .await?
            .is_none()
        {
            return Err(TariffError::UnknownMerchant);
        }
        Ok(self.store.put_tariff(tariff, self.clock.now()).await?)
    }

    /// Removes the tariff under `key`; returns its terms (`None`: there was none).
    pub async fn remove(&self, key: &TariffKey) -> Result<Option<FeeTerms>, StoreError> {
        self.store.remove_tariff(key).await
    }

    /// Every tariff, or those of one merchant.
    pub async fn list(
        &self,
        merchant: Option<&crate::MerchantId>,
    ) -> Result<Vec<Tariff>, StoreError> {
        self.store.tariffs(merchant).await
    }

    /// The fee a new movement of `amount` under `key` pays now, with the terms it came from.
    pub async fn fee(&self, key: &TariffKey, amount: Amount) -> Result<Fee, StoreError> {
        Ok(Fee::of(self.store.terms(key).await?, amount))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures::executor::block_on;

    use super::*;
    use crate::fee::Percent;
    use crate::merchant::Secret;
    use crate::ports::{MockOperatorStore, MockTariffStore};
    use crate::testkit::{at, merchant_with_secrets, TestClock};
    use crate::{Currency, MerchantId};

    fn tariff(direction: FeeDirection, method: PaymentMethod, currency: &str) -> Tariff {
        Tariff {
            merchant_id: MerchantId::parse("m-1").expect("an id"),
            direction,
            method,
            currency: Currency::parse(currency).expect("a code"),
            terms: FeeTerms::new(
                Percent::parse("2.5").expect("2.5"),
                1_000,
                Some(1_500),
                None,
            )
            .expect("valid"),
        }
    }

    fn tariffs(store: MockTariffStore, merchants: MockOperatorStore) -> Tariffs {
        Tariffs::new(
            Arc::new(store),
            Arc::new(merchants),
            Arc::new(TestClock::at(at(7))),
        )
    }

    fn known_merchant() -> MockOperatorStore {
        let mut merchants = MockOperatorStore::new();
        merchants.expect_find_merchant().returning(|id| {
            Ok(Some(merchant_with_secrets(
                id.as_str(),
                "Shop",
                Secret::new("d".repeat(64)),
                Secret::new("w".repeat(64)),
            )))
        });
        merchants
    }

    #[test]
    fn a_tariff_is_written_with_the_time_of_the_change() {
        let card = tariff(FeeDirection::Deposit, PaymentMethod::Card, "USD");
        let mut store = MockTariffStore::new();
        let expected = card.clone();
        store
            .expect_put_tariff()
            .withf(move |written, when| *written == expected && *when == at(7))
            .times(1)
            .returning(|_, _| Ok(None));

        let replaced = block_on(tariffs(store, known_merchant()).set(&card)).expect("set");

        assert_eq!(replaced, None);
    }

    #[test]
    fn a_tariff_the_rules_refuse_is_refused_before_anything_is_read() {
        let method = |e: &TariffError| matches!(e, TariffError::Method(..));
        let currency = |e: &TariffError| matches!(e, TariffError::Currency(_));
        type Refusal = fn(&TariffError) -> bool;
        let cases: [(Tariff, Refusal); 4] = [
            (
                tariff(FeeDirection::Withdrawal, PaymentMethod::SbpQr, "RUB"),
                method,
            ),
            (
                tariff(FeeDirection::Withdrawal, PaymentMethod::BankAPay, "RUB"),
                method,
            ),
            (
                tariff(FeeDirection::Refund, PaymentMethod::Sbp, "USD"),
                currency,
            ),
            (
                tariff(FeeDirection::Deposit, PaymentMethod::Card, "XXX"),
                currency,
            ),
        ];
        for (case, expected) in cases {
            let mut store = MockTariffStore::new();
            store.expect_put_tariff().never();
            let mut merchants = MockOperatorStore::new();
            merchants.expect_find_merchant().never();

            let refused = block_on(tariffs(store, merchants).set(&case));

            assert!(
                refused.as_ref().is_err_and(expected),
                "{case:?}: {refused:?}"
            );
        }
    }

    #[test]
    fn a_refund_tariff_takes_the_deposit_methods() {
        let mut store = MockTariffStore::new();
        store
            .expect_put_tariff()
            .times(1)
            .returning(|_, _| Ok(None));
        let refund = tariff(FeeDirection::Refund, PaymentMethod::BankAPay, "RUB");

        assert!(block_on(tariffs(store, known_merchant()).set(&refund)).is_ok());
    }

    #[test]
    fn an_unknown_merchant_gets_no_tariff() {
        let mut store = MockTariffStore::new();
        store.expect_put_tariff().never();
        let mut merchants = MockOperatorStore::new();
        merchants.expect_find_merchant().returning(|_| Ok(None));
        let card = tariff(FeeDirection::Deposit, PaymentMethod::Card, "RUB");

        let refused = block_on(tariffs(store, merchants).set(&card));

        assert!(matches!(refused, Err(TariffError::UnknownMerchant)));
    }

    #[test]
    fn the_fee_comes_from_the_stored_terms_or_is_none() {
        let card = tariff(FeeDirection::Deposit, PaymentMethod::Card, "RUB");
        let terms = card.terms;
        let key = card.key();
        let mut store = MockTariffStore::new();
        let asked = key.clone();
        store
            .expect_terms()
            .withf(move |k| *k == asked)
            .returning(move |_| Ok(Some(terms)));
        let hundred = Amount::from_minor(10_000).expect("positive");

        let fee =
            block_on(tariffs(store, MockOperatorStore::new()).fee(&key, hundred)).expect("read");

        assert_eq!(
            fee,
            Fee {
                amount: 1_500,
                terms: Some(terms)
            }
        );

        let mut none = MockTariffStore::new();
        none.expect_terms().returning(|_| Ok(None));
        let fee =
            block_on(tariffs(none, MockOperatorStore::new()).fee(&key, hundred)).expect("read");
        assert_eq!(fee, Fee::NONE);
    }
}
