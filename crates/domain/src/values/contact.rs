use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use super::{sanitize_user_data, FieldError, ValidationErrors, ValueError};

/// An absolute `http` or `https` URL of at most 2048 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl(String);

impl HttpUrl {
    /// Accepts only a URL that is already valid as sent: RFC 3986 characters (printable ASCII
    /// with no space and none of `` "<>\^`{|} ``, `%` only before two hex digits), the `http` or
    /// `https` scheme followed by `//` and a non-empty host, and what a WHATWG parser then
    /// accepts. Nothing is repaired: the text kept is exactly the text sent.
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        let rule =
            || ValueError::new("must be an absolute http or https URL of at most 2048 characters");
        if text.chars().count() > 2048 {
            return Err(rule());
        }
        if text.chars().any(crate::is_refused_control) {
            return Err(ValueError::new(format!(
                "must be an absolute http or https URL of at most 2048 characters and {}",
                crate::CONTROL_CHARACTERS
            )));
        }
        if !uri_characters_only(text) {
            return Err(ValueError::new(
                "must be an absolute http or https URL of at most 2048 characters, written as \
                 RFC 3986 allows (no spaces or non-ASCII characters; percent-encode them)",
            ));
        }
        let Some((scheme, rest)) = text.split_once(':') else {
            return Err(rule());
        };
        let scheme_ok = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
        let Some(after_slashes) = rest.strip_prefix("//") else {
            return Err(rule());
        };
        let authority = after_slashes
            .split(['/', '?', '#'])
            .next()
            .unwrap_or_default();
        let host_and_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = match host_and_port.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or_default(),
            None => host_and_port.split(':').next().unwrap_or_default(),
        };
        // `[` and `]` only around an IPv6 host, `#` once.
        let after_authority = &after_slashes[authority.len()..];
        let stray_brackets = after_authority.contains(['[', ']'])
            || (!host_and_port.starts_with('[') && host_and_port.contains(['[', ']']));
        if !scheme_ok || host.is_empty() || stray_brackets || text.matches('#').count() > 1 {
            return Err(rule());
        }
        let url = url::Url::parse(text).map_err(|_| rule())?;
        if url.host_str().is_some_and(|h| !h.is_empty()) {
            Ok(Self(text.to_string()))
        } else {
            Err(rule())
        }
    }

    /// A URL read back from storage, kept exactly as it was accepted when stored (earlier
    /// versions repaired fewer things than today's rule refuses).
    pub fn from_stored(text: String) -> Self {
        Self(text)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether `text` holds only characters RFC 3986 allows in a URI, with every `%` starting a
/// percent-encoded octet.
fn uri_characters_only(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().all(|(i, &b)| match b {
        b'%' => bytes
            .get(i + 1..i + 3)
            .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)),
        b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => true,
        b'-' | b'.' | b'_' | b'~' => true,
        b':' | b'/' | b'?' | b'#' | b'[' | b']' | b'@' => true,
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' => true,
        _ => false,
    })
}

impl fmt::Display for HttpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.0)
    }
}

/// An e-mail address that was valid as given; in [`UserData`] it is kept with its card
/// numbers masked, which may leave it malformed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email(String);

impl Email {
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        let valid = email_address::EmailAddress::from_str(text).is_ok()
            && text
                .rsplit_once('@')
                .is_some_and(|(_, domain)| domain.contains('.'));
        if valid {
            Ok(Self(text.to_string()))
        } else {
            Err(ValueError::new("must be a valid e-mail address"))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Most keys `userData` may hold, `email` and `ipAddress` included.
pub const USER_DATA_MAX_KEYS: usize = 32;

/// Data about the user: a checked e-mail and IP address plus other keys kept as given, except
/// for card data ([`sanitize_user_data`]: card numbers masked in keys and values, card
/// security codes dropped).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserData {
    pub email: Option<Email>,
    pub ip_address: Option<IpAddr>,
    pub extra: BTreeMap<String, String>,
}

/// Where user data comes from: a request, checked by the rules of the day, or storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Request,
    Stored,
}

