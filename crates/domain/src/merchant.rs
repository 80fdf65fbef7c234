//! Merchants, their secrets and what they may do.

use std::collections::BTreeSet;
use std::fmt;

use crate::{Direction, MerchantId, PaymentMethod};

/// A signing secret: 64 hex characters. `Debug` never prints it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret's text, for signing only: never log or return it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(**redacted**)")
    }
}

/// A merchant as the gateway knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merchant {
    pub id: MerchantId,
    pub name: String,
    pub deposit_secret: Secret,
    pub withdrawal_secret: Secret,
    /// The (direction, method) pairs the merchant may use.
    pub access: BTreeSet<(Direction, PaymentMethod)>,
    pub enabled: bool,
}

impl Merchant {
    /// The secret that signs requests and callbacks of `direction` (the signing rules of docs/api.md).
    pub fn secret_for(&self, direction: Direction) -> &Secret {
        match direction {
            Direction::Deposit => &self.deposit_secret,
            Direction::Withdrawal => &self.withdrawal_secret,
        }
    }

    /// Whether the merchant may use `method` in `direction`.
    pub fn may_use(&self, direction: Direction, method: PaymentMethod) -> bool {
        self.access.contains(&(direction, method))
    }
}

/// Every method in both directions: the default access of a new merchant.
pub fn full_access() -> BTreeSet<(Direction, PaymentMethod)> {
    Direction::ALL
        .into_iter()
        .flat_map(|d| d.methods().iter().map(move |m| (d, *m)))
        .collect()
}

/// Parses `deposit:card,withdrawal:sbp` into access pairs; each item must be a valid pair.
pub fn parse_access(text: &str) -> Result<BTreeSet<(Direction, PaymentMethod)>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| {
            let (d, m) = item
                .split_once(':')
                .ok_or_else(|| format!("{item:?}: expected DIRECTION:METHOD, e.g. deposit:card"))?;
            let direction = Direction::parse(d).map_err(|e| format!("{item:?}: {e}"))?;
            let method =
                PaymentMethod::parse_for(direction, m).map_err(|e| format!("{item:?}: {e}"))?;
            Ok((direction, method))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_access_has_eight_pairs() {
        assert_eq!(full_access().len(), 8);
    }

    #[test]
    fn access_list_parses_and_refuses_unknown_pairs() {
        let access = parse_access("deposit:card, withdrawal:sbp").expect("valid");
        assert!(access.contains(&(Direction::Deposit, PaymentMethod::Card)));
        assert!(access.contains(&(Direction::Withdrawal, PaymentMethod::Sbp)));
        assert!(parse_access("withdrawal:sbp_qr").is_err());
        assert!(parse_access("card").is_err());
    }

    #[test]
    fn secrets_do_not_print() {
        let secret = Secret::new("00ff");
        assert!(!format!("{secret:?}").contains("00ff"));
    }
}
