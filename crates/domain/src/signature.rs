//! HMAC-SHA256 signatures of requests and callbacks, and request fingerprints.

use std::borrow::Cow;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::merchant::{KeyRing, Merchant, Secret, SigningKey};
use crate::{Direction, Timestamp};

type HmacSha256 = Hmac<Sha256>;

fn mac(secret: &Secret, message: &[u8]) -> HmacSha256 {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac =
        HmacSha256::new_from_slice(secret.expose().as_bytes()).unwrap_or_else(|_| unreachable!());
    mac.update(message);
    mac
}

/// Lower-case hex of HMAC-SHA256(secret, message).
pub fn sign(secret: &Secret, message: &[u8]) -> String {
    hex::encode(mac(secret, message).finalize().into_bytes())
}

/// Whether `signature_hex` (either case) is the signature of `message`, compared in constant time.
pub fn verify(secret: &Secret, message: &[u8], signature_hex: &str) -> bool {
    match hex::decode(signature_hex.trim()) {
        Ok(bytes) => mac(secret, message).verify_slice(&bytes).is_ok(),
        Err(_) => false,
    }
}

/// How far a request's `x-timestamp` may be from the gateway's clock, in seconds.
pub const TIMESTAMP_TOLERANCE_SECS: i64 = 300;

/// A request's credentials as they arrived.
#[derive(Debug, Clone, Copy)]
pub struct SignedRequest<'a> {
    /// `x-signature`, hex in either case.
    pub signature: &'a str,
    /// `x-timestamp` exactly as sent, if it was.
    pub timestamp: Option<&'a str>,
    /// What the request signs: the raw body, or for a GET the path with its query.
    pub message: &'a [u8],
}

/// Why a request's credentials are refused. Every reason answers the same 401; the reason is
/// only logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The merchant requires `x-timestamp` and there is none.
    MissingTimestamp,
    /// `x-timestamp` is not a decimal integer of Unix seconds.
    MalformedTimestamp,
    /// `x-timestamp` is more than [`TIMESTAMP_TOLERANCE_SECS`] from the gateway's clock.
    StaleTimestamp,
    /// No live secret of the direction made this signature.
    Signature,
}

impl Refusal {
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::MissingTimestamp => "required timestamp missing",
            Refusal::MalformedTimestamp => "malformed timestamp",
            Refusal::StaleTimestamp => "timestamp outside the window",
            Refusal::Signature => "signature refused",
        }
    }
}

/// Unix seconds from `x-timestamp`: ASCII digits only (no sign, no spaces), at most 15 of them.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    if text.is_empty() || text.len() > 15 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// What the signature covers: `"{timestamp}.{message}"` when a timestamp was sent, else the
/// message itself.
pub fn signed_message<'a>(timestamp: Option<&str>, message: &'a [u8]) -> Cow<'a, [u8]> {
    match timestamp {
        Some(stamp) => {
            let mut out = Vec::with_capacity(stamp.len() + 1 + message.len());
            out.extend_from_slice(stamp.as_bytes());
            out.push(b'.');
            out.extend_from_slice(message);
            Cow::Owned(out)
        }
        None => Cow::Borrowed(message),
    }
}

/// Checks `request` against the merchant's live secrets of `direction` at `now`: the
/// timestamp rule first, then the signature, tried with every live secret (each compared in
/// constant time, none skipped).
pub fn authenticate(
    merchant: &Merchant,
    direction: Direction,
    request: &SignedRequest<'_>,
    now: Timestamp,
) -> Result<(), Refusal> {
    match request.timestamp {
        None if merchant.require_timestamp => return Err(Refusal::MissingTimestamp),
        None => {}
        Some(text) => {
            let stamp = parse_timestamp(text).ok_or(Refusal::MalformedTimestamp)?;
            let now_secs = now.millis().div_euclid(1000);
            if (now_secs - stamp).abs() > TIMESTAMP_TOLERANCE_SECS {
                return Err(Refusal::StaleTimestamp);
            }
        }
    }
    let message = signed_message(request.timestamp, request.message);
    let matched = merchant
        .keys(direction)
        .live(now)
        .fold(false, |found, key| {
            verify(&key.secret, &message, request.signature) | found
        });
    if matched {
        Ok(())
    } else {
        Err(Refusal::Signature)
    }
}

