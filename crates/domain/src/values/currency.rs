use std::fmt;

use super::ValueError;

/// A currency code: three upper-case ASCII letters. Whether it is an active ISO 4217 code,
/// and how many fraction digits its amounts have, comes from the `iso_currency` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Currency([u8; 3]);

/// The fraction digits of an amount whose currency is not an active code (or is malformed):
/// the seed's two-digit form.
const FALLBACK_EXPONENT: u32 = 2;

impl Currency {
    /// The Russian rouble: the only currency of the SBP and bank-app methods.
    pub const RUB: Currency = Currency(*b"RUB");

    /// `XXX`, the code ISO 4217 keeps for "no currency": not active, so its amounts read
    /// two fraction digits, as a malformed currency's do.
    pub const NONE: Currency = Currency(*b"XXX");

    /// Parses three upper-case letters; whether a route exists is decided later.
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        match text.as_bytes() {
            [a, b, c] if [a, b, c].iter().all(|x| x.is_ascii_uppercase()) => Ok(Self([*a, *b, *c])),
            _ => Err(ValueError::new(
                "must be three upper-case letters, e.g. RUB",
            )),
        }
    }

    /// Parses an active ISO 4217 code (an operator's route, balance or tariff): a code the
    /// table does not know, a precious metal or a superseded code is refused.
    pub fn parse_active(text: &str) -> Result<Self, ValueError> {
        let currency = Self::parse(text)?;
        ValueError::unless(
            currency.is_active(),
            "must be an active ISO 4217 currency code, e.g. RUB",
        )?;
        Ok(currency)
    }

    pub fn as_str(&self) -> &str {
        // The bytes are ASCII upper-case letters by construction.
        std::str::from_utf8(&self.0).unwrap_or("XXX")
    }

    /// The table's entry of an active code: one with minor units that nothing superseded.
    fn iso(self) -> Option<(iso_currency::Currency, u32)> {
        let iso = iso_currency::Currency::from_code(self.as_str())?;
        let exponent = iso.exponent()?;
        iso.is_superseded()
            .is_none()
            .then_some((iso, u32::from(exponent)))
    }

    /// Whether this is an active ISO 4217 code.
    pub fn is_active(self) -> bool {
        self.iso().is_some()
    }

    /// The fraction digits of an amount in this currency: 2 for RUB, USD or EUR, 0 for JPY,
    /// 3 for KWD; two for a code that is not active (no route can take it anyway).
    pub fn exponent(self) -> u32 {
        self.iso()
            .map_or(FALLBACK_EXPONENT, |(_, exponent)| exponent)
    }

    /// Minor units per major unit (100 for RUB, 1 for JPY, 1000 for KWD).
    pub fn minor_per_major(self) -> i64 {
        10_i64.pow(self.exponent())
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

    fn code(text: &str) -> Currency {
        Currency::parse(text).expect("three letters")
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
    fn the_table_decides_the_exponent() {
        for (text, exponent) in [
            ("RUB", 2),
            ("KZT", 2),
            ("UZS", 2),
            ("USD", 2),
            ("EUR", 2),
            ("JPY", 0),
            ("KRW", 0),
            ("KWD", 3),
            ("BHD", 3),
        ] {
            assert!(code(text).is_active(), "{text}");
            assert_eq!(code(text).exponent(), exponent, "{text}");
        }
        assert_eq!(code("JPY").minor_per_major(), 1);
        assert_eq!(code("KWD").minor_per_major(), 1000);
    }

    #[test]
    fn unknown_metal_and_superseded_codes_are_not_active_and_read_two_digits() {
        for text in ["XXX", "ABC", "XAU", "VES"] {
            assert!(!code(text).is_active(), "{text}");
            assert_eq!(code(text).exponent(), 2, "{text}");
            assert!(Currency::parse_active(text).is_err(), "{text}");
        }
        assert_eq!(Currency::parse_active("JPY"), Ok(code("JPY")));
    }
}
