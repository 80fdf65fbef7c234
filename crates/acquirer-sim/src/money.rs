//! Amounts as the bank reads them: integer minor units of an active ISO 4217 currency, whose
//! exponent (from the `iso_currency` table) says how they are shown.

/// The fraction digits of `code`'s amounts, or `None` when it is not an active ISO 4217 code
/// (unknown, a precious metal, or superseded): the bank refuses such a payment.
pub fn exponent(code: &str) -> Option<u32> {
    let currency = iso_currency::Currency::from_code(code)?;
    let exponent = currency.exponent()?;
    currency
        .is_superseded()
        .is_none()
        .then_some(u32::from(exponent))
}

/// `minor` units of `code` as people read them (`1234.50 RUB`, `1500 JPY`, `1.250 KWD`).
pub fn show(minor: i64, code: &str) -> String {
    let digits = exponent(code).unwrap_or(2) as usize;
    let text = minor.unsigned_abs().to_string();
    let sign = if minor < 0 { "-" } else { "" };
    if digits == 0 {
        return format!("{sign}{text} {code}");
    }
    let padded = format!("{text:0>width$}", width = digits + 1);
    let (whole, fraction) = padded.split_at(padded.len() - digits);
    format!("{sign}{whole}.{fraction} {code}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exponent_decides_how_an_amount_reads() {
        assert_eq!(show(123_450, "RUB"), "1234.50 RUB");
        assert_eq!(show(5, "USD"), "0.05 USD");
        assert_eq!(show(1500, "JPY"), "1500 JPY");
        assert_eq!(show(1250, "KWD"), "1.250 KWD");
        assert_eq!(show(7, "BHD"), "0.007 BHD");
    }

    #[test]
    fn only_active_codes_have_an_exponent() {
        assert_eq!(exponent("RUB"), Some(2));
        assert_eq!(exponent("JPY"), Some(0));
        assert_eq!(exponent("KWD"), Some(3));
        for code in ["XXX", "XAU", "ABC", "rub", "VES"] {
            assert_eq!(exponent(code), None, "{code}");
        }
    }
}
