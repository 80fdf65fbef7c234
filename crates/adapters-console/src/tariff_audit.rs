//! How a tariff is written where people read it: the JSON of `gateway tariff list --json` and
//! of the `tariff.set` and `tariff.remove` audit entries, and those entries' target. The
//! console and the command line both audit tariffs through these, so an entry reads the same
//! whoever made the change.

use domain::fee::Tariff;
use domain::format_minor;
use domain::ports::TariffKey;
use serde_json::{json, Value};

/// A tariff with its amounts in the currency's form (`"10.00"`), `min` and `max` `null`
/// when absent.
pub fn tariff_json(tariff: &Tariff) -> Value {
    let money = |units: i64| format_minor(units, tariff.currency);
    json!({
        "merchantId": tariff.merchant_id.as_str(),
        "direction": tariff.direction.as_str(),
        "method": tariff.method.as_str(),
        "currency": tariff.currency.as_str(),
        "percent": tariff.terms.percent.format(),
        "fixed": money(tariff.terms.fixed),
        "min": tariff.terms.min.map(money),
        "max": tariff.terms.max.map(money),
    })
}

/// The audit target of the tariff under `key`: `merchant/direction/method/currency`.
pub fn tariff_target(key: &TariffKey) -> String {
    format!(
        "{}/{}/{}/{}",
        key.merchant_id,
        key.direction.as_str(),
        key.method.as_str(),
        key.currency.as_str()
    )
}

#[cfg(test)]
mod tests {
    use domain::fee::{FeeDirection, FeeTerms, Percent};
    use domain::{Currency, MerchantId, PaymentMethod};

    use super::*;

    #[test]
    fn a_tariff_is_written_in_its_currencys_form() {
        let tariff = Tariff {
            merchant_id: MerchantId::parse("m-1").expect("an id"),
            direction: FeeDirection::Refund,
            method: PaymentMethod::Sbp,
            currency: Currency::RUB,
            terms: FeeTerms::new(
                Percent::parse("2.5").expect("2.5"),
                1_000,
                None,
                Some(5_000),
            )
            .expect("valid"),
        };
        assert_eq!(
            tariff_json(&tariff),
            json!({
                "merchantId": "m-1", "direction": "refund", "method": "sbp", "currency": "RUB",
                "percent": "2.50", "fixed": "10.00", "min": null, "max": "50.00",
            })
        );
        assert_eq!(tariff_target(&tariff.key()), "m-1/refund/sbp/RUB");
    }
}
