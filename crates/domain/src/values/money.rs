use std::fmt;

use super::ValueError;

use std::str::FromStr;

use bigdecimal::num_bigint::BigInt;
use bigdecimal::{BigDecimal, ToPrimitive};

/// A positive amount in integer minor units (kopecks), parsed strictly from `"123.45"`.
///
/// Decimal text is read and written through `bigdecimal`; inside the gateway (the ledger,
/// storage, sums) an amount is an integer of minor units, never a float.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount(i64);

const AMOUNT_RULE: &str = "must be a decimal string with two fraction digits, greater than zero";

/// Minor units per major unit: amounts have two fraction digits.
const SCALE: i64 = 2;

impl Amount {
    /// Parses `^(0|[1-9][0-9]{0,14})\.[0-9]{2}$`, greater than zero.
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        if !has_amount_form(text) {
            return Err(ValueError::new(AMOUNT_RULE));
        }
        let units = BigDecimal::from_str(text)
            .ok()
            .and_then(|decimal| {
                let (digits, scale) = decimal.with_scale(SCALE).into_bigint_and_exponent();
                (scale == SCALE).then(|| digits.to_i64()).flatten()
            })
            .ok_or_else(|| ValueError::new(AMOUNT_RULE))?;
        Self::from_minor(units).map_err(|_| ValueError::new(AMOUNT_RULE))
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
}

/// The strict text form: `0` or up to 15 digits without a leading zero, a dot, two digits.
fn has_amount_form(text: &str) -> bool {
    let Some((whole, fraction)) = text.split_once('.') else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(whole)
        && whole.len() <= 15
        && (whole == "0" || !whole.starts_with('0'))
        && fraction.len() == 2
        && digits(fraction)
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_minor(self.0))
    }
}

/// Formats signed minor units the way amounts are shown (`-1.05`, `0.00`).
pub fn format_minor(units: i64) -> String {
    BigDecimal::new(BigInt::from(units), SCALE).to_plain_string()
}

/// A currency code: three upper-case ASCII letters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Currency([u8; 3]);

impl Currency {
    /// The Russian rouble, the only currency with routes today.
    pub const RUB: Currency = Currency(*b"RUB");

    /// Parses three upper-case letters; whether a route exists is decided later.
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        match text.as_bytes() {
            [a, b, c] if [a, b, c].iter().all(|x| x.is_ascii_uppercase()) => Ok(Self([*a, *b, *c])),
            _ => Err(ValueError::new(
                "must be three upper-case letters, e.g. RUB",
            )),
        }
    }

    pub fn as_str(&self) -> &str {
        // The bytes are ASCII upper-case letters by construction.
        std::str::from_utf8(&self.0).unwrap_or("XXX")
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_two_digit_amounts_into_minor_units() {
        assert_eq!(Amount::parse("100.00").map(Amount::minor), Ok(10_000));
        assert_eq!(Amount::parse("0.01").map(Amount::minor), Ok(1));
        assert_eq!(Amount::parse("100.05").map(Amount::minor), Ok(10_005));
        assert_eq!(
            Amount::parse("999999999999999.99").map(Amount::minor),
            Ok(99_999_999_999_999_999)
        );
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
            assert!(Amount::parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn amounts_echo_in_the_same_form() {
        for text in ["0.01", "1.00", "100.05", "12345.60", "999999999999999.99"] {
            assert_eq!(
                Amount::parse(text).map(|a| a.to_string()),
                Ok(text.to_string())
            );
        }
    }

    #[test]
    fn zero_and_negative_minor_units_are_not_amounts() {
        assert!(Amount::from_minor(0).is_err());
        assert!(Amount::from_minor(-5).is_err());
        assert_eq!(
            Amount::from_minor(5).map(|a| a.to_string()),
            Ok("0.05".into())
        );
    }

    #[test]
    fn formats_signed_minor_units() {
        assert_eq!(format_minor(0), "0.00");
        assert_eq!(format_minor(-105), "-1.05");
        assert_eq!(format_minor(100_000_000), "1000000.00");
    }

    #[test]
    fn currency_is_three_upper_case_letters() {
        assert_eq!(Currency::parse("RUB"), Ok(Currency::RUB));
        assert_eq!(
            Currency::parse("USD").map(|c| c.to_string()),
            Ok("USD".into())
        );
        for bad in ["rub", "RU", "RUBL", "R1B", "", "РУБ"] {
            assert!(Currency::parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn signed_sums_format_with_two_digits() {
        for (units, text) in [
            (0, "0.00"),
            (5, "0.05"),
            (-105, "-1.05"),
            (100, "1.00"),
            (-5, "-0.05"),
        ] {
            assert_eq!(format_minor(units), text);
        }
        assert_eq!(format_minor(i64::MIN), "-92233720368547758.08");
    }

    mod properties {
        use proptest::prelude::*;

        use super::*;

        proptest! {
            /// Every positive amount of minor units reads back from its two-digit text form.
            #[test]
            fn amounts_round_trip_through_their_text(minor in 1i64..=99_999_999_999_999_999) {
                let amount = Amount::from_minor(minor).expect("positive");
                let text = amount.to_string();
                prop_assert_eq!(Amount::parse(&text), Ok(amount));
                prop_assert_eq!(format_minor(minor), text);
            }

            /// Any text either fails or is the canonical form of what it parsed to.
            #[test]
            fn parsed_text_is_always_canonical(
                text in prop_oneof![
                    any::<String>(),
                    "-?[0-9]{1,17}(\\.[0-9]{0,3})?",
                    "[0-9]{1,3}\\.[0-9]{2}",
                ],
            ) {
                if let Ok(amount) = Amount::parse(&text) {
                    prop_assert_eq!(amount.to_string(), text);
                }
            }
        }
    }
}
