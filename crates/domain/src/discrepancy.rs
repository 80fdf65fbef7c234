//! Discrepancies as an operator sees and settles them: each recorded one (a provider's final
//! status that contradicts the operation's, see [`crate::attempt::Discrepancy`]) stays open
//! until an operator resolves it, by hand with a note or with a manual ledger entry that
//! names its operation. Resolving changes no status and moves no money by itself.

use crate::console::Actor;
use crate::{OperationId, Timestamp, ValueError};

/// A discrepancy as stored, with its number and, once settled, its resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedDiscrepancy {
    /// Its number: later discrepancies have larger ones.
    pub id: i64,
    pub operation_id: OperationId,
    pub provider: String,
    /// The status the provider reported, in its own words (e.g. `succeeded`).
    pub reported: String,
    pub at: Timestamp,
    /// `None` while it is open.
    pub resolution: Option<Resolution>,
}

impl RecordedDiscrepancy {
    pub fn is_open(&self) -> bool {
        self.resolution.is_none()
    }
}

/// Who settled a discrepancy, when and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    pub at: Timestamp,
    pub actor: Actor,
    pub note: ResolutionNote,
    /// The manual ledger entry that settled it, when one did.
    pub ledger_entry: Option<i64>,
}

/// Why an operator settled a discrepancy: 1 to [`ResolutionNote::MAX_CHARS`] characters
/// after trimming, no control characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolutionNote(String);

impl ResolutionNote {
    /// The longest note, in characters.
    pub const MAX_CHARS: usize = 500;

    /// The note `text` trimmed, or why it is refused.
    pub fn parse(text: &str) -> Result<ResolutionNote, ValueError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ValueError::new("must not be empty"));
        }
        if text.chars().count() > Self::MAX_CHARS {
            return Err(ValueError::new("must be at most 500 characters"));
        }
        if text.chars().any(char::is_control) {
            return Err(ValueError::new("must not hold control characters"));
        }
        Ok(ResolutionNote(text.to_string()))
    }

    /// A note as stored (it passed [`ResolutionNote::parse`], or is a manual entry's reason).
    pub fn from_stored(text: &str) -> ResolutionNote {
        ResolutionNote(text.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ResolutionNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What resolving one discrepancy found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// Resolved now, as it stands after it.
    Now(RecordedDiscrepancy),
    /// It was resolved before (perhaps concurrently): nothing changed; as it stands.
    Already(RecordedDiscrepancy),
    /// There is no discrepancy with this number.
    NotFound,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_trimmed_and_bounded() {
        assert_eq!(
            ResolutionNote::parse("  settled with the bank  ")
                .expect("valid")
                .as_str(),
            "settled with the bank"
        );
        assert!(ResolutionNote::parse("   ").is_err(), "empty");
        assert!(ResolutionNote::parse(&"x".repeat(500)).is_ok());
        assert!(ResolutionNote::parse(&"x".repeat(501)).is_err(), "too long");
        assert!(ResolutionNote::parse("line\nbreak").is_err(), "control");
    }

    #[test]
    fn only_an_unresolved_discrepancy_is_open() {
        let mut found = RecordedDiscrepancy {
            id: 1,
            operation_id: OperationId::from_uuid(uuid::Uuid::nil()),
            provider: "bank".into(),
            reported: "succeeded".into(),
            at: Timestamp::from_millis(0),
            resolution: None,
        };
        assert!(found.is_open());
        found.resolution = Some(Resolution {
            at: Timestamp::from_millis(1),
            actor: Actor::cli("ops"),
            note: ResolutionNote::from_stored("checked"),
            ledger_entry: None,
        });
        assert!(!found.is_open());
    }
}
