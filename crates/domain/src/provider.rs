//! Payment providers: the built-in sandbox and acquirers reached over the network, and the
//! rules their records follow.

use std::fmt;
use std::time::Duration;

use crate::merchant::Secret;
use crate::ValueError;

/// The name of the built-in, in-process sandbox provider; no other provider may take it.
pub const SANDBOX: &str = "sandbox";

/// Shortest and longest time one call to an acquirer may take.
pub const TIMEOUT_RANGE: std::ops::RangeInclusive<Duration> =
    Duration::from_secs(1)..=Duration::from_secs(55);

/// The call timeout a provider gets when none is given.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Checks a name of the provider pattern: `^[a-z][a-z0-9_-]{0,31}$`.
fn check_name(text: &str) -> Result<(), ValueError> {
    let mut chars = text.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_ok =
        chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    ValueError::unless(
        first_ok && rest_ok && text.len() <= 32,
        "must be 1 to 32 characters: a lower-case letter, then lower-case letters, digits, '_' or '-'",
    )
}

/// A name type of the provider pattern: parsed from a request, read back as stored
/// (already checked when it was written), written as it is.
macro_rules! pattern_name {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub fn parse(text: &str) -> Result<Self, ValueError> {
                check_name(text)?;
                Ok(Self(text.to_string()))
            }

            /// A name as stored (already checked when it was written).
            pub fn from_stored(text: String) -> Self {
                Self(text)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

pattern_name!(
    /// A provider's name: `^[a-z][a-z0-9_-]{0,31}$`.
    ProviderName
);

pattern_name!(
    /// The protocol a provider speaks, naming the adapter that speaks it (`acquirer`, the
    /// Acquirer API, is the one built in): the provider's name pattern. Which names exist is
    /// the wiring's business; the domain only carries the name.
    ProtocolName
);

impl ProviderName {
    /// Whether this is the built-in sandbox's name.
    pub fn is_sandbox(&self) -> bool {
        self.0 == SANDBOX
    }
}

/// What an acquirer is reached with. `Debug` never prints either secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    /// Sent as `Authorization: Bearer` on every call.
    pub api_key: Secret,
    /// Keys the HMAC of the acquirer's notifications.
    pub webhook_secret: Secret,
}

impl Credentials {
    /// Both values must be present: 1 to 512 printable ASCII characters.
    pub fn new(api_key: &str, webhook_secret: &str) -> Result<Self, ValueError> {
        for value in [api_key, webhook_secret] {
            ValueError::unless(
                !value.is_empty()
                    && value.len() <= 512
                    && value.chars().all(|c| c.is_ascii_graphic()),
                "credentials must be 1 to 512 printable ASCII characters without spaces",
            )?;
        }
        Ok(Self {
            api_key: Secret::new(api_key),
            webhook_secret: Secret::new(webhook_secret),
        })
    }
}

/// The base URL of an acquirer's API: absolute http(s); plain http only to a loopback host
/// unless insecure transport was allowed explicitly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderUrl(String);

impl ProviderUrl {
    pub fn parse(text: &str, allow_insecure: bool) -> Result<Self, ValueError> {
        let url = url::Url::parse(text)
            .map_err(|_| ValueError::new("must be an absolute http or https URL"))?;
        let host = url.host_str().unwrap_or_default();
        ValueError::unless(
            matches!(url.scheme(), "http" | "https") && !host.is_empty(),
            "must be an absolute http or https URL",
        )?;
        ValueError::unless(
            url.query().is_none() && url.fragment().is_none(),
            "must have no query string or fragment",
        )?;
        // Credentials come from their own flags only, never inside a URL that is printed.
        ValueError::unless(
            url.username().is_empty() && url.password().is_none(),
            "must not contain a user name or password",
        )?;
        let loopback = match url.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
            None => false,
        };
        ValueError::unless(
            url.scheme() == "https" || loopback || allow_insecure,
            "plain http is allowed only to a loopback host (or with --allow-insecure)",
        )?;
        Ok(Self(text.trim_end_matches('/').to_string()))
    }

    /// A URL as stored (already checked when it was written).
    pub fn from_stored(text: String) -> Self {
        Self(text)
    }

    /// The base, without a trailing slash.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Checks a call timeout against [`TIMEOUT_RANGE`].
pub fn check_timeout(timeout: Duration) -> Result<Duration, ValueError> {
    ValueError::unless(
        TIMEOUT_RANGE.contains(&timeout),
        "must be between 1s and 55s",
    )?;
    Ok(timeout)
}

/// An acquirer the gateway reaches over the network (provider kind `acquirer`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcquirerProvider {
    pub name: ProviderName,
    /// The protocol it speaks: which adapter carries its calls and reads its notifications.
    pub protocol: ProtocolName,
    pub url: ProviderUrl,
    pub credentials: Credentials,
    /// How long one call may take before its outcome is unknown.
    pub timeout: Duration,
    /// Plain http to a non-loopback host was allowed when the record was written.
    pub allow_insecure: bool,
    /// A disabled provider takes no new operations; reads, cancels and notifications go on.
    pub enabled: bool,
}

impl AcquirerProvider {
    /// How long a process may hold one piece of this provider's reconciler work.
    pub fn lease(&self) -> Duration {
        self.timeout + Duration::from_secs(5)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_pattern() {
        for good in ["a", "bank-a", "acq_1", "x2345678901234567890123456789012"] {
            assert!(ProviderName::parse(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "A",
            "1bank",
            "-a",
            "bank a",
            "bänk",
            "x23456789012345678901234567890123",
        ] {
            assert!(ProviderName::parse(bad).is_err(), "{bad:?}");
        }
        assert!(ProviderName::parse(SANDBOX).unwrap().is_sandbox());
    }

    #[test]
    fn urls_must_be_https_unless_loopback_or_allowed() {
        assert!(ProviderUrl::parse("https://acq.example.com/api/", false).is_ok());
        assert_eq!(
            ProviderUrl::parse("http://127.0.0.1:9100/", false)
                .unwrap()
                .as_str(),
            "http://127.0.0.1:9100"
        );
        assert!(ProviderUrl::parse("http://localhost:9100", false).is_ok());
        assert!(ProviderUrl::parse("http://[::1]:9100", false).is_ok());
        assert!(ProviderUrl::parse("http://acq.example.com", false).is_err());
        assert!(ProviderUrl::parse("http://acq.example.com", true).is_ok());
        for bad in [
            "acq.example.com",
            "ftp://x",
            "https://x/?a=1",
            "https://x/#f",
            "mailto:x@y",
        ] {
            assert!(ProviderUrl::parse(bad, true).is_err(), "{bad}");
        }
    }

    #[test]
    fn timeouts_are_one_to_fifty_five_seconds() {
        assert!(check_timeout(Duration::from_secs(1)).is_ok());
        assert!(check_timeout(Duration::from_secs(55)).is_ok());
        assert!(check_timeout(Duration::from_millis(999)).is_err());
        assert!(check_timeout(Duration::from_secs(56)).is_err());
    }

    #[test]
    fn credentials_are_never_shown() {
        let credentials = Credentials::new("key-123", "whsec-456").unwrap();
        let shown = format!("{credentials:?}");
        assert!(
            !shown.contains("key-123") && !shown.contains("whsec-456"),
            "{shown}"
        );
        assert!(Credentials::new("", "x").is_err());
        assert!(Credentials::new("a b", "x").is_err());
    }
}
