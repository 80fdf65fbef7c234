//! Card numbers as digits: the Luhn check and the six-and-four mask.

/// Whether a string of digits passes the Luhn check.
pub fn luhn_valid(digits: &str) -> bool {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let values: Vec<u8> = digits.bytes().map(|b| b - b'0').collect();
    luhn_check(&values)
}

/// Whether digit values (each 0 to 9, at least one) pass the Luhn check.
pub(crate) fn luhn_check(values: &[u8]) -> bool {
    let sum: u32 = values
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            if i % 2 == 1 {
                let doubled = d * 2;
                if doubled > 9 {
                    doubled - 9
                } else {
                    doubled
                }
            } else {
                d
            }
        })
        .sum();
    !values.is_empty() && sum.is_multiple_of(10)
}

/// The first six and last four digits of a card number, the rest as `*`.
pub fn mask_pan(digits: &str) -> String {
    let n = digits.len();
    if n <= 10 {
        return "*".repeat(n);
    }
    format!("{}{}{}", &digits[..6], "*".repeat(n - 10), &digits[n - 4..])
}
