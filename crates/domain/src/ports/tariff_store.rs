//! The [`TariffStore`] port.

use async_trait::async_trait;

use crate::fee::{FeeDirection, FeeTerms, Tariff};
use crate::{Currency, MerchantId, PaymentMethod, Timestamp};

use super::StoreError;

/// Which tariff: a merchant's, for one direction, method and currency.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TariffKey {
    pub merchant_id: MerchantId,
    pub direction: FeeDirection,
    pub method: PaymentMethod,
    pub currency: Currency,
}

impl Tariff {
    /// The key this tariff is stored under.
    pub fn key(&self) -> TariffKey {
        TariffKey {
            merchant_id: self.merchant_id.clone(),
            direction: self.direction,
            method: self.method,
            currency: self.currency,
        }
    }
}

/// The merchants' tariffs.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait TariffStore: Send + Sync {
    /// The terms of the tariff under `key`, if there is one. Read for every creation: it may
    /// be served from a copy, but a change MUST be visible within 5 seconds in every process.
    async fn terms(&self, key: &TariffKey) -> Result<Option<FeeTerms>, StoreError>;

    /// Writes `tariff`, replacing the whole tariff under its key if there was one; returns
    /// the terms it replaced.
    async fn put_tariff(
        &self,
        tariff: &Tariff,
        at: Timestamp,
    ) -> Result<Option<FeeTerms>, StoreError>;

    /// Removes the tariff under `key`; returns the terms removed (`None`: there was none).
    async fn remove_tariff(&self, key: &TariffKey) -> Result<Option<FeeTerms>, StoreError>;

    /// Every tariff (of `merchant` only, when given), by merchant, direction, method and
    /// currency.
    async fn tariffs<'a>(
        &self,
        merchant: Option<&'a MerchantId>,
    ) -> Result<Vec<Tariff>, StoreError>;
}
