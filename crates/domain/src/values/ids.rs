use std::fmt;

use uuid::Uuid;

use super::ValueError;

/// A UUID identifier: parsed from and shown in its hyphenated form.
macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(Uuid);

        impl $name {
            pub fn from_uuid(uuid: Uuid) -> Self {
                Self(uuid)
            }

            /// Parses the hyphenated UUID form used in paths.
            pub fn parse(text: &str) -> Result<Self, ValueError> {
                Uuid::parse_str(text)
                    .map(Self)
                    .map_err(|_| ValueError::new("must be a UUID"))
            }

            pub fn as_uuid(&self) -> Uuid {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.hyphenated().fmt(f)
            }
        }
    };
}

uuid_id!(
    /// The gateway's identifier of an operation (a UUID).
    OperationId
);

uuid_id!(
    /// The gateway's identifier of a refund (a UUID, never the same as an operation's).
    RefundId
);

uuid_id!(
    /// The gateway's identifier of a dispute, an appeal or a chargeback (a UUID, never an
    /// operation's or a refund's).
    DisputeId
);

/// A merchant's identifier: 1 to 64 characters of `A-Z a-z 0-9 - _`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MerchantId(String);

impl MerchantId {
    /// A new merchant's id: the UUID in its hyphenated form (always a valid id).
    pub fn from_uuid(uuid: Uuid) -> Self {
        Self(uuid.hyphenated().to_string())
    }

    pub fn parse(text: &str) -> Result<Self, ValueError> {
        let ok = (1..=64).contains(&text.len())
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        ValueError::unless(ok, "must be 1 to 64 letters, digits, '-' or '_'")
            .map(|()| Self(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for MerchantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.0)
    }
}

/// The merchant's own identifier of an operation (or, as [`MerchantRefundId`], of a refund):
/// 1 to 128 printable ASCII characters, no space.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MerchantOperationId(String);

impl MerchantOperationId {
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        let ok =
            (1..=128).contains(&text.len()) && text.bytes().all(|b| (b'!'..=b'~').contains(&b));
        ValueError::unless(
            ok,
            "must be 1 to 128 printable ASCII characters without spaces",
        )
        .map(|()| Self(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for MerchantOperationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.0)
    }
}

/// The merchant's own identifier of a refund: the same rules as a merchantOperationId.
pub type MerchantRefundId = MerchantOperationId;

/// The merchant's identifier of its user: 1 to 128 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserId(String);

impl UserId {
    /// 1 to 128 characters, none of them a control character.
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        super::bounded_text(text, 128).map(Self)
    }

    /// A user id read back from storage, as it was accepted when stored (earlier versions
    /// allowed control characters other than NUL): the rules of the day apply to requests,
    /// never to what is already kept.
    pub fn from_stored(text: String) -> Self {
        Self(text)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_id_round_trips_through_text() {
        let id = OperationId::from_uuid(Uuid::from_u128(0x6f1c_0000_0000_4000_8000_0000_0000_0001));
        assert_eq!(OperationId::parse(&id.to_string()), Ok(id));
        assert!(OperationId::parse("not-a-uuid").is_err());
    }

    #[test]
    fn merchant_operation_id_allows_printable_ascii_only() {
        assert!(MerchantOperationId::parse("order-1!~").is_ok());
        assert!(MerchantOperationId::parse(&"x".repeat(128)).is_ok());
        for bad in ["", "has space", "tab\t", "кириллица", &"x".repeat(129)] {
            assert!(MerchantOperationId::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn user_id_counts_characters_not_bytes() {
        assert!(UserId::parse(&"ж".repeat(128)).is_ok());
        assert!(UserId::parse(&"ж".repeat(129)).is_err());
        assert!(UserId::parse("").is_err());
    }

    #[test]
    fn user_id_refuses_control_characters() {
        for bad in ["user\u{0}x", "a\tb", "a\nb", "a\rb", "a\u{7f}"] {
            assert!(UserId::parse(bad).is_err(), "{bad:?}");
        }
        assert!(UserId::parse("Иван 42").is_ok());
    }

    #[test]
    fn merchant_id_is_a_short_token() {
        assert!(MerchantId::parse("demo").is_ok());
        assert!(MerchantId::parse("3f0c2a4e-1d2b-4c5d-8e9f-001122334455").is_ok());
        assert!(MerchantId::parse("").is_err());
        assert!(MerchantId::parse("a b").is_err());
    }
}
