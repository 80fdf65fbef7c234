//! Disputes: one record with two kinds. An **appeal** is the merchant's claim that a deposit
//! was paid but not credited (a declined deposit) or credited with the wrong amount (an
//! approved one), decided by an operator; a **chargeback** is the acquirer reversing an
//! approved payin. The deposit's status never changes: money moves only through the
//! dispute's own ledger entries (`ledger::appeal_moves`).

mod file;

pub use file::{DisputeFile, FileRule, FileType};

use crate::names::names;
use crate::{Amount, Currency, DisputeId, MerchantId, OperationId, Timestamp, ValueError};

names! {
    /// What a dispute is.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum DisputeKind {
        /// The merchant's claim about a deposit, decided by an operator.
        Appeal = "appeal",
        /// The acquirer's reversal of an approved payin, decided by the acquirer.
        Chargeback = "chargeback",
    }
}

names! {
    /// Where a dispute stands. An appeal goes from `open` to `accepted` or `rejected`; a
    /// chargeback from `open` (to `under_review` once evidence reached the acquirer) to `won`
    /// or `lost`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum DisputeStatus {
        Open = "open",
        UnderReview = "under_review",
        Won = "won",
        Lost = "lost",
        Accepted = "accepted",
        Rejected = "rejected",
    }
    else "must be open, under_review, won, lost, accepted or rejected"
}

impl DisputeStatus {
    /// Whether it is decided: nothing changes it any more.
    pub fn is_final(self) -> bool {
        !matches!(self, DisputeStatus::Open | DisputeStatus::UnderReview)
    }
}

names! {
    /// What an appeal claims.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum AppealReason {
        /// The payer paid, but the deposit was declined (or expired): nothing was credited.
        PaidNotCredited = "paid_not_credited",
        /// The deposit was approved with another amount than the one paid.
        WrongAmount = "wrong_amount",
    }
    else "must be paid_not_credited or wrong_amount"
}

impl AppealReason {
    /// The deposit status the claim is about: a declined deposit for `paid_not_credited`,
    /// an approved one for `wrong_amount`.
    pub fn applies_to(self) -> crate::Status {
        match self {
            AppealReason::PaidNotCredited => crate::Status::Declined,
            AppealReason::WrongAmount => crate::Status::Approved,
        }
    }
}

/// How long after a deposit's creation it can be appealed.
pub const APPEAL_WINDOW_SECS: i64 = 30 * 24 * 3600;

/// The longest comment or resolution, in characters.
pub const MAX_TEXT: usize = 2_000;

/// A free text of a dispute (a comment, a resolution, evidence): trimmed, at most
/// [`MAX_TEXT`] characters, no control characters but line breaks and tabs, every card number
/// in it masked (as every free text the gateway keeps); `None` if empty.
pub fn dispute_text(text: &str) -> Result<Option<String>, ValueError> {
    let text = text.trim();
    ValueError::unless(
        text.chars().count() <= MAX_TEXT,
        "must be at most 2000 characters",
    )?;
    ValueError::unless(
        !text
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')),
        "must not hold control characters",
    )?;
    Ok((!text.is_empty()).then(|| crate::mask_card_numbers(text).into_owned()))
}

/// What a merchant appeals, once its fields passed the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppealRequest {
    pub reason: AppealReason,
    /// What the payer paid; read in the deposit's currency once the deposit is found.
    pub paid_amount: crate::AmountText,
    pub comment: Option<String>,
    pub receipt: Option<DisputeFile>,
}

/// A dispute of a deposit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispute {
    pub id: DisputeId,
    pub kind: DisputeKind,
    /// The disputed deposit.
    pub operation_id: OperationId,
    pub merchant_id: MerchantId,
    pub status: DisputeStatus,
    /// An appeal's reason name; a chargeback's is `chargeback`.
    pub reason: String,
    /// An appeal's: the amount paid as the merchant claims it, then the amount an operator
    /// accepted. A chargeback's: the amount the acquirer reverses.
    pub amount: Amount,
    pub currency: Currency,
    /// The merchant's comment on an appeal.
    pub comment: Option<String>,
    /// A chargeback's deadline for evidence; `None` for an appeal.
    pub due_by: Option<Timestamp>,
    /// How it was decided: the operator's reason for an appeal.
    pub resolution: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Dispute {
    /// An appeal's reason; `None` for a chargeback.
    pub fn appeal_reason(&self) -> Option<AppealReason> {
        match self.kind {
            DisputeKind::Appeal => AppealReason::parse(&self.reason).ok(),
            DisputeKind::Chargeback => None,
        }
    }

    /// Whether an operator can decide it: an open appeal.
    pub fn is_open_appeal(&self) -> bool {
        self.kind == DisputeKind::Appeal && self.status == DisputeStatus::Open
    }

    /// The dispute decided at `at` with `status`, `amount` and `resolution`; a final one
    /// refuses.
    pub fn decide(
        &self,
        status: DisputeStatus,
        amount: Amount,
        resolution: Option<String>,
        at: Timestamp,
    ) -> Result<Dispute, AlreadyDecided> {
        if self.status.is_final() {
            return Err(AlreadyDecided(self.status));
        }
        Ok(Dispute {
            status,
            amount,
            resolution,
            updated_at: at,
            ..self.clone()
        })
    }
}

