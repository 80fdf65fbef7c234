//! Merchants, their secrets and what they may do.

use std::collections::BTreeSet;
use std::fmt;

use crate::{Direction, MerchantId, PaymentMethod, Timestamp};

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

/// One signing secret of a merchant's direction. Versions count from 1 per merchant and
/// direction; a rotation adds the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningKey {
    pub version: i32,
    pub secret: Secret,
    pub created_at: Timestamp,
    /// When the secret stops authenticating requests; `None`: not before a rotation. A secret
    /// past its end is kept only to recognise replays of requests it keyed.
    pub expires_at: Option<Timestamp>,
}

impl SigningKey {
    /// The first secret of a direction, live until a rotation.
    pub fn first(secret: Secret, at: Timestamp) -> Self {
        Self {
            version: 1,
            secret,
            created_at: at,
            expires_at: None,
        }
    }

    /// Whether the secret still authenticates requests at `now`.
    pub fn is_live(&self, now: Timestamp) -> bool {
        match self.expires_at {
            None => true,
            Some(end) => end > now,
        }
    }
}

/// Why a direction's secrets cannot be kept as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyRingError {
    #[error("a direction needs at least one secret")]
    Empty,
    #[error("two secrets share version {0}")]
    SameVersion(i32),
}

/// Every secret of one merchant direction, newest (highest version) first, the revoked ones
/// included. Never empty; the newest one is always live (a rotation never ends it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRing(Vec<SigningKey>);

impl KeyRing {
    /// The ring of these keys, in any order.
    pub fn new(mut keys: Vec<SigningKey>) -> Result<Self, KeyRingError> {
        keys.sort_by_key(|key| std::cmp::Reverse(key.version));
        if let Some(pair) = keys
            .windows(2)
            .find(|pair| pair[0].version == pair[1].version)
        {
            return Err(KeyRingError::SameVersion(pair[0].version));
        }
        if keys.is_empty() {
            return Err(KeyRingError::Empty);
        }
        Ok(Self(keys))
    }

    /// A ring of one first secret.
    pub fn single(secret: Secret, at: Timestamp) -> Self {
        Self(vec![SigningKey::first(secret, at)])
    }

    /// The newest secret: it signs callbacks and keys new fingerprints.
    pub fn newest(&self) -> &SigningKey {
        &self.0[0]
    }

    /// The secrets that authenticate requests at `now`, newest first.
    pub fn live(&self, now: Timestamp) -> impl Iterator<Item = &SigningKey> {
        self.0.iter().filter(move |key| key.is_live(now))
    }

    /// The secret of this version, live or revoked (for replay checks only).
    pub fn version(&self, version: i32) -> Option<&SigningKey> {
        self.0.iter().find(|key| key.version == version)
    }

    /// Every secret, newest first.
    pub fn keys(&self) -> &[SigningKey] {
        &self.0
    }

    /// When the last older live secret stops working; `None` when only the newest is live.
    pub fn old_secret_expires_at(&self, now: Timestamp) -> Option<Timestamp> {
        self.0[1..]
            .iter()
            .filter(|key| key.is_live(now))
            .filter_map(|key| key.expires_at)
            .max()
    }
}

/// A merchant as the gateway knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merchant {
    pub id: MerchantId,
    pub name: String,
    pub deposit_keys: KeyRing,
    pub withdrawal_keys: KeyRing,
    /// The (direction, method) pairs the merchant may use.
    pub access: BTreeSet<(Direction, PaymentMethod)>,
    pub enabled: bool,
    /// Every request must carry `x-timestamp`.
    pub require_timestamp: bool,
    /// Every request must be signed with version 2 (bound to its method and path).
    pub require_signature_v2: bool,
}

/// A change to a merchant's signing rules; `None` leaves a rule as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SigningRulesChange {
    pub require_timestamp: Option<bool>,
    pub require_signature_v2: Option<bool>,
}

impl SigningRulesChange {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.require_timestamp.is_none() && self.require_signature_v2.is_none()
    }
}

impl Merchant {
    /// The secrets of `direction` (the signing rules of docs/api.md).
    pub fn keys(&self, direction: Direction) -> &KeyRing {
        match direction {
            Direction::Deposit => &self.deposit_keys,
            Direction::Withdrawal => &self.withdrawal_keys,
        }
    }

    /// The newest secret of `direction`: it signs callbacks.
    pub fn signing_secret(&self, direction: Direction) -> &Secret {
        &self.keys(direction).newest().secret
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

/// A rotation as the store applies it, in one transaction: the next version of the
/// direction's secrets is `secret`, created `at`; every older secret still live at
/// `older_end` ends then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRotation {
    pub merchant: MerchantId,
    pub direction: Direction,
    pub secret: Secret,
    pub at: Timestamp,
    pub older_end: Timestamp,
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

    fn key(version: i32, expires_at: Option<i64>) -> SigningKey {
        SigningKey {
            version,
            secret: Secret::new(format!("s{version}")),
            created_at: Timestamp::from_millis(0),
            expires_at: expires_at.map(Timestamp::from_millis),
        }
    }

    #[test]
    fn a_ring_is_newest_first_and_knows_its_live_secrets() {
        let ring =
            KeyRing::new(vec![key(1, Some(50)), key(3, None), key(2, Some(80))]).expect("ring");
        assert_eq!(ring.newest().version, 3);
        let live = |now| {
            ring.live(Timestamp::from_millis(now))
                .map(|k| k.version)
                .collect::<Vec<_>>()
        };
        assert_eq!(live(10), vec![3, 2, 1]);
        assert_eq!(live(50), vec![3, 2]);
        assert_eq!(live(80), vec![3]);
        assert_eq!(
            ring.old_secret_expires_at(Timestamp::from_millis(10)),
            Some(Timestamp::from_millis(80))
        );
        assert_eq!(ring.old_secret_expires_at(Timestamp::from_millis(80)), None);
        assert_eq!(ring.version(1).map(|k| k.version), Some(1));
        assert!(ring.version(4).is_none());
    }

    #[test]
    fn a_ring_is_never_empty_and_versions_are_distinct() {
        assert_eq!(KeyRing::new(Vec::new()), Err(KeyRingError::Empty));
        assert_eq!(
            KeyRing::new(vec![key(1, None), key(1, Some(5))]),
            Err(KeyRingError::SameVersion(1))
        );
    }

    #[test]
    fn secrets_do_not_print() {
        let secret = Secret::new("00ff");
        assert!(!format!("{secret:?}").contains("00ff"));
    }
}
