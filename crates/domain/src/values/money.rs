use std::str::FromStr;

use super::{Currency, ValueError};

use bigdecimal::num_bigint::BigInt;
use bigdecimal::{BigDecimal, ToPrimitive};

/// A positive amount in integer minor units, parsed strictly from the text form of its
/// currency: `"123.45"` in RUB, `"1500"` in JPY, `"1.250"` in KWD.
///
/// Decimal text is read and written through `bigdecimal`; inside the gateway (the ledger,
/// storage, sums) an amount is an integer of minor units, never a float. It has no
/// `Display`: its text needs its currency, so it is written with [`Amount::format`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount(i64);

/// Digits before the point at most (the seed's `[1-9][0-9]{0,14}`).
const MAX_WHOLE_DIGITS: usize = 15;

impl Amount {
    /// Parses `^(0|[1-9][0-9]{0,14})$` followed, when `currency` has minor units, by a dot
    /// and exactly as many digits as its exponent; greater than zero.
    pub fn parse(text: &str, currency: Currency) -> Result<Self, ValueError> {
        let scale = currency.exponent();
        let rule = || ValueError::new(amount_rule(scale));
        if !has_amount_form(text, scale) {
            return Err(rule());
        }
        let units = BigDecimal::from_str(text)
            .ok()
            .and_then(|decimal| {
                let scale = i64::from(scale);
                let (digits, exponent) = decimal.with_scale(scale).into_bigint_and_exponent();
                (exponent == scale).then(|| digits.to_i64()).flatten()
            })
            .ok_or_else(rule)?;
        Self::from_minor(units).map_err(|_| rule())
    }

    /// An amount from minor units; zero and negative values are refused.
    pub fn from_minor(units: i64) -> Result<Self, ValueError> {
        if units > 0 {
            Ok(Self(units))
        } else {
            Err(ValueError::new("must be greater than zero"))
        }
    }

    /// The amount in minor units.
    pub fn minor(self) -> i64 {
        self.0
    }

    /// The amount in the text form of `currency` (`"100.00"`, `"1500"`, `"1.250"`).
    pub fn format(self, currency: Currency) -> String {
        format_minor(self.0, currency)
    }
}

/// The most fraction digits any currency's amounts have (CLF's four).
const MAX_FRACTION_DIGITS: usize = 4;

/// An amount as a request wrote it before its currency is known (a refund's is its
/// deposit's): a decimal string greater than zero with at most four fraction digits.
/// [`AmountText::in_currency`] reads it in the currency, which decides the exact number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmountText(String);

