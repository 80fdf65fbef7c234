//! HMAC-SHA256 signatures of requests and callbacks, and request fingerprints.

use std::borrow::Cow;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::merchant::{KeyRing, Merchant, Secret, SigningKey};
use crate::{Direction, Timestamp};

type HmacSha256 = Hmac<Sha256>;

fn mac(secret: &Secret, message: &[u8]) -> HmacSha256 {
    keyed_mac(secret.expose().as_bytes(), message)
}

fn keyed_mac(key: &[u8], message: &[u8]) -> HmacSha256 {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = HmacSha256::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(message);
    mac
}

/// The `webhook-signature` header of the Standard Webhooks specification: `v1,` + base64 of
/// HMAC-SHA256 over `"{id}.{timestamp}.{body}"`, one per secret (the live ones of a rotation
/// overlap, newest first), separated by spaces. Keyed by each secret's UTF-8 bytes, so a
/// merchant's Standard Webhooks key is `whsec_` + base64 of its secret.
pub fn webhook_signatures<'a>(
    secrets: impl IntoIterator<Item = &'a Secret>,
    id: &str,
    timestamp: &str,
    body: &[u8],
) -> String {
    secrets
        .into_iter()
        .map(|secret| webhook_signature(secret.expose().as_bytes(), id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One `v1,` signature keyed by the raw bytes `key`.
fn webhook_signature(key: &[u8], id: &str, timestamp: &str, body: &[u8]) -> String {
    let mut mac = keyed_mac(key, id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()))
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

/// The one value of `x-signature-version` besides its absence (version 1).
pub const SIGNATURE_VERSION_2: &str = "2";

/// Which requests a path lets a version-1 signature make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// A creation, a read or a look-up: either version.
    Any,
    /// A POST whose path names an existing object (a cancel, a refund, an input or a
    /// confirmation): version 2 only, so that a captured signature cannot act on another
    /// object (a version-1 signature covers the body alone, and `{}` is every cancel's body).
    Object,
}

/// A request's credentials as they arrived.
#[derive(Debug, Clone, Copy)]
pub struct SignedRequest<'a> {
    /// `x-signature`, hex in either case.
    pub signature: &'a str,
    /// `x-timestamp` exactly as sent, if it was.
    pub timestamp: Option<&'a str>,
    /// `x-signature-version` exactly as sent, if it was: only `2` is a version.
    pub version: Option<&'a str>,
    /// The HTTP method, upper case.
    pub method: &'a str,
    /// The path with its query string, exactly as sent.
    pub target: &'a str,
    /// The raw body (empty for a GET).
    pub body: &'a [u8],
    /// What the path allows.
    pub binding: Binding,
}

/// The signing scheme a request uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// The body (a GET: the path and query), optionally `"{timestamp}."` before it.
    V1,
    /// `"{timestamp}\n{METHOD}\n{path and query}\n{body}"`: bound to the method and path.
    V2,
}

impl<'a> SignedRequest<'a> {
    /// The scheme `x-signature-version` names; any value but `2` names none.
    pub fn version(&self) -> Result<Version, Refusal> {
        match self.version {
            None => Ok(Version::V1),
            Some(SIGNATURE_VERSION_2) => Ok(Version::V2),
            Some(_) => Err(Refusal::UnknownVersion),
        }
    }

    /// The bytes the signature covers under `version`.
    pub fn message(&self, version: Version) -> Cow<'a, [u8]> {
        match version {
            Version::V1 if self.method == "GET" => {
                signed_message(self.timestamp, self.target.as_bytes())
            }
            Version::V1 => signed_message(self.timestamp, self.body),
            Version::V2 => Cow::Owned(bound_message(
                self.timestamp.unwrap_or_default(),
                self.method,
                self.target,
                self.body,
            )),
        }
    }
}

/// Why a request's credentials are refused. Every reason answers the same 401; the reason is
/// only logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `x-signature-version` has a value other than `2`.
    UnknownVersion,
    /// A version-1 signature on a path that names an object.
    VersionRequiredByPath,
    /// A version-1 signature from a merchant that requires version 2.
    VersionRequiredByMerchant,
    /// The merchant requires `x-timestamp`, or the request is signed with version 2, and
    /// there is none.
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
            Refusal::UnknownVersion => "unknown signature version",
            Refusal::VersionRequiredByPath => "signature version 2 required on this path",
            Refusal::VersionRequiredByMerchant => "signature version 2 required by the merchant",
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

/// What a version-1 signature covers: `"{timestamp}.{message}"` when a timestamp was sent,
/// else the message itself. Callbacks' `x-signature-v2` covers the same.
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

