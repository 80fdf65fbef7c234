//! Fees: what the operator charges a merchant for an operation, by the merchant's tariff.
//!
//! The fee is `fixed + amount * percent / 100`, rounded half up to the currency's minor unit,
//! then raised to `min` and lowered to `max`. It is computed once, when the operation (or
//! refund) is created, and kept with the terms it came from: a later tariff change alters
//! neither.

use std::str::FromStr;

use bigdecimal::{BigDecimal, RoundingMode, ToPrimitive};

use crate::names::names;
use crate::{Amount, Currency, MerchantId, PaymentMethod, ValueError};

names! {
    /// Which movement a tariff prices.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum FeeDirection {
        Deposit = "deposit",
        Withdrawal = "withdrawal",
        Refund = "refund",
    }
    else "must be deposit, withdrawal or refund"
}

impl From<crate::Direction> for FeeDirection {
    fn from(direction: crate::Direction) -> Self {
        match direction {
            crate::Direction::Deposit => FeeDirection::Deposit,
            crate::Direction::Withdrawal => FeeDirection::Withdrawal,
        }
    }
}

/// A percentage from 0 to 100 with at most two fraction digits, kept in hundredths of a
/// percent (`2.50` is 250).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Percent(u32);

/// 100 % in hundredths.
const WHOLE: u32 = 10_000;

impl Percent {
    pub const ZERO: Percent = Percent(0);

    /// `"2.5"`, `"2.50"`, `"0"`, `"100"`: a plain decimal, at most two fraction digits.
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        let rule =
            || ValueError::new("must be a decimal from 0 to 100 with at most two fraction digits");
        let plain = !text.is_empty()
            && text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && !text.starts_with('.')
            && !text.ends_with('.')
            && text.split_once('.').is_none_or(|(_, f)| f.len() <= 2);
        if !plain {
            return Err(rule());
        }
        let hundredths = BigDecimal::from_str(text)
            .ok()
            .map(|d| d * BigDecimal::from(100))
            .filter(BigDecimal::is_integer)
            .and_then(|d| d.to_u32())
            .ok_or_else(rule)?;
        Self::from_hundredths(hundredths).map_err(|_| rule())
    }

    pub fn from_hundredths(hundredths: u32) -> Result<Self, ValueError> {
        ValueError::unless(hundredths <= WHOLE, "must be from 0 to 100")?;
        Ok(Self(hundredths))
    }

    pub fn hundredths(self) -> u32 {
        self.0
    }

    /// Always two fraction digits: `"2.50"`, `"0.00"`, `"100.00"`.
    pub fn format(self) -> String {
        format!("{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

/// The terms of a tariff, in minor units of its currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FeeTerms {
    pub percent: Percent,
    pub fixed: i64,
    pub min: Option<i64>,
    pub max: Option<i64>,
}

/// The rule a tariff's terms break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TermsRule {
    #[error("fixed, min and max must not be negative")]
    Negative,
    #[error("min must not be greater than max")]
    MinAboveMax,
}

impl FeeTerms {
    /// Terms with every amount at least zero and `min` not above `max`.
    pub fn new(
        percent: Percent,
        fixed: i64,
        min: Option<i64>,
        max: Option<i64>,
    ) -> Result<Self, TermsRule> {
        if fixed < 0 || min.is_some_and(|m| m < 0) || max.is_some_and(|m| m < 0) {
            return Err(TermsRule::Negative);
        }
        if let (Some(min), Some(max)) = (min, max) {
            if min > max {
                return Err(TermsRule::MinAboveMax);
            }
        }
        Ok(Self {
            percent,
            fixed,
            min,
            max,
        })
    }

    /// The fee for `amount`, in minor units: the percentage of the amount rounded half up to
    /// the minor unit, plus `fixed`, then raised to `min` and lowered to `max`.
    pub fn fee(&self, amount: Amount) -> i64 {
        let share = (BigDecimal::from(amount.minor()) * BigDecimal::from(self.percent.0)
            / BigDecimal::from(WHOLE))
        .with_scale_round(0, RoundingMode::HalfUp);
        let fee = (share + BigDecimal::from(self.fixed))
            .to_i64()
            .unwrap_or(i64::MAX);
        let fee = self.min.map_or(fee, |min| fee.max(min));
        self.max.map_or(fee, |max| fee.min(max))
    }

