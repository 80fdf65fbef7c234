//! The `x-acquirer-signature` header of notifications.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Lower-case hex HMAC-SHA256 of `body`, keyed with the webhook secret's UTF-8 bytes.
pub fn sign(secret: &str, body: &[u8]) -> String {
    #[allow(clippy::expect_used)]
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_rfc_4231_vector() {
        // RFC 4231 test case 2: key "Jefe".
        assert_eq!(
            sign("Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn depends_on_secret_and_body() {
        assert_ne!(sign("a", b"x"), sign("b", b"x"));
        assert_ne!(sign("a", b"x"), sign("a", b"y"));
    }
}