names! {
    /// Where a chargeback's evidence stands: stored and being forwarded (`pending`, until the
    /// call's answer or a read says), received by the acquirer (`forwarded`), or known not to
    /// have reached it (`failed`: the merchant may send it again).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum EvidenceState {
        Pending = "pending",
        Forwarded = "forwarded",
        Failed = "failed",
    }
    else "must be pending, forwarded or failed"
}

/// A chargeback with what only the gateway's side of it keeps: the acquirer it is at, its id
/// there, and its evidence's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chargeback {
    pub dispute: Dispute,
    /// The acquirer's name.
    pub provider: String,
    /// The acquirer's id of the dispute.
    pub acquirer_id: String,
    /// `None` while no evidence was sent.
    pub evidence: Option<EvidenceState>,
}

impl Chargeback {
    /// Whether the merchant may send evidence: the chargeback is open and no evidence of it
    /// is forwarded or being forwarded.
    pub fn takes_evidence(&self) -> bool {
        self.dispute.status == DisputeStatus::Open
            && matches!(self.evidence, None | Some(EvidenceState::Failed))
    }
}

/// What a merchant sends as a chargeback's evidence, once its fields passed the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceRequest {
    pub text: Option<String>,
    pub files: Vec<DisputeFile>,
}

/// The reason of every chargeback.
pub const CHARGEBACK_REASON: &str = "chargeback";

/// A dispute was already decided, with this status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the dispute is already {}", .0.as_str())]
pub struct AlreadyDecided(pub DisputeStatus);

/// Which disputes to list, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DisputeFilter {
    pub merchant_id: Option<MerchantId>,
    pub status: Option<DisputeStatus>,
    pub kind: Option<DisputeKind>,
    /// At most this many (the store caps it at 500).
    pub limit: u32,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::testkit::at;

    fn appeal() -> Dispute {
        crate::testkit::appeal_of(1, "100.00", AppealReason::PaidNotCredited)
    }

    #[test]
    fn only_open_and_under_review_are_undecided() {
        let undecided: Vec<_> = DisputeStatus::ALL
            .into_iter()
            .filter(|s| !s.is_final())
            .collect();
        assert_eq!(
            undecided,
            vec![DisputeStatus::Open, DisputeStatus::UnderReview]
        );
    }

    #[test]
    fn a_dispute_is_decided_once() {
        let amount = Amount::parse("50.00", Currency::RUB).unwrap();
        let done = appeal()
            .decide(DisputeStatus::Accepted, amount, Some("ok".into()), at(9))
            .unwrap();
        assert_eq!(
            (done.status, done.amount, done.updated_at),
            (DisputeStatus::Accepted, amount, at(9))
        );
        assert!(!done.is_open_appeal());
        assert_eq!(
            done.decide(DisputeStatus::Rejected, amount, None, at(10)),
            Err(AlreadyDecided(DisputeStatus::Accepted))
        );
    }

    #[test]
    fn each_appeal_reason_is_about_one_deposit_status() {
        assert_eq!(
            AppealReason::PaidNotCredited.applies_to(),
            crate::Status::Declined
        );
        assert_eq!(
            AppealReason::WrongAmount.applies_to(),
            crate::Status::Approved
        );
        assert_eq!(
            appeal().appeal_reason(),
            Some(AppealReason::PaidNotCredited)
        );
        assert!(AppealReason::parse("other").is_err());
    }

    #[test]
    fn texts_are_trimmed_bounded_and_free_of_control_characters() {
        assert_eq!(
            dispute_text("  paid at 10:00 \n").unwrap().as_deref(),
            Some("paid at 10:00")
        );
        assert_eq!(dispute_text("   ").unwrap(), None);
        assert!(dispute_text("line one\nline two").unwrap().is_some());
        assert!(dispute_text("bell\u{7}").is_err());
        assert!(dispute_text(&"x".repeat(MAX_TEXT)).is_ok());
        assert!(dispute_text(&"x".repeat(MAX_TEXT + 1)).is_err());
        let card = dispute_text("paid by card 4111 1111 1111 1111")
            .unwrap()
            .unwrap();
        assert!(!card.contains("4111 1111 1111 1111"), "{card}");
    }
}
