use std::fmt;

use super::card_data::sanitize_payout_requisites;
use super::luhn::{luhn_valid, mask_pan};
use super::{bounded_text, KeptObject, ValidationErrors, ValueError};

/// A card number: 13 to 19 digits passing the Luhn check. Its `Debug` shows it masked.
#[derive(Clone, PartialEq, Eq)]
pub struct Pan(String);

impl Pan {
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        let ok = (13..=19).contains(&text.len()) && luhn_valid(text);
        ValueError::unless(
            ok,
            "must be a card number of 13 to 19 digits passing the Luhn check",
        )
        .map(|()| Self(text.to_string()))
    }

    /// The full number, for the provider only: never store, log or return it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `424242******4242`.
    pub fn masked(&self) -> String {
        mask_pan(&self.0)
    }
}

impl fmt::Debug for Pan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pan({})", self.masked())
    }
}

/// A phone number in international format: `+` and 8 to 15 digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phone(String);

impl Phone {
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        let digits = text.strip_prefix('+').unwrap_or("");
        let ok = (8..=15).contains(&digits.len())
            && !digits.starts_with('0')
            && digits.bytes().all(|b| b.is_ascii_digit());
        ValueError::unless(
            ok,
            "must be an international phone number such as +79001234567",
        )
        .map(|()| Self(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Where a payout goes, per method (docs/api.md, Create a withdrawal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WithdrawalRequisites {
    Sbp {
        phone: Phone,
        account_name: String,
        bank_name: String,
    },
    Card {
        pan: Pan,
        cardholder_name: String,
    },
}

impl WithdrawalRequisites {
    /// SBP requisites; each bad field is reported under `requisites.<name>`.
    pub fn sbp(
        phone: Option<&str>,
        account_name: Option<&str>,
        bank_name: Option<&str>,
    ) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let phone = errors.required("requisites.phone", phone, Phone::parse);
        let account_name = errors.required("requisites.accountName", account_name, |t| {
            bounded_text(t, 256)
        });
        let bank_name = errors.required("requisites.bankName", bank_name, |t| bounded_text(t, 128));
        errors.into_result()?;
        match (phone, account_name, bank_name) {
            (Some(phone), Some(account_name), Some(bank_name)) => Ok(Self::Sbp {
                phone,
                account_name,
                bank_name,
            }),
            _ => Err(ValidationErrors::default()),
        }
    }

    /// Card requisites; each bad field is reported under `requisites.<name>`.
    pub fn card(
        pan: Option<&str>,
        cardholder_name: Option<&str>,
    ) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let pan = errors.required("requisites.pan", pan, Pan::parse);
        let holder = errors.required("requisites.cardholderName", cardholder_name, |t| {
            bounded_text(t, 128)
        });
        errors.into_result()?;
        match (pan, holder) {
            (Some(pan), Some(cardholder_name)) => Ok(Self::Card {
                pan,
                cardholder_name,
            }),
            _ => Err(ValidationErrors::default()),
        }
    }

    /// The requisites as they may be stored and returned: the card number masked, and card
    /// numbers typed into the names masked too ([`sanitize_payout_requisites`]).
    pub fn to_kept(&self) -> KeptObject {
        let given = match self {
            Self::Sbp {
                phone,
                account_name,
                bank_name,
            } => KeptObject::new()
                .with("phone", phone.as_str())
                .with("accountName", account_name.as_str())
                .with("bankName", bank_name.as_str()),
            Self::Card {
                pan,
                cardholder_name,
            } => KeptObject::new()
                .with("pan", pan.masked())
                .with("cardholderName", cardholder_name.as_str()),
        };
        sanitize_payout_requisites(&given)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_numbers_typed_into_payout_names_are_stored_masked_and_the_phone_kept() {
        let card =
            WithdrawalRequisites::card(Some("4242424242424242"), Some("IVAN 5555 5555 5555 4444"))
                .expect("valid");
        let kept = card.to_kept();
        assert_eq!(kept.text("pan"), Some("424242******4242"));
        assert_eq!(kept.text("cardholderName"), Some("IVAN 555555******4444"));
        // A 15-digit phone may pass the Luhn check; it is the number to pay, kept as given.
        let phone = "+424242424242424";
        assert!(luhn_valid(&phone[1..]));
        let sbp = WithdrawalRequisites::sbp(
            Some(phone),
            Some("Ivan 4000-0000-0000-0002"),
            Some("Bank 4000.0000.0000.0002"),
        )
        .expect("valid");
        let kept = sbp.to_kept();
        assert_eq!(kept.text("phone"), Some(phone));
        assert_eq!(kept.text("accountName"), Some("Ivan 400000******0002"));
        assert_eq!(kept.text("bankName"), Some("Bank 400000******0002"));
    }

    #[test]
    fn luhn_accepts_test_cards_and_refuses_typos() {
        assert!(luhn_valid("4242424242424242"));
        assert!(luhn_valid("4000000000000002"));
        assert!(luhn_valid("4000000000009995"));
        assert!(!luhn_valid("4242424242424241"));
        assert!(!luhn_valid("42424242x4242424"));
        assert!(!luhn_valid(""));
    }

    #[test]
    fn pan_is_13_to_19_luhn_digits_and_masks_to_six_and_four() {
        let pan = Pan::parse("4242424242424242").expect("valid");
        assert_eq!(pan.masked(), "424242******4242");
        assert_eq!(format!("{pan:?}"), "Pan(424242******4242)");
        assert!(Pan::parse("4242 4242 4242 4242").is_err());
        assert!(Pan::parse("424242424242").is_err(), "12 digits");
        assert!(Pan::parse("42424242424242424242").is_err(), "20 digits");
    }

    #[test]
    fn phone_needs_plus_and_8_to_15_digits() {
        assert!(Phone::parse("+79001234567").is_ok());
        assert!(Phone::parse("+70000000002").is_ok());
        for bad in [
            "79001234567",
            "+0123456789",
            "+1234567",
            "+1234567890123456",
            "+7900 123",
        ] {
            assert!(Phone::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn sbp_requisites_report_every_missing_or_bad_field() {
        let errors = WithdrawalRequisites::sbp(Some("123"), None, Some("")).expect_err("invalid");
        let fields: Vec<_> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            vec![
                "requisites.phone",
                "requisites.accountName",
                "requisites.bankName"
            ]
        );
    }

    #[test]
    fn card_requisites_are_stored_masked() {
        let req = WithdrawalRequisites::card(Some("4242424242424242"), Some("IVAN IVANOV"))
            .expect("valid");
        let stored = req.to_kept();
        assert_eq!(stored.text("pan"), Some("424242******4242"));
        assert_eq!(stored.text("cardholderName"), Some("IVAN IVANOV"));
        assert_eq!(stored.len(), 2);
    }

    #[test]
    fn card_requisites_refuse_a_bad_pan_and_long_holder() {
        let errors = WithdrawalRequisites::card(Some("4242424242424241"), Some(&"x".repeat(129)))
            .expect_err("invalid");
        assert_eq!(errors.0.len(), 2);
    }

    #[test]
    fn names_in_requisites_refuse_control_characters() {
        let errors = WithdrawalRequisites::sbp(
            Some("+79001234567"),
            Some("Ivan\u{0}Ivanov"),
            Some("Bank\nA"),
        )
        .expect_err("invalid");
        let fields: Vec<_> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["requisites.accountName", "requisites.bankName"]);
        let errors = WithdrawalRequisites::card(Some("4242424242424242"), Some("IVAN\u{7f}"))
            .expect_err("invalid");
        assert_eq!(errors.0[0].field, "requisites.cardholderName");
        assert_eq!(errors.0[0].message, crate::CONTROL_CHARACTERS);
    }
}

/// Card data a user typed on the hosted card page. `Debug` masks the number and hides the CVC.
#[derive(Clone, PartialEq, Eq)]
pub struct CardDetails {
    pub pan: Pan,
    pub expiry_month: u8,
    /// Four-digit year.
    pub expiry_year: u16,
    cvc: String,
}

impl CardDetails {
    /// Checks the number (Luhn), the expiry (`MM/YY`, not before `today`'s month) and the CVC
    /// (3 or 4 digits). Errors are named `pan`, `expiry` and `cvc`.
    pub fn parse(
        pan: &str,
        expiry: &str,
        cvc: &str,
        today: (u16, u8),
    ) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let digits: String = pan.chars().filter(|c| !c.is_whitespace()).collect();
        let pan = errors.check("pan", Pan::parse(&digits));
        let expiry = errors.check("expiry", parse_expiry(expiry, today));
        let cvc_ok = (3..=4).contains(&cvc.len()) && cvc.bytes().all(|b| b.is_ascii_digit());
        if !cvc_ok {
            errors.push("cvc", "must be 3 or 4 digits");
        }
        errors.into_result()?;
        match (pan, expiry) {
            (Some(pan), Some((expiry_year, expiry_month))) => Ok(Self {
                pan,
                expiry_month,
                expiry_year,
                cvc: cvc.to_string(),
            }),
            _ => Err(ValidationErrors::default()),
        }
    }

    /// The CVC, for the provider only: never store or log it.
    pub fn cvc(&self) -> &str {
        &self.cvc
    }
}

impl fmt::Debug for CardDetails {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CardDetails({}, {:02}/{}, cvc ***)",
            self.pan.masked(),
            self.expiry_month,
            self.expiry_year
        )
    }
}

fn parse_expiry(text: &str, (year, month): (u16, u8)) -> Result<(u16, u8), ValueError> {
    let rule = || ValueError::new("must be a future expiry date as MM/YY");
    let (mm, yy) = text.trim().split_once('/').ok_or_else(rule)?;
    let (mm, yy) = (mm.trim(), yy.trim());
    if mm.len() != 2 || yy.len() != 2 {
        return Err(rule());
    }
    let m: u8 = mm.parse().map_err(|_| rule())?;
    let y: u16 = yy.parse::<u16>().map_err(|_| rule())? + 2000;
    if !(1..=12).contains(&m) || (y, m) < (year, month) || y > year + 20 {
        return Err(rule());
    }
    Ok((y, m))
}

#[cfg(test)]
mod card_details_tests {
    use super::*;

    #[test]
    fn card_details_check_luhn_expiry_and_cvc() {
        let card =
            CardDetails::parse("4242 4242 4242 4242", "12/30", "123", (2026, 11)).expect("valid");
        assert_eq!(card.pan.masked(), "424242******4242");
        assert_eq!((card.expiry_year, card.expiry_month), (2030, 12));
        assert!(!format!("{card:?}").contains("123"));
        assert!(CardDetails::parse("4242424242424242", "11/26", "1234", (2026, 11)).is_ok());
    }

    #[test]
    fn card_details_report_every_bad_field() {
        let errors =
            CardDetails::parse("4242424242424241", "10/26", "12", (2026, 11)).expect_err("invalid");
        let fields: Vec<_> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, vec!["pan", "expiry", "cvc"]);
        assert!(CardDetails::parse("4242424242424242", "13/30", "123", (2026, 11)).is_err());
        assert!(CardDetails::parse("4242424242424242", "1230", "123", (2026, 11)).is_err());
    }
}