    /// `2.50% + 10.00, min 15.00` in `currency`'s form; parts at zero or absent are left out
    /// (`0.00%` alone when everything is).
    pub fn describe(&self, currency: Currency) -> String {
        let mut parts = Vec::new();
        if self.percent != Percent::ZERO || self.fixed == 0 {
            parts.push(format!("{}%", self.percent.format()));
        }
        if self.fixed != 0 {
            parts.push(crate::format_minor(self.fixed, currency));
        }
        let mut text = parts.join(" + ");
        if let Some(min) = self.min {
            text.push_str(&format!(", min {}", crate::format_minor(min, currency)));
        }
        if let Some(max) = self.max {
            text.push_str(&format!(", max {}", crate::format_minor(max, currency)));
        }
        text
    }
}

/// What an operation or a refund pays: the fee in minor units of its currency and the terms
/// it was computed by (`None`: no tariff applied, no fee).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fee {
    pub amount: i64,
    pub terms: Option<FeeTerms>,
}

impl Fee {
    pub const NONE: Fee = Fee {
        amount: 0,
        terms: None,
    };

    /// The fee `terms` put on `amount`; no terms, no fee.
    pub fn of(terms: Option<FeeTerms>, amount: Amount) -> Fee {
        match terms {
            Some(terms) => Fee {
                amount: terms.fee(amount),
                terms: Some(terms),
            },
            None => Fee::NONE,
        }
    }
}

/// A merchant's tariff for one direction, method and currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tariff {
    pub merchant_id: MerchantId,
    pub direction: FeeDirection,
    pub method: PaymentMethod,
    pub currency: Currency,
    pub terms: FeeTerms,
}

