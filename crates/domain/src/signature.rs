//! HMAC-SHA256 signatures of requests and callbacks, and request fingerprints.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::merchant::Secret;

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

/// A keyed hash of a canonical request, kept to recognise replays without keeping the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// HMAC-SHA256 of the canonical request under the merchant's secret for its direction.
    pub fn of(secret: &Secret, canonical_request: &[u8]) -> Self {
        Self(sign(secret, canonical_request))
    }

    /// A fingerprint read back from storage.
    pub fn from_stored(hex: String) -> Self {
        Self(hex)
    }

    pub fn as_str(&self) -> &str {
        &self.0
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

    #[test]
    fn fingerprints_depend_on_secret_and_request() {
        let a = Fingerprint::of(&Secret::new("s1"), b"{\"a\":1}");
        assert_eq!(a, Fingerprint::of(&Secret::new("s1"), b"{\"a\":1}"));
        assert_ne!(a, Fingerprint::of(&Secret::new("s2"), b"{\"a\":1}"));
        assert_ne!(a, Fingerprint::of(&Secret::new("s1"), b"{\"a\":2}"));
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