impl AmountText {
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        let digits = text
            .split_once('.')
            .map_or(0, |(_, fraction)| fraction.len());
        let form = digits <= MAX_FRACTION_DIGITS
            && has_amount_form(text, digits as u32)
            && text.bytes().any(|b| (b'1'..=b'9').contains(&b));
        ValueError::unless(form, "must be a decimal string greater than zero")?;
        Ok(Self(text.to_owned()))
    }

    /// The amount in `currency`, or why its digits do not fit it.
    pub fn in_currency(&self, currency: Currency) -> Result<Amount, ValueError> {
        Amount::parse(&self.0, currency)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a refused amount is told, by the number of fraction digits its currency wants.
fn amount_rule(scale: u32) -> String {
    match scale {
        0 => "must be a decimal string without fraction digits, greater than zero".to_owned(),
        2 => "must be a decimal string with two fraction digits, greater than zero".to_owned(),
        3 => "must be a decimal string with three fraction digits, greater than zero".to_owned(),
        n => format!("must be a decimal string with {n} fraction digits, greater than zero"),
    }
}

/// The strict text form: `0` or up to 15 digits without a leading zero, then (when `scale`
/// is not zero) a dot and `scale` digits.
fn has_amount_form(text: &str, scale: u32) -> bool {
    let (whole, fraction) = match text.split_once('.') {
        Some((whole, fraction)) if scale > 0 => (whole, fraction),
        None if scale == 0 => (text, ""),
        _ => return false,
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    !whole.is_empty()
        && digits(whole)
        && whole.len() <= MAX_WHOLE_DIGITS
        && (whole == "0" || !whole.starts_with('0'))
        && fraction.len() == scale as usize
        && digits(fraction)
}

/// Formats signed minor units the way amounts of `currency` are shown (`-1.05`, `0.00`,
/// `1500`, `-0.250`).
pub fn format_minor(units: i64, currency: Currency) -> String {
    BigDecimal::new(BigInt::from(units), i64::from(currency.exponent())).to_plain_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> Currency {
        Currency::parse(text).expect("three letters")
    }

    fn rub(text: &str) -> Result<i64, ValueError> {
        Amount::parse(text, Currency::RUB).map(Amount::minor)
    }

    #[test]
    fn parses_two_digit_amounts_into_minor_units() {
        assert_eq!(rub("100.00"), Ok(10_000));
        assert_eq!(rub("0.01"), Ok(1));
        assert_eq!(rub("100.05"), Ok(10_005));
        assert_eq!(rub("999999999999999.99"), Ok(99_999_999_999_999_999));
    }

    #[test]
    fn refuses_every_malformed_amount() {
        for bad in [
            "100",
            "100.0",
            "100.000",
            "-1.00",
            "0.00",
            "1e2",
            "01.00",
            "",
            ".50",
            "1.",
            " 1.00",
            "1.00 ",
            "+1.00",
            "1,00",
            "1000000000000000.00",
            "１.００",
            "1.0a",
            "00.10",
        ] {
            assert!(rub(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn a_currency_without_minor_units_takes_whole_numbers_only() {
        let jpy = code("JPY");
        assert_eq!(Amount::parse("1500", jpy).map(Amount::minor), Ok(1500));
        assert_eq!(Amount::parse("1", jpy).map(Amount::minor), Ok(1));
        for bad in ["1500.00", "1500.", "0", "01500", "1500.0", "-1", "1e3", ""] {
            assert!(
                Amount::parse(bad, jpy).is_err(),
                "{bad:?} should be refused"
            );
        }
        assert_eq!(
            Amount::parse("1500.00", jpy).map_err(|e| e.0),
            Err("must be a decimal string without fraction digits, greater than zero".into())
        );
    }

    #[test]
    fn a_three_digit_currency_takes_three_fraction_digits() {
        let kwd = code("KWD");
        assert_eq!(Amount::parse("1.250", kwd).map(Amount::minor), Ok(1250));
        assert_eq!(Amount::parse("0.001", kwd).map(Amount::minor), Ok(1));
        for bad in ["1.25", "1.2500", "1", "0.000"] {
            assert!(
                Amount::parse(bad, kwd).is_err(),
                "{bad:?} should be refused"
            );
        }
    }

    #[test]
    fn a_code_that_is_not_active_reads_two_digits() {
        assert_eq!(
            Amount::parse("10.00", code("XXX")).map(Amount::minor),
            Ok(1000)
        );
        assert!(Amount::parse("10", code("XXX")).is_err());
    }

    #[test]
    fn amount_text_waits_for_its_currency() {
        for good in ["1500", "30.00", "1.250", "0.0001", "0.5"] {
            assert!(AmountText::parse(good).is_ok(), "{good:?}");
        }
        for bad in [
            "0", "0.00", "-1.00", "1.00000", "01.00", "1.", "", "abc", "1e3",
        ] {
            assert!(AmountText::parse(bad).is_err(), "{bad:?} should be refused");
        }
        let text = AmountText::parse("30.00").expect("a decimal");
        assert_eq!(text.in_currency(Currency::RUB).map(Amount::minor), Ok(3000));
        assert!(text.in_currency(code("JPY")).is_err());
        assert!(text.in_currency(code("KWD")).is_err());
        let yen = AmountText::parse("1500").expect("a decimal");
        assert_eq!(yen.in_currency(code("JPY")).map(Amount::minor), Ok(1500));
    }

    #[test]
    fn amounts_echo_in_the_same_form() {
        for (text, currency) in [
            ("0.01", "RUB"),
            ("1.00", "USD"),
            ("100.05", "EUR"),
            ("12345.60", "KZT"),
            ("999999999999999.99", "RUB"),
            ("1500", "JPY"),
            ("999999999999999", "KRW"),
            ("1.250", "KWD"),
            ("0.001", "BHD"),
        ] {
            let currency = code(currency);
            assert_eq!(
                Amount::parse(text, currency).map(|a| a.format(currency)),
                Ok(text.to_string())
            );
        }
    }

    #[test]
    fn zero_and_negative_minor_units_are_not_amounts() {
        assert!(Amount::from_minor(0).is_err());
        assert!(Amount::from_minor(-5).is_err());
        assert_eq!(
            Amount::from_minor(5).map(|a| a.format(Currency::RUB)),
            Ok("0.05".into())
        );
    }

    #[test]
    fn signed_sums_format_in_their_currency() {
        for (units, currency, text) in [
            (0, "RUB", "0.00"),
            (5, "RUB", "0.05"),
            (-105, "RUB", "-1.05"),
            (100, "RUB", "1.00"),
            (-5, "RUB", "-0.05"),
            (100_000_000, "RUB", "1000000.00"),
            (0, "JPY", "0"),
            (-1500, "JPY", "-1500"),
            (0, "KWD", "0.000"),
            (-250, "KWD", "-0.250"),
            (1_000_250, "KWD", "1000.250"),
        ] {
            assert_eq!(
                format_minor(units, code(currency)),
                text,
                "{units} {currency}"
            );
        }
        assert_eq!(
            format_minor(i64::MIN, Currency::RUB),
            "-92233720368547758.08"
        );
    }

    mod properties {
        use proptest::prelude::*;

        use super::*;

        /// A currency of each exponent the gateway meets: 0, 2 and 3.
        fn currencies() -> impl Strategy<Value = Currency> {
            prop_oneof![
                Just("JPY"),
                Just("RUB"),
                Just("USD"),
                Just("KWD"),
                Just("BHD")
            ]
            .prop_map(code)
        }

        /// The largest minor units an amount of `currency` may have (15 whole digits).
        fn largest(currency: Currency) -> i64 {
            10_i64.pow(15) * currency.minor_per_major() - 1
        }

        proptest! {
            /// Every positive amount of minor units reads back from its text form, in every
            /// currency.
            #[test]
            fn amounts_round_trip_through_their_text(
                currency in currencies(),
                fraction in 0.0f64..1.0,
            ) {
                // Spread over the whole range of the currency's amounts.
                let minor = 1 + (fraction * (largest(currency) - 1) as f64) as i64;
                let amount = Amount::from_minor(minor).expect("positive");
                let text = amount.format(currency);
                prop_assert_eq!(Amount::parse(&text, currency), Ok(amount));
                prop_assert_eq!(format_minor(minor, currency), text);
            }

            /// Small amounts too, where leading zeros of the fraction matter.
            #[test]
            fn small_amounts_round_trip(currency in currencies(), minor in 1i64..100_000) {
                let amount = Amount::from_minor(minor).expect("positive");
                prop_assert_eq!(Amount::parse(&amount.format(currency), currency), Ok(amount));
            }

            /// Any text either fails or is the canonical form of what it parsed to.
            #[test]
            fn parsed_text_is_always_canonical(
                currency in currencies(),
                text in prop_oneof![
                    any::<String>(),
                    "-?[0-9]{1,17}(\\.[0-9]{0,4})?",
                    "[0-9]{1,3}(\\.[0-9]{2,3})?",
                ],
            ) {
                if let Ok(amount) = Amount::parse(&text, currency) {
                    prop_assert_eq!(amount.format(currency), text);
                }
            }

            /// The number of fraction digits is the currency's, never another.
            #[test]
            fn the_fraction_has_exactly_the_exponents_digits(
                currency in currencies(),
                whole in 1i64..1_000_000,
                digits in 0u32..5,
            ) {
                let text = if digits == 0 {
                    whole.to_string()
                } else {
                    format!("{whole}.{:0width$}", 1, width = digits as usize)
                };
                prop_assert_eq!(
                    Amount::parse(&text, currency).is_ok(),
                    digits == currency.exponent()
                );
            }
        }
    }
}