/// A keyed hash of a canonical request, kept to recognise replays without keeping the
/// request, with the version of the secret that keyed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    hex: String,
    key_version: i32,
}

impl Fingerprint {
    /// HMAC-SHA256 of the canonical request under `key` (the newest secret of its direction).
    pub fn of(key: &SigningKey, canonical_request: &[u8]) -> Self {
        Self {
            hex: sign(&key.secret, canonical_request),
            key_version: key.version,
        }
    }

    /// A fingerprint read back from storage.
    pub fn from_stored(hex: String, key_version: i32) -> Self {
        Self { hex, key_version }
    }

    pub fn as_str(&self) -> &str {
        &self.hex
    }

    /// The version of the secret that keyed it.
    pub fn key_version(&self) -> i32 {
        self.key_version
    }

    /// Whether `canonical_request` is the request this was made of, hashed again with the
    /// secret that keyed it, even one revoked since. A secret that is gone matches nothing.
    pub fn matches(&self, keys: &KeyRing, canonical_request: &[u8]) -> bool {
        keys.version(self.key_version)
            .is_some_and(|key| verify(&key.secret, canonical_request, &self.hex))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_like_openssl_dgst() {
        // printf 'hello' | openssl dgst -sha256 -hmac key
        let secret = Secret::new("key");
        assert_eq!(
            sign(&secret, b"hello"),
            "9307b3b915efb5171ff14d8cb55fbcc798c6c0ef1456d66ded1a6aa723a58b7b"
        );
    }

    #[test]
    fn verifies_either_hex_case_and_refuses_others() {
        let secret = Secret::new("key");
        let good = sign(&secret, b"body");
        assert!(verify(&secret, b"body", &good));
        assert!(verify(&secret, b"body", &good.to_uppercase()));
        assert!(!verify(&secret, b"body!", &good));
        assert!(!verify(&Secret::new("other"), b"body", &good));
        assert!(!verify(&secret, b"body", "zz"));
        assert!(!verify(&secret, b"body", ""));
    }

    fn key(version: i32, secret: &str, expires_at: Option<i64>) -> SigningKey {
        SigningKey {
            version,
            secret: Secret::new(secret),
            created_at: Timestamp::from_millis(0),
            expires_at: expires_at.map(|secs| Timestamp::from_millis(secs * 1000)),
        }
    }

    #[test]
    fn fingerprints_depend_on_secret_and_request() {
        let a = Fingerprint::of(&key(1, "s1", None), b"{\"a\":1}");
        assert_eq!(a, Fingerprint::of(&key(1, "s1", None), b"{\"a\":1}"));
        assert_ne!(a, Fingerprint::of(&key(1, "s2", None), b"{\"a\":1}"));
        assert_ne!(a, Fingerprint::of(&key(1, "s1", None), b"{\"a\":2}"));
        assert_eq!(a.key_version(), 1);
    }

    #[test]
    fn a_fingerprint_is_checked_with_the_secret_that_keyed_it_even_revoked() {
        let old = key(1, "old", Some(10));
        let print = Fingerprint::of(&old, b"request");
        let ring = KeyRing::new(vec![key(2, "new", None), old]).expect("ring");
        assert!(print.matches(&ring, b"request"));
        assert!(!print.matches(&ring, b"other request"));
        let without = KeyRing::new(vec![key(2, "new", None)]).expect("ring");
        assert!(!print.matches(&without, b"request"));
    }

    fn merchant(keys: Vec<SigningKey>, require_timestamp: bool) -> Merchant {
        let ring = KeyRing::new(keys).expect("ring");
        Merchant {
            id: crate::MerchantId::parse("m-1").expect("id"),
            name: "shop".into(),
            deposit_keys: ring.clone(),
            withdrawal_keys: KeyRing::single(Secret::new("withdrawal"), Timestamp::from_millis(0)),
            access: crate::merchant::full_access(),
            enabled: true,
            require_timestamp,
        }
    }

    fn check(
        merchant: &Merchant,
        signature: &str,
        timestamp: Option<&str>,
        now_secs: i64,
    ) -> Result<(), Refusal> {
        let request = SignedRequest {
            signature,
            timestamp,
            message: b"{}",
        };
        authenticate(
            merchant,
            Direction::Deposit,
            &request,
            Timestamp::from_millis(now_secs * 1000 + 999),
        )
    }

    #[test]
    fn every_live_secret_authenticates_and_an_ended_one_does_not() {
        let shop = merchant(vec![key(2, "new", None), key(1, "old", Some(100))], false);
        let by_new = sign(&Secret::new("new"), b"{}");
        let by_old = sign(&Secret::new("old"), b"{}");
        assert_eq!(check(&shop, &by_new, None, 50), Ok(()));
        assert_eq!(check(&shop, &by_old, None, 99), Ok(()));
        assert_eq!(check(&shop, &by_old, None, 100), Err(Refusal::Signature));
        assert_eq!(check(&shop, &by_new, None, 100), Ok(()));
        let by_withdrawal = sign(&Secret::new("withdrawal"), b"{}");
        assert_eq!(
            check(&shop, &by_withdrawal, None, 50),
            Err(Refusal::Signature)
        );
    }

    #[test]
    fn a_timestamp_is_signed_with_the_body_and_kept_within_300_seconds() {
        let shop = merchant(vec![key(1, "s", None)], false);
        let signed = |stamp: &str| sign(&Secret::new("s"), format!("{stamp}.{{}}").as_bytes());
        let now = 1_000_000;
        for stamp in [now - 300, now, now + 300] {
            let text = stamp.to_string();
            assert_eq!(
                check(&shop, &signed(&text), Some(&text), now),
                Ok(()),
                "{stamp}"
            );
        }
        for stamp in [now - 301, now + 301] {
            let text = stamp.to_string();
            assert_eq!(
                check(&shop, &signed(&text), Some(&text), now),
                Err(Refusal::StaleTimestamp)
            );
        }
        let text = now.to_string();
        // The timestamp is part of what is signed: the bare body's signature no longer fits.
        let bare = sign(&Secret::new("s"), b"{}");
        assert_eq!(
            check(&shop, &bare, Some(&text), now),
            Err(Refusal::Signature)
        );
        for junk in [
            "",
            "-5",
            "+1000000",
            "1e6",
            " 1000000",
            "1000000.0",
            "0x10",
            "9999999999999999",
        ] {
            assert_eq!(
                check(&shop, &signed(junk), Some(junk), now),
                Err(Refusal::MalformedTimestamp),
                "{junk:?}"
            );
        }
    }

    #[test]
    fn a_required_timestamp_must_be_sent() {
        let shop = merchant(vec![key(1, "s", None)], true);
        let bare = sign(&Secret::new("s"), b"{}");
        assert_eq!(
            check(&shop, &bare, None, 10),
            Err(Refusal::MissingTimestamp)
        );
        let stamped = sign(&Secret::new("s"), b"10.{}");
        assert_eq!(check(&shop, &stamped, Some("10"), 10), Ok(()));
    }

    mod properties {
        use proptest::prelude::*;

        use super::*;

        proptest! {
            /// A signature verifies in either hex case; any other text, however close, does not;
            /// nothing panics.
            #[test]
            fn only_the_right_signature_verifies(
                key in "[ -~]{1,80}",
                message in proptest::collection::vec(any::<u8>(), 0..512),
                flip in 0usize..64,
                junk in any::<String>(),
            ) {
                let secret = Secret::new(key);
                let good = sign(&secret, &message);
                prop_assert!(verify(&secret, &message, &good));
                prop_assert!(verify(&secret, &message, &good.to_ascii_uppercase()));
                let mut changed = good.clone().into_bytes();
                changed[flip] = if changed[flip] == b'0' { b'1' } else { b'0' };
                let changed = String::from_utf8(changed).expect("hex");
                prop_assert!(!verify(&secret, &message, &changed));
                prop_assert!(!verify(&secret, &message, &good[..63]));
                prop_assert_eq!(verify(&secret, &message, &junk), junk.trim().eq_ignore_ascii_case(&good));
                let mut longer = message.clone();
                longer.push(0);
                prop_assert!(!verify(&secret, &longer, &good));
            }
        }
    }
}
