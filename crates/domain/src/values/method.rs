use std::fmt;

use super::ValueError;
use crate::names::names;

names! {
    /// Which way money moves: taken from a user, or paid out to a recipient.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Direction {
        Deposit = "deposit",
        Withdrawal = "withdrawal",
    }
    else "must be deposit or withdrawal"
}

impl Direction {
    /// The methods allowed in this direction (the field rules of docs/api.md).
    pub fn methods(self) -> &'static [PaymentMethod] {
        use PaymentMethod::*;
        match self {
            Direction::Deposit => &[Card, Sbp, SbpQr, BankAPay, BankBPay, BankCPay],
            Direction::Withdrawal => &[Card, Sbp],
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

names! {
    /// A payment method (docs/api.md). Any known method name parses, whatever the direction.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum PaymentMethod {
        Card = "card",
        Sbp = "sbp",
        SbpQr = "sbp_qr",
        BankAPay = "bank_a_pay",
        BankBPay = "bank_b_pay",
        BankCPay = "bank_c_pay",
    }
    else "unknown payment method"
}

impl PaymentMethod {
    /// A method name valid for `direction` (the field rules of docs/api.md).
    pub fn parse_for(direction: Direction, text: &str) -> Result<Self, ValueError> {
        let allowed = direction.methods();
        allowed
            .iter()
            .copied()
            .find(|m| m.as_str() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = allowed.iter().map(|m| m.as_str()).collect();
                ValueError::new(format!("must be one of {}", names.join(", ")))
            })
    }

    /// Whether the user finishes this method's deposit on a hosted page.
    pub fn is_redirect(self) -> bool {
        match self {
            PaymentMethod::Card
            | PaymentMethod::Sbp
            | PaymentMethod::BankAPay
            | PaymentMethod::BankBPay
            | PaymentMethod::BankCPay => true,
            PaymentMethod::SbpQr => false,
        }
    }
}

impl fmt::Display for PaymentMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// An operation's status; Approved and Declined are final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Approved,
    Declined,
    Processing,
}

impl Status {
    pub fn is_final(self) -> bool {
        match self {
            Status::Approved | Status::Declined => true,
            Status::Processing => false,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Status::Approved => "approved",
            Status::Declined => "declined",
            Status::Processing => "processing",
        }
    }

    /// The status's number, the same in answers, callbacks, events and stored rows:
    /// 1 approved, 2 declined, 3 processing.
    pub const fn number(self) -> u8 {
        match self {
            Status::Approved => 1,
            Status::Declined => 2,
            Status::Processing => 3,
        }
    }

    /// The status numbered `number`; any other number is none.
    pub fn from_number(number: i64) -> Option<Status> {
        match number {
            1 => Some(Status::Approved),
            2 => Some(Status::Declined),
            3 => Some(Status::Processing),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_numbers_round_trip_and_nothing_else_is_a_status() {
        for status in [Status::Approved, Status::Declined, Status::Processing] {
            assert_eq!(
                Status::from_number(i64::from(status.number())),
                Some(status)
            );
        }
        assert_eq!(Status::Approved.number(), 1);
        assert_eq!(Status::Declined.number(), 2);
        assert_eq!(Status::Processing.number(), 3);
        for other in [0, 4, -1, 256] {
            assert_eq!(Status::from_number(other), None);
        }
    }

    #[test]
    fn deposit_methods_are_the_six_of_the_seed() {
        for name in [
            "card",
            "sbp",
            "sbp_qr",
            "bank_a_pay",
            "bank_b_pay",
            "bank_c_pay",
        ] {
            assert_eq!(
                PaymentMethod::parse_for(Direction::Deposit, name).map(|m| m.as_str()),
                Ok(name)
            );
        }
    }

    #[test]
    fn withdrawals_allow_only_card_and_sbp() {
        assert!(PaymentMethod::parse_for(Direction::Withdrawal, "card").is_ok());
        assert!(PaymentMethod::parse_for(Direction::Withdrawal, "sbp").is_ok());
        for name in [
            "sbp_qr",
            "bank_a_pay",
            "bank_b_pay",
            "bank_c_pay",
            "CARD",
            "cash",
            "",
        ] {
            assert!(
                PaymentMethod::parse_for(Direction::Withdrawal, name).is_err(),
                "{name}"
            );
        }
    }

    #[test]
    fn only_approved_and_declined_are_final() {
        assert!(Status::Approved.is_final());
        assert!(Status::Declined.is_final());
        assert!(!Status::Processing.is_final());
    }

    #[test]
    fn sbp_qr_is_the_only_host_to_host_method() {
        let hosted: Vec<_> = PaymentMethod::ALL
            .into_iter()
            .filter(|m| !m.is_redirect())
            .collect();
        assert_eq!(hosted, vec![PaymentMethod::SbpQr]);
    }
}