/// A fee amount as an operator writes it: zero or more, in `currency`'s form (`"10.00"`,
/// `"0"` in JPY).
pub fn parse_fee_amount(text: &str, currency: Currency) -> Result<i64, ValueError> {
    let zero = match currency.exponent() {
        0 => "0".to_string(),
        digits => format!("0.{}", "0".repeat(digits as usize)),
    };
    if text == zero {
        return Ok(0);
    }
    Amount::parse(text, currency).map(Amount::minor)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn amount(minor: i64) -> Amount {
        Amount::from_minor(minor).expect("positive")
    }

    fn terms(percent: &str, fixed: i64, min: Option<i64>, max: Option<i64>) -> FeeTerms {
        FeeTerms::new(Percent::parse(percent).expect("a percent"), fixed, min, max)
            .expect("valid terms")
    }

    #[test]
    fn the_fee_is_fixed_plus_the_share_then_min_then_max() {
        // 2.5 % + 10.00, min 15.00: 100.00 pays 12.50, raised to 15.00.
        let card = terms("2.5", 1_000, Some(1_500), None);
        assert_eq!(card.fee(amount(10_000)), 1_500);
        // 1,000.00 pays 25.00 + 10.00.
        assert_eq!(card.fee(amount(100_000)), 3_500);
        // 1 % with a max of 5.00.
        assert_eq!(terms("1", 0, None, Some(500)).fee(amount(100_000)), 500);
        assert_eq!(terms("1", 0, None, Some(500)).fee(amount(10_000)), 100);
    }

    #[test]
    fn the_share_is_rounded_half_up_to_the_minor_unit() {
        // 1.5 % of 1.00 is 1.5 minor units: 2. 1.5 % of 0.33 is 0.495: 0.
        assert_eq!(terms("1.5", 0, None, None).fee(amount(100)), 2);
        assert_eq!(terms("1.5", 0, None, None).fee(amount(33)), 0);
        // 2.5 % of 0.20 and 0.01 % of 50.00 are both half a minor unit: up to 1.
        assert_eq!(terms("2.5", 0, None, None).fee(amount(20)), 1);
        assert_eq!(terms("0.01", 0, None, None).fee(amount(5_000)), 1);
    }

    #[test]
    fn no_terms_no_fee() {
        assert_eq!(Fee::of(None, amount(10_000)), Fee::NONE);
        assert_eq!(Fee::NONE.amount, 0);
    }

    #[test]
    fn a_huge_amount_does_not_overflow() {
        let all = terms("100", i64::MAX, None, None);
        assert_eq!(all.fee(amount(i64::MAX)), i64::MAX);
    }

    #[test]
    fn percents_parse_strictly() {
        assert_eq!(Percent::parse("2.50").map(Percent::hundredths), Ok(250));
        assert_eq!(Percent::parse("2.5").map(Percent::hundredths), Ok(250));
        assert_eq!(Percent::parse("0").map(Percent::hundredths), Ok(0));
        assert_eq!(Percent::parse("100").map(Percent::hundredths), Ok(10_000));
        assert_eq!(
            Percent::parse("100.00").map(Percent::hundredths),
            Ok(10_000)
        );
        for bad in [
            "", "-1", "100.01", "2.555", ".5", "5.", "1e2", "2,5", " 2", "abc",
        ] {
            assert!(Percent::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Percent::parse("2.5").map(Percent::format),
            Ok("2.50".into())
        );
    }

    #[test]
    fn terms_refuse_negative_amounts_and_min_above_max() {
        let p = Percent::ZERO;
        assert_eq!(FeeTerms::new(p, -1, None, None), Err(TermsRule::Negative));
        assert_eq!(
            FeeTerms::new(p, 0, Some(-1), None),
            Err(TermsRule::Negative)
        );
        assert_eq!(
            FeeTerms::new(p, 0, None, Some(-1)),
            Err(TermsRule::Negative)
        );
        assert_eq!(
            FeeTerms::new(p, 0, Some(2), Some(1)),
            Err(TermsRule::MinAboveMax)
        );
        assert!(FeeTerms::new(p, 0, Some(1), Some(1)).is_ok());
    }

    #[test]
    fn fee_amounts_take_zero_in_the_currencys_form() {
        let jpy = Currency::parse("JPY").expect("yen");
        assert_eq!(parse_fee_amount("0.00", Currency::RUB), Ok(0));
        assert_eq!(parse_fee_amount("10.00", Currency::RUB), Ok(1_000));
        assert_eq!(parse_fee_amount("0", jpy), Ok(0));
        assert_eq!(parse_fee_amount("15", jpy), Ok(15));
        for bad in ["0", "10", "-1.00", "1.5"] {
            assert!(parse_fee_amount(bad, Currency::RUB).is_err(), "{bad:?}");
        }
        assert!(parse_fee_amount("0.00", jpy).is_err());
    }

    #[test]
    fn terms_describe_themselves_in_the_currency() {
        let card = terms("2.5", 1_000, Some(1_500), None);
        assert_eq!(card.describe(Currency::RUB), "2.50% + 10.00, min 15.00");
        assert_eq!(FeeTerms::default().describe(Currency::RUB), "0.00%");
        assert_eq!(
            terms("0", 500, None, Some(900)).describe(Currency::RUB),
            "5.00, max 9.00"
        );
    }

    proptest! {
        /// Between min and max, never negative, and never below the fixed part (without max).
        #[test]
        fn the_fee_stays_within_its_bounds(
            minor in 1i64..1_000_000_000_000,
            hundredths in 0u32..=10_000,
            fixed in 0i64..1_000_000,
            min in proptest::option::of(0i64..1_000_000),
            spread in proptest::option::of(0i64..1_000_000),
        ) {
            let max = spread.map(|s| min.unwrap_or(0) + s);
            let percent = Percent::from_hundredths(hundredths).expect("in range");
            let terms = FeeTerms::new(percent, fixed, min, max).expect("valid");
            let fee = terms.fee(amount(minor));
            prop_assert!(fee >= 0);
            if let Some(min) = min { prop_assert!(fee >= min); }
            if let Some(max) = max { prop_assert!(fee <= max); }
            if max.is_none() { prop_assert!(fee >= fixed); }
            // Exactly the integer half-up share.
            let share = (i128::from(minor) * i128::from(hundredths) + 5_000) / 10_000;
            let expected = share + i128::from(fixed);
            let expected = min.map_or(expected, |m| expected.max(i128::from(m)));
            let expected = max.map_or(expected, |m| expected.min(i128::from(m)));
            prop_assert_eq!(i128::from(fee), expected);
        }
    }
}
