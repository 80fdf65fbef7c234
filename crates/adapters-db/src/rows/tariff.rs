//! The `tariffs` rows.

use diesel::prelude::*;
use domain::fee::{FeeDirection, FeeTerms, Percent, Tariff};
use domain::{Currency, MerchantId, PaymentMethod};

use super::{bad, parse};
use crate::schema::tariffs;

/// A tariff as stored (and as written, with its time). An update writes every column: an
/// absent `min` or `max` clears the stored one.
#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = tariffs, treat_none_as_null = true)]
pub(crate) struct TariffRow {
    pub(crate) merchant_id: String,
    pub(crate) direction: String,
    pub(crate) method: String,
    pub(crate) currency: String,
    pub(crate) percent_hundredths: i32,
    pub(crate) fixed_fee: i64,
    pub(crate) min_fee: Option<i64>,
    pub(crate) max_fee: Option<i64>,
    pub(crate) updated_at: i64,
}

impl TariffRow {
    pub(crate) fn new(tariff: &Tariff, updated_at: i64) -> Self {
        let terms = &tariff.terms;
        Self {
            merchant_id: tariff.merchant_id.as_str().to_owned(),
            direction: tariff.direction.as_str().to_owned(),
            method: tariff.method.as_str().to_owned(),
            currency: tariff.currency.as_str().to_owned(),
            percent_hundredths: i32::try_from(terms.percent.hundredths()).unwrap_or(i32::MAX),
            fixed_fee: terms.fixed,
            min_fee: terms.min,
            max_fee: terms.max,
            updated_at,
        }
    }

    pub(crate) fn terms(&self) -> anyhow::Result<FeeTerms> {
        let hundredths = u32::try_from(self.percent_hundredths)
            .map_err(|e| bad("tariffs.percent_hundredths", e))?;
        let percent = Percent::from_hundredths(hundredths)
            .map_err(|e| bad("tariffs.percent_hundredths", e))?;
        FeeTerms::new(percent, self.fixed_fee, self.min_fee, self.max_fee)
            .map_err(|e| bad("tariffs", e))
    }

    pub(crate) fn into_tariff(self) -> anyhow::Result<Tariff> {
        Ok(Tariff {
            terms: self.terms()?,
            merchant_id: parse("tariffs.merchant_id", &self.merchant_id, MerchantId::parse)?,
            direction: parse("tariffs.direction", &self.direction, FeeDirection::parse)?,
            method: parse("tariffs.method", &self.method, PaymentMethod::parse)?,
            currency: parse("tariffs.currency", &self.currency, Currency::parse)?,
        })
    }
}