/// What a version-2 signature covers: `"{timestamp}\n{METHOD}\n{path and query}\n{body}"`.
pub fn bound_message(timestamp: &str, method: &str, target: &str, body: &[u8]) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(timestamp.len() + method.len() + target.len() + body.len() + 3);
    for part in [timestamp.as_bytes(), method.as_bytes(), target.as_bytes()] {
        out.extend_from_slice(part);
        out.push(b'\n');
    }
    out.extend_from_slice(body);
    out
}

/// Checks `request` against the merchant's live secrets of `direction` at `now`: the
/// version's rules first (a known version; version 2 where the path or the merchant requires
/// it), then the timestamp rule (required by the merchant and by version 2), then the
/// signature, tried with every live secret (each compared in constant time, none skipped).
pub fn authenticate(
    merchant: &Merchant,
    direction: Direction,
    request: &SignedRequest<'_>,
    now: Timestamp,
) -> Result<(), Refusal> {
    let version = request.version()?;
    if version == Version::V1 {
        if request.binding == Binding::Object {
            return Err(Refusal::VersionRequiredByPath);
        }
        if merchant.require_signature_v2 {
            return Err(Refusal::VersionRequiredByMerchant);
        }
    }
    match request.timestamp {
        None if merchant.require_timestamp || version == Version::V2 => {
            return Err(Refusal::MissingTimestamp)
        }
        None => {}
        Some(text) => {
            let stamp = parse_timestamp(text).ok_or(Refusal::MalformedTimestamp)?;
            let now_secs = now.millis().div_euclid(1000);
            if (now_secs - stamp).abs() > TIMESTAMP_TOLERANCE_SECS {
                return Err(Refusal::StaleTimestamp);
            }
        }
    }
    let message = request.message(version);
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
    fn webhook_signatures_match_the_standard_webhooks_example() {
        // The specification's own example: its key is base64 in `whsec_...`.
        let key = BASE64
            .decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
            .expect("base64");
        assert_eq!(
            webhook_signature(
                &key,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                "1614265330",
                br#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn webhook_signatures_sign_once_per_secret_keyed_by_its_bytes() {
        let (new, old) = (Secret::new("new-secret"), Secret::new("old-secret"));
        let both = webhook_signatures([&new, &old], "id", "1", b"{}");
        let parts: Vec<&str> = both.split(' ').collect();
        assert_eq!(
            parts,
            [
                webhook_signature(b"new-secret", "id", "1", b"{}"),
                webhook_signature(b"old-secret", "id", "1", b"{}")
            ]
        );
        assert!(parts.iter().all(|p| p.starts_with("v1,")));
    }

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
            require_signature_v2: false,
        }
    }

    /// A version-1 creation (`POST /api/v1/deposits` with `{}`).
    fn check(
        merchant: &Merchant,
        signature: &str,
        timestamp: Option<&str>,
        now_secs: i64,
    ) -> Result<(), Refusal> {
        let request = SignedRequest {
            signature,
            timestamp,
            version: None,
            method: "POST",
            target: "/api/v1/deposits",
            body: b"{}",
            binding: Binding::Any,
        };
        authenticate(
            merchant,
            Direction::Deposit,
            &request,
            Timestamp::from_millis(now_secs * 1000 + 999),
        )
    }

    const CANCEL_A: &str = "/api/v1/deposits/0190d7c4-5b1e-7000-8000-00000000000a/cancel";
    const CANCEL_B: &str = "/api/v1/deposits/0190d7c4-5b1e-7000-8000-00000000000b/cancel";

    /// A request with every part given.
    fn request<'a>(
        signature: &'a str,
        timestamp: Option<&'a str>,
        version: Option<&'a str>,
        method: &'a str,
        target: &'a str,
        binding: Binding,
    ) -> SignedRequest<'a> {
        let body: &[u8] = if method == "GET" { b"" } else { b"{}" };
        SignedRequest {
            signature,
            timestamp,
            version,
            method,
            target,
            body,
            binding,
        }
    }

    fn at(now_secs: i64) -> Timestamp {
        Timestamp::from_millis(now_secs * 1000)
    }

    fn v2(secret: &str, stamp: &str, method: &str, target: &str, body: &str) -> String {
        sign(
            &Secret::new(secret),
            format!("{stamp}\n{method}\n{target}\n{body}").as_bytes(),
        )
    }

    #[test]
    fn version_2_signs_timestamp_method_path_and_body() {
        let shop = merchant(vec![key(1, "s", None)], false);
        let now = 1_000_000;
        let stamp = now.to_string();
        let good = v2("s", &stamp, "POST", CANCEL_A, "{}");
        let cancel_a = request(
            &good,
            Some(&stamp),
            Some("2"),
            "POST",
            CANCEL_A,
            Binding::Object,
        );
        assert_eq!(
            authenticate(&shop, Direction::Deposit, &cancel_a, at(now)),
            Ok(())
        );
        // The same signature names one path: replayed on another operation, it fails.
        let cancel_b = request(
            &good,
            Some(&stamp),
            Some("2"),
            "POST",
            CANCEL_B,
            Binding::Object,
        );
        assert_eq!(
            authenticate(&shop, Direction::Deposit, &cancel_b, at(now)),
            Err(Refusal::Signature)
        );
        // ... and one method.
        let as_get = request(
            &good,
            Some(&stamp),
            Some("2"),
            "GET",
            CANCEL_A,
            Binding::Any,
        );
        assert_eq!(
            authenticate(&shop, Direction::Deposit, &as_get, at(now)),
            Err(Refusal::Signature)
        );
        // A GET signs an empty body.
        let read = "/api/v1/deposits/0190d7c4-5b1e-7000-8000-00000000000a?x=%41";
        let get = v2("s", &stamp, "GET", read, "");
        let by_get = request(&get, Some(&stamp), Some("2"), "GET", read, Binding::Any);
        assert_eq!(
            authenticate(&shop, Direction::Deposit, &by_get, at(now)),
            Ok(())
        );
        assert_eq!(
            bound_message("5", "POST", "/p?q", b"{}"),
            b"5\nPOST\n/p?q\n{}".to_vec()
        );
    }

    #[test]
    fn version_2_needs_a_fresh_timestamp() {
        let shop = merchant(vec![key(1, "s", None)], false);
        let now = 1_000_000;
        let no_stamp = v2("s", "", "POST", CANCEL_A, "{}");
        let bare = request(
            &no_stamp,
            None,
            Some("2"),
            "POST",
            CANCEL_A,
            Binding::Object,
        );
        assert_eq!(
            authenticate(&shop, Direction::Deposit, &bare, at(now)),
            Err(Refusal::MissingTimestamp)
        );
        let old = (now - 301).to_string();
        let stale = v2("s", &old, "POST", CANCEL_A, "{}");
        let late = request(
            &stale,
            Some(&old),
            Some("2"),
            "POST",
            CANCEL_A,
            Binding::Object,
        );
        assert_eq!(
            authenticate(&shop, Direction::Deposit, &late, at(now)),
            Err(Refusal::StaleTimestamp)
        );
    }

    #[test]
    fn a_path_naming_an_object_refuses_version_1() {
        let shop = merchant(vec![key(1, "s", None)], false);
        let now = 1_000_000;
        let stamp = now.to_string();
        for (signature, timestamp) in [
            (sign(&Secret::new("s"), b"{}"), None),
            (
                sign(&Secret::new("s"), format!("{stamp}.{{}}").as_bytes()),
                Some(stamp.as_str()),
            ),
        ] {
            let v1 = request(
                &signature,
                timestamp,
                None,
                "POST",
                CANCEL_A,
                Binding::Object,
            );
            assert_eq!(
                authenticate(&shop, Direction::Deposit, &v1, at(now)),
                Err(Refusal::VersionRequiredByPath)
            );
            let creation = request(
                &signature,
                timestamp,
                None,
                "POST",
                "/api/v1/deposits",
                Binding::Any,
            );
            assert_eq!(
                authenticate(&shop, Direction::Deposit, &creation, at(now)),
                Ok(())
            );
        }
    }

    #[test]
    fn a_merchant_may_require_version_2_everywhere() {
        let mut shop = merchant(vec![key(1, "s", None)], false);
        shop.require_signature_v2 = true;
        let now = 1_000_000;
        let stamp = now.to_string();
        let target = "/api/v1/balance";
        let v1 = sign(&Secret::new("s"), target.as_bytes());
        let by_v1 = request(&v1, None, None, "GET", target, Binding::Any);
        assert_eq!(
            authenticate(&shop, Direction::Deposit, &by_v1, at(now)),
            Err(Refusal::VersionRequiredByMerchant)
        );
        let good = v2("s", &stamp, "GET", target, "");
        let by_v2 = request(&good, Some(&stamp), Some("2"), "GET", target, Binding::Any);
        assert_eq!(
            authenticate(&shop, Direction::Deposit, &by_v2, at(now)),
            Ok(())
        );
    }

    #[test]
    fn only_version_2_is_a_version() {
        let shop = merchant(vec![key(1, "s", None)], false);
        let now = 1_000_000;
        let stamp = now.to_string();
        for version in ["1", "3", "", " 2", "2 ", "v2", "02"] {
            let good = v2("s", &stamp, "POST", "/api/v1/deposits", "{}");
            let sent = request(
                &good,
                Some(&stamp),
                Some(version),
                "POST",
                "/api/v1/deposits",
                Binding::Any,
            );
            assert_eq!(
                authenticate(&shop, Direction::Deposit, &sent, at(now)),
                Err(Refusal::UnknownVersion),
                "{version:?}"
            );
        }
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