impl UserData {
    /// Builds user data from string entries; every bad entry is reported under `userData.<key>`.
    /// The e-mail and IP address are checked as given, then every entry is kept without card
    /// data.
    pub fn parse(entries: &BTreeMap<String, String>) -> Result<Self, ValidationErrors> {
        Self::read(entries, Source::Request)
    }

    /// User data read back from storage: the rules of the day, except the one on control
    /// characters, which earlier versions did not have (what is kept stays readable), and the
    /// e-mail's, which was checked before its card numbers were masked. Card data is removed
    /// again, which changes nothing in what this version stored.
    pub fn from_stored(entries: &BTreeMap<String, String>) -> Result<Self, ValidationErrors> {
        Self::read(entries, Source::Stored)
    }

    fn read(entries: &BTreeMap<String, String>, source: Source) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let mut ip_address = None;
        if entries.len() > USER_DATA_MAX_KEYS {
            errors.push(
                "userData",
                format!("must have at most {USER_DATA_MAX_KEYS} keys"),
            );
        }
        for (key, value) in entries {
            if source == Source::Request {
                if key.chars().any(crate::is_refused_control) {
                    let error =
                        FieldError::new("userData", format!("keys {}", crate::CONTROL_CHARACTERS));
                    if !errors.0.contains(&error) {
                        errors.0.push(error);
                    }
                    continue;
                }
                if let Err(error) = crate::no_control_characters(value) {
                    errors.push(format!("userData.{key}"), error.0);
                    continue;
                }
            }
            match key.as_str() {
                "email" if source == Source::Request => {
                    errors.check("userData.email", Email::parse(value));
                }
                "ipAddress" => {
                    ip_address = errors.check(
                        "userData.ipAddress",
                        IpAddr::from_str(value)
                            .map_err(|_| ValueError::new("must be a valid IPv4 or IPv6 address")),
                    )
                }
                _ => {}
            }
        }
        errors.into_result()?;
        // An IP address holds at most 12 decimal digits, none joined by separators: no card
        // number can be in it, and it is kept as parsed.
        let mut extra = sanitize_user_data(entries);
        extra.remove("ipAddress");
        let email = extra.remove("email").map(Email);
        Ok(UserData {
            email,
            ip_address,
            extra,
        })
    }

    /// All entries as strings, `email` and `ipAddress` included.
    pub fn entries(&self) -> BTreeMap<String, String> {
        let mut all = self.extra.clone();
        if let Some(email) = &self.email {
            all.insert("email".into(), email.as_str().into());
        }
        if let Some(ip) = &self.ip_address {
            all.insert("ipAddress".into(), ip.to_string());
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_must_be_absolute_http_or_https() {
        assert!(HttpUrl::parse("https://shop.example/cb?x=1").is_ok());
        assert!(HttpUrl::parse("http://127.0.0.1:9000/").is_ok());
        for bad in [
            "ftp://x.example",
            "/relative",
            "shop.example",
            "javascript:alert(1)",
            "https://",
            "",
        ] {
            assert!(HttpUrl::parse(bad).is_err(), "{bad:?}");
        }
        let long = format!("https://a.example/{}", "x".repeat(2048));
        assert!(HttpUrl::parse(&long).is_err());
    }

    #[test]
    fn urls_are_refused_rather_than_repaired() {
        for bad in [
            "http://127.0.0.1:9/cb\r\nHost: evil",
            "http://127.0.0.1:9/c\tb",
            "http://127.0.0.1:9/cb\u{0}",
            "http://127.0.0.1:9/cb\u{7f}",
            "http://a.example/with space",
            " http://a.example/",
            "http://a.example/ ",
            "http://a.example\\path",
            "http://магазин.example/",
            "http://a.example/ж",
            "http://a.example/%zz",
            "http://a.example/%4",
            "http://a.example/<script>",
            "http:a.example",
            "http:/a.example",
            "http:///a.example",
            "http://@/x",
            "http://:80/",
            "http://a.example:99999/",
            "http://a.example/p[1]",
            "http://a.example/#x#y",
            "http://a[1].example/",
        ] {
            assert!(HttpUrl::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn valid_urls_are_kept_exactly_as_sent() {
        for good in [
            "HTTPS://Shop.Example/CB",
            "http://a.example",
            "https://user:pw@a.example:8443/p/a%20th?q=1&r=%D0%B6#frag",
            "http://[::1]:9000/cb",
            "http://127.0.0.1:9/cb?x=!$'()*+,;=",
        ] {
            assert_eq!(
                HttpUrl::parse(good).map(|u| u.as_str().to_string()),
                Ok(good.to_string())
            );
        }
    }

    #[test]
    fn emails_are_checked() {
        assert!(Email::parse("user@example.com").is_ok());
        for bad in [
            "user",
            "user@",
            "@example.com",
            "a b@example.com",
            "user@localhost",
        ] {
            assert!(Email::parse(bad).is_err(), "{bad:?}");
        }
    }

    fn entries(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn user_data_checks_email_and_ip_and_keeps_the_rest() {
        let data = UserData::parse(&entries(&[
            ("email", "a@b.example"),
            ("ipAddress", "2001:db8::1"),
            ("country", "RU"),
        ]))
        .expect("valid user data");
        assert_eq!(
            data.ip_address.map(|ip| ip.to_string()),
            Some("2001:db8::1".into())
        );
        assert_eq!(data.extra.get("country").map(String::as_str), Some("RU"));
        assert_eq!(data.entries().len(), 3);
    }

    #[test]
    fn user_data_reports_every_bad_entry() {
        let errors = UserData::parse(&entries(&[("email", "nope"), ("ipAddress", "300.1.1.1")]))
            .expect_err("both invalid");
        let fields: Vec<_> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, vec!["userData.email", "userData.ipAddress"]);
    }

    #[test]
    fn user_data_refuses_control_characters_in_keys_and_values() {
        let errors = UserData::parse(&entries(&[
            ("note", "a\u{0}b"),
            ("email", "a@b.example\n"),
            ("k\u{1}", "v"),
        ]))
        .expect_err("invalid");
        let fields: Vec<_> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, vec!["userData.email", "userData", "userData.note"]);
        assert!(errors
            .0
            .iter()
            .all(|e| e.message.contains("control characters")));
    }

    #[test]
    fn user_data_keeps_no_card_data_and_reads_back_as_kept() {
        let given = entries(&[
            ("email", "4242424242424242@shop.example"),
            ("ipAddress", "192.168.100.200"),
            ("note", "card 4242 4242 4242 4242, cvc 737"),
            ("CVC", "737"),
            ("cvv2", "737"),
        ]);
        let data = UserData::parse(&given).expect("valid user data");
        assert_eq!(
            data.email.as_ref().map(Email::as_str),
            Some("424242******4242@shop.example")
        );
        assert_eq!(
            data.entries(),
            entries(&[
                ("email", "424242******4242@shop.example"),
                ("ipAddress", "192.168.100.200"),
                ("note", "card 424242******4242, cvc 737"),
            ])
        );
        assert_eq!(UserData::from_stored(&data.entries()), Ok(data.clone()));
        // Rows an earlier version stored are read without their card data.
        assert_eq!(UserData::from_stored(&given), Ok(data));
    }

    #[test]
    fn an_email_made_malformed_by_masking_is_kept_and_read_back() {
        let given = entries(&[("email", "a@4242-4242-4242-4242.example")]);
        let data = UserData::parse(&given).expect("valid as given");
        let kept = data.entries();
        assert_eq!(kept["email"], "a@424242******4242.example");
        assert_eq!(UserData::from_stored(&kept), Ok(data));
    }

    #[test]
    fn user_data_holds_at_most_32_keys() {
        let many: BTreeMap<String, String> = (0..33)
            .map(|i| (format!("k{i}"), "v".to_string()))
            .collect();
        assert!(UserData::parse(&many).is_err());
        let enough: BTreeMap<String, String> = (0..32)
            .map(|i| (format!("k{i}"), "v".to_string()))
            .collect();
        assert!(UserData::parse(&enough).is_ok());
    }
}
