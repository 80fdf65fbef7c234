//! Signing requests as a merchant does, written apart from the gateway's own code so that a
//! test catches a gateway that drifts from its documented scheme.
//!
//! * Version 1: `x-signature` = hex HMAC-SHA256(secret, body) (a GET: the path and query);
//!   with `x-timestamp`, over `"{timestamp}.{body}"`.
//! * Version 2 (`x-signature-version: 2`): over `"{timestamp}\n{METHOD}\n{path and
//!   query}\n{body}"`, `x-timestamp` required. Required on every POST whose path names an
//!   existing object.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How a request is signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Version 1 without a timestamp.
    V1,
    /// Version 1 with `x-timestamp`.
    V1Stamped,
    /// Version 2.
    V2,
}

/// Lower-case hex of HMAC-SHA256(secret, message).
pub fn hmac_hex(secret: &str, message: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(message);
    hex::encode(mac.finalize().into_bytes())
}

/// Whether a request must be signed with version 2 whatever the merchant's rule: a POST to
/// `/api/v1/{deposits|withdrawals}/{id}/...` (a cancel, a refund, an input, a confirmation),
/// `/api/v1/disputes/{id}/...` or under `/api/v1/callbacks`.
pub fn names_object(method: &str, target: &str) -> bool {
    if method != "POST" {
        return false;
    }
    let path = target.split('?').next().unwrap_or(target);
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    matches!(
        parts.as_slice(),
        [
            "api",
            "v1",
            "deposits" | "withdrawals" | "disputes",
            _,
            _,
            ..
        ] | ["api", "v1", "callbacks", ..]
    )
}

/// Unix seconds now.
pub fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The headers that sign a request under `scheme` at `timestamp` (Unix seconds): always
/// `x-signature`, and `x-timestamp` and `x-signature-version` as the scheme has them.
pub fn signature_headers(
    secret: &str,
    scheme: Scheme,
    method: &str,
    target: &str,
    body: &[u8],
    timestamp: i64,
) -> Vec<(&'static str, String)> {
    let stamp = timestamp.to_string();
    let v1_message: &[u8] = if method == "GET" {
        target.as_bytes()
    } else {
        body
    };
    match scheme {
        Scheme::V1 => vec![("x-signature", hmac_hex(secret, v1_message))],
        Scheme::V1Stamped => {
            let mut message = format!("{stamp}.").into_bytes();
            message.extend_from_slice(v1_message);
            vec![
                ("x-signature", hmac_hex(secret, &message)),
                ("x-timestamp", stamp),
            ]
        }
        Scheme::V2 => {
            let mut message = format!("{stamp}\n{method}\n{target}\n").into_bytes();
            message.extend_from_slice(body);
            vec![
                ("x-signature", hmac_hex(secret, &message)),
                ("x-timestamp", stamp),
                ("x-signature-version", "2".to_string()),
            ]
        }
    }
}

/// The scheme a merchant's client uses when it prefers `preferred`: version 2 where the path
/// requires it, else `preferred`.
pub fn scheme_for(preferred: Scheme, method: &str, target: &str) -> Scheme {
    if names_object(method, target) {
        Scheme::V2
    } else {
        preferred
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_openssl() {
        // printf 'hello' | openssl dgst -sha256 -hmac key
        assert_eq!(
            hmac_hex("key", b"hello"),
            "9307b3b915efb5171ff14d8cb55fbcc798c6c0ef1456d66ded1a6aa723a58b7b"
        );
    }

    #[test]
    fn object_paths_need_version_2() {
        for (method, target, object) in [
            ("POST", "/api/v1/deposits", false),
            ("POST", "/api/v1/withdrawals", false),
            ("GET", "/api/v1/deposits/abc/refunds/r", false),
            ("POST", "/api/v1/deposits/abc/cancel", true),
            ("POST", "/api/v1/withdrawals/abc/cancel", true),
            ("POST", "/api/v1/deposits/abc/refunds", true),
            ("POST", "/api/v1/deposits/abc/confirm?x=1", true),
            ("POST", "/api/v1/disputes/abc/evidence", true),
            ("POST", "/api/v1/callbacks/replay", true),
            ("POST", "/api/v1/deposits/abc", false),
        ] {
            assert_eq!(names_object(method, target), object, "{method} {target}");
        }
    }

    #[test]
    fn version_2_covers_time_method_path_and_body() {
        let headers = signature_headers("k", Scheme::V2, "POST", "/p?q", b"{}", 5);
        assert_eq!(headers[0].1, hmac_hex("k", b"5\nPOST\n/p?q\n{}"));
        assert_eq!(headers[1], ("x-timestamp", "5".to_string()));
        assert_eq!(headers[2], ("x-signature-version", "2".to_string()));
        let get = signature_headers("k", Scheme::V2, "GET", "/p?q", b"", 5);
        assert_eq!(get[0].1, hmac_hex("k", b"5\nGET\n/p?q\n"));
        let v1 = signature_headers("k", Scheme::V1Stamped, "GET", "/p?q", b"", 5);
        assert_eq!(v1[0].1, hmac_hex("k", b"5./p?q"));
    }
}
