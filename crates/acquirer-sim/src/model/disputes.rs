//! Disputes (chargebacks) of succeeded payins, and their JSON views.

use serde::Serialize;
use serde_json::{json, Value};
use time::OffsetDateTime;

/// A dispute's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DisputeStatus {
    /// Waiting for evidence or a decision.
    Open,
    /// Decided for the merchant.
    Won,
    /// Decided for the payer (by control, or at `dueBy` without evidence).
    Lost,
}

/// How a dispute is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// For the merchant.
    Won,
    /// For the payer.
    Lost,
}

impl Outcome {
    /// `won` or `lost`; anything else is none.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "won" => Some(Outcome::Won),
            "lost" => Some(Outcome::Lost),
            _ => None,
        }
    }
}

impl From<Outcome> for DisputeStatus {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Won => DisputeStatus::Won,
            Outcome::Lost => DisputeStatus::Lost,
        }
    }
}

/// A dispute held in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispute {
    /// `dsp_...`.
    pub id: String,
    /// The disputed payin's id.
    pub payment_id: String,
    /// The disputed payin's reference.
    pub reference: String,
    /// Minor units, at most the payin's amount.
    pub amount: i64,
    /// The payin's currency, verbatim.
    pub currency: String,
    /// Where it stands.
    pub status: DisputeStatus,
    /// When an open dispute without evidence is lost (whole milliseconds).
    pub due_by: OffsetDateTime,
    /// Evidence calls processed for it.
    pub evidence: u64,
    /// When the status last changed (whole milliseconds).
    pub updated_at: OffsetDateTime,
}

/// A time cut to whole milliseconds, as disputes keep and show them.
pub fn to_millis(at: OffsetDateTime) -> OffsetDateTime {
    at - time::Duration::nanoseconds(i64::from(at.nanosecond() % 1_000_000))
}

/// RFC 3339 text of a time in UTC with exactly three fractional digits, e.g.
/// `2025-01-01T12:00:00.250Z`.
pub fn rfc3339_millis(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}

impl Dispute {
    /// The dispute's JSON answer.
    pub fn view(&self) -> Value {
        json!({
            "id": self.id, "paymentId": self.payment_id, "reference": self.reference,
            "amount": self.amount, "currency": self.currency, "status": self.status,
            "dueBy": rfc3339_millis(self.due_by), "evidence": self.evidence,
            "updatedAt": rfc3339_millis(self.updated_at),
        })
    }

    /// The notification body for the current status.
    pub fn notification(&self) -> Value {
        json!({
            "event": "dispute", "object": "dispute", "disputeId": self.id,
            "paymentId": self.payment_id, "reference": self.reference, "amount": self.amount,
            "currency": self.currency, "status": self.status,
            "dueBy": rfc3339_millis(self.due_by), "updatedAt": rfc3339_millis(self.updated_at),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn times_have_three_fractional_digits_in_utc() {
        let at = datetime!(2025-01-01 15:00:00.123456789 +03:00);
        assert_eq!(rfc3339_millis(at), "2025-01-01T12:00:00.123Z");
        assert_eq!(
            rfc3339_millis(datetime!(2025-01-01 12:00 UTC)),
            "2025-01-01T12:00:00.000Z"
        );
        assert_eq!(to_millis(at), datetime!(2025-01-01 15:00:00.123 +03:00));
    }

    #[test]
    fn only_won_and_lost_are_outcomes() {
        assert_eq!(Outcome::parse("won"), Some(Outcome::Won));
        assert_eq!(Outcome::parse("lost"), Some(Outcome::Lost));
        assert_eq!(Outcome::parse("open"), None);
        assert_eq!(Outcome::parse("Won"), None);
    }
}
