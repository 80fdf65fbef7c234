//! What the gateway acts on when it speaks to an acquirer: a payment's or refund's status,
//! why it failed and what that means for an operation, the answers to calls, and when the
//! reconciler reads an operation again.
//!
//! Everything of a protocol (its JSON, HTTP statuses, status words, failure codes,
//! notification body and signature) lives in that protocol's adapter, which hands over
//! these meanings.

use std::time::Duration;

use crate::operation::{Decline, DeclineCode, Outcome};
use crate::{
    Amount, Currency, Direction, OperationId, PaymentMethod, Timestamp, WithdrawalRequisites,
};

/// A payment's status at the acquirer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentStatus {
    Pending,
    ActionRequired,
    Succeeded,
    Failed,
    Canceled,
}

impl PaymentStatus {
    /// The status's name in logs and in what an operator reads (a discrepancy's report).
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentStatus::Pending => "pending",
            PaymentStatus::ActionRequired => "action_required",
            PaymentStatus::Succeeded => "succeeded",
            PaymentStatus::Failed => "failed",
            PaymentStatus::Canceled => "canceled",
        }
    }

    pub fn is_final(self) -> bool {
        matches!(
            self,
            PaymentStatus::Succeeded | PaymentStatus::Failed | PaymentStatus::Canceled
        )
    }
}

/// A payment as the acquirer reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcquirerPayment {
    /// The acquirer's own id (`acq_...`).
    pub id: String,
    pub status: PaymentStatus,
    /// Where the user pays, with `action_required`.
    pub redirect_url: Option<String>,
    /// Why it failed, with `failed`.
    pub failure: Option<Failure>,
}

impl AcquirerPayment {
    /// What its failure means for an operation in `direction` (`Declined` with a provider
    /// decline for a `failed` payment that says no more).
    pub fn failure_meaning(&self, direction: Direction) -> FailureMeaning {
        failure_meaning(Failure::reason_of(self.failure.as_ref()), direction)
    }

    /// The provider's own failure code, as it sent it.
    pub fn failure_code(&self) -> Option<&str> {
        Failure::code_of(self.failure.as_ref())
    }
}

/// Why a provider says a payment or a refund failed, as the gateway acts on it. Each
/// protocol's adapter reads its own failure codes into these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureReason {
    /// The provider could not process it: nothing happened.
    ProviderUnavailable,
    /// The payer's or recipient's bank could not be reached: nothing happened, and the
    /// provider itself is not failing.
    IssuerUnavailable,
    /// Not enough money: the payer's on a payin, the gateway's own float at the provider
    /// on a payout.
    InsufficientFunds,
    CardDeclined,
    RecipientNotFound,
    /// Refused by the bank or the provider's checks.
    Rejected,
    /// The user did not pay in time.
    Expired,
    /// A code the protocol's adapter does not know.
    Other,
}

/// A failure as a provider reported it: what it means, and its own code for the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub reason: FailureReason,
    /// The provider's code as it sent it (kept on the attempt for operators).
    pub code: String,
}

impl Failure {
    pub fn new(reason: FailureReason, code: &str) -> Self {
        Self {
            reason,
            code: code.to_string(),
        }
    }

    /// The reason of a failure that may not have been given (`Other` then).
    pub fn reason_of(failure: Option<&Failure>) -> FailureReason {
        failure.map_or(FailureReason::Other, |f| f.reason)
    }

    /// The code of a failure that may not have been given.
    pub fn code_of(failure: Option<&Failure>) -> Option<&str> {
        failure.map(|f| f.code.as_str())
    }
}

/// What kind of object an acquirer's notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotifiedObject {
    Payment,
    Refund,
    /// A chargeback the acquirer opened or decided: the notification's `dispute` says what.
    Dispute,
}

/// An acquirer's notification, read from its authenticated body (by the [`Acquirer`](crate::ports::Acquirer) port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    pub object: NotifiedObject,
    /// The acquirer's id of the object.
    pub id: String,
    /// The gateway's id the object was created with.
    pub reference: String,
    /// A payment's or refund's status (`pending` for a dispute, whose status is its own).
    pub status: PaymentStatus,
    /// Why it failed, with `failed`.
    pub failure: Option<Failure>,
    /// The dispute as notified, with [`NotifiedObject::Dispute`] (its `reference` is the
    /// disputed payin's, the operation id).
    pub dispute: Option<AcquirerDispute>,
}

/// A chargeback's status at the acquirer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AcquirerDisputeStatus {
    /// Opened: the amount is held until it is decided.
    Open,
    /// Decided for the merchant: the hold returns.
    Won,
    /// Decided for the payer: the held amount leaves.
    Lost,
}

impl AcquirerDisputeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AcquirerDisputeStatus::Open => "open",
            AcquirerDisputeStatus::Won => "won",
            AcquirerDisputeStatus::Lost => "lost",
        }
    }

    /// Whether the acquirer decided it.
    pub fn is_final(self) -> bool {
        self != AcquirerDisputeStatus::Open
    }
}

/// A chargeback as the acquirer reports it (a notification, an evidence call's answer, a read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcquirerDispute {
    /// The acquirer's own id of the dispute (`dsp_...`).
    pub id: String,
    /// The acquirer's id of the disputed payment.
    pub payment_id: String,
    /// The disputed payment's reference: the gateway's operation id.
    pub reference: String,
    /// The disputed part, in the payment's currency.
    pub amount: Amount,
    pub status: AcquirerDisputeStatus,
    /// The deadline for evidence.
    pub due_by: Option<Timestamp>,
    /// How many evidence calls the acquirer processed for it (0 when not told, as in a
    /// notification).
    pub evidence: u32,
}

/// Evidence of a chargeback, forwarded once to the acquirer:
/// `POST /v1/disputes/{id}/evidence` with `key` as its `Idempotency-Key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// The gateway's id of this submission.
    pub key: uuid::Uuid,
    pub text: Option<String>,
    pub files: Vec<crate::dispute::DisputeFile>,
}

/// Why the [`Acquirer`](crate::ports::Acquirer) port read no notification from a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotificationRefusal {
    /// The signature is missing or does not sign the body with the provider's webhook
    /// secret: nothing of the body is read.
    BadSignature,
    /// Signed, but not a notification of this protocol; the reason names the field.
    BadBody(&'static str),
}

/// A creation request, built once per attempt; the full card number or phone lives only here.
#[derive(Debug, Clone, PartialEq)]
pub struct PaymentOrder {
    /// The operation id: the payment's `reference` and the `Idempotency-Key`.
    pub reference: OperationId,
    pub direction: Direction,
    pub method: PaymentMethod,
    pub amount: Amount,
    pub currency: Currency,
    pub notify_url: String,
    /// A creation arriving after this is refused by the acquirer and creates nothing.
    pub not_after: Timestamp,
    /// Payins only: where the acquirer sends the user back, and when the payin lapses.
    pub return_url: Option<String>,
    pub expires_at: Option<Timestamp>,
    /// Payouts only: the full requisites.
    pub payout: Option<WithdrawalRequisites>,
}

/// How long after the request a creation may still be accepted (`notAfter`).
pub const NOT_AFTER_SECS: i64 = 60;

/// After `notAfter`, how long a payment the acquirer does not know must stay unknown before
/// it counts as never created.
pub const NOT_FOUND_GRACE_SECS: i64 = 300;

/// The answer to a call that may move money (a payment's creation, a refund), classified:
/// `T` is what the call creates ([`AcquirerPayment`], [`AcquirerRefund`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallResult<T> {
    /// The acquirer answered with the object asked for.
    Answered(T),
    /// A definite failure: nothing happened at the acquirer (the reason is for logs).
    Unavailable(String),
    /// Anything else: the object may or may not exist; resolved only by reading.
    Unknown(String),
}

/// The answer to a read of an object by reference (or to a cancel, which answers the
/// payment as it stands afterwards).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup<T> {
    Found(T),
    /// The acquirer knows no such object.
    NotFound,
    /// No usable answer (the reason is for logs).
    Failed(String),
}

/// A refund's status at the acquirer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundStatus {
    Pending,
    Succeeded,
    Failed,
}

impl RefundStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RefundStatus::Pending => "pending",
            RefundStatus::Succeeded => "succeeded",
            RefundStatus::Failed => "failed",
        }
    }
}

/// A refund as the acquirer reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcquirerRefund {
    /// The acquirer's own id of the refund.
    pub id: String,
    pub status: RefundStatus,
    /// Why it failed, with `failed`.
    pub failure: Option<Failure>,
}

/// A refund request, built once: `POST /v1/payments/{payment_id}/refunds` with the refund id
/// as its `reference` and `Idempotency-Key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundOrder {
    /// The acquirer's id of the refunded payment.
    pub payment_id: String,
    pub reference: crate::RefundId,
    pub amount: Amount,
}

/// The final outcome a refund's status gives it; `None` while pending. `failed` for a reason
/// that says nothing happened (the provider or the bank unavailable) is
/// `ProviderUnavailable`; any other failure is `ProviderDeclined`.
pub fn refund_outcome_of(refund: &AcquirerRefund) -> Option<Outcome> {
    match refund.status {
        RefundStatus::Pending => None,
        RefundStatus::Succeeded => Some(Outcome::Approve),
        RefundStatus::Failed => Some(Outcome::Decline(Decline::new(
            match Failure::reason_of(refund.failure.as_ref()) {
                FailureReason::ProviderUnavailable | FailureReason::IssuerUnavailable => {
                    DeclineCode::ProviderUnavailable
                }
                _ => DeclineCode::ProviderDeclined,
            },
        ))),
    }
}

/// What a failed payment's raw code means for the operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureMeaning {
    /// Nothing happened at the acquirer: another provider may be tried.
    Unavailable,
    /// A decline by the bank or the user.
    Declined(Decline),
}

/// The meaning of a failure for an operation in `direction` (contract table: unknown and
/// absent codes are a provider decline; insufficient funds on a payout means the gateway's
/// own float at the acquirer is empty, so another provider may be tried).
pub fn failure_meaning(reason: FailureReason, direction: Direction) -> FailureMeaning {
    let declined = |code| FailureMeaning::Declined(Decline::new(code));
    match (reason, direction) {
        (FailureReason::ProviderUnavailable | FailureReason::IssuerUnavailable, _) => {
            FailureMeaning::Unavailable
        }
        (FailureReason::InsufficientFunds, Direction::Withdrawal) => FailureMeaning::Unavailable,
        (FailureReason::InsufficientFunds, Direction::Deposit) => {
            declined(DeclineCode::InsufficientFunds)
        }
        (FailureReason::CardDeclined, _) => declined(DeclineCode::CardDeclined),
        (FailureReason::RecipientNotFound, _) => declined(DeclineCode::RecipientNotFound),
        (FailureReason::Rejected, _) => declined(DeclineCode::PaymentRejected),
        (FailureReason::Expired, _) => declined(DeclineCode::Expired),
        (FailureReason::Other, _) => declined(DeclineCode::ProviderDeclined),
    }
}

/// The final outcome a final payment status gives the operation; `None` while not final.
/// A definite failure reported after creation ends the operation as `ProviderUnavailable`.
pub fn outcome_of(payment: &AcquirerPayment, direction: Direction) -> Option<Outcome> {
    match payment.status {
        PaymentStatus::Pending | PaymentStatus::ActionRequired => None,
        PaymentStatus::Succeeded => Some(Outcome::Approve),
        PaymentStatus::Canceled => Some(Outcome::expired()),
        PaymentStatus::Failed => Some(Outcome::Decline(match payment.failure_meaning(direction) {
            FailureMeaning::Unavailable => Decline::new(DeclineCode::ProviderUnavailable),
            FailureMeaning::Declined(decline) => decline,
        })),
    }
}

/// Gaps, from the moment an outcome became unknown, at which the reconciler reads it:
/// 1, 3, 8, 18, 48 and 108 s after, then every 5 minutes.
const UNKNOWN_READS_AT_SECS: [i64; 6] = [1, 3, 8, 18, 48, 108];

/// The longest gap between two reads of a processing operation.
pub const MAX_READ_GAP_SECS: i64 = 300;

/// When to read an unknown outcome next: the first moment of its schedule (1, 3, 8, 18, 48
/// and 108 s after it became unknown at `since`, then every 5 minutes) after `now`. Counted
/// from `since`, not from the reads made, so a read that failed or one made off the schedule
/// (at the 404 rule's threshold) shifts nothing.
pub fn next_unknown_read(since: Timestamp, now: Timestamp) -> Timestamp {
    let elapsed_ms = now.millis() - since.millis();
    if let Some(at) = UNKNOWN_READS_AT_SECS
        .iter()
        .find(|at| **at * 1000 > elapsed_ms)
    {
        return since.plus_seconds(*at);
    }
    let last = UNKNOWN_READS_AT_SECS[UNKNOWN_READS_AT_SECS.len() - 1] * 1000;
    let gap = MAX_READ_GAP_SECS * 1000;
    let periods = (elapsed_ms - last) / gap + 1;
    since.plus_millis(last + periods * gap)
}

/// When to read a quiet operation next: `after` since its last change or read, doubling with
/// each read that found nothing new (`quiet_reads`), at most 5 minutes.
pub fn next_quiet_read(last: Timestamp, after: Duration, quiet_reads: u32) -> Timestamp {
    let base = i64::try_from(after.as_millis()).unwrap_or(i64::MAX).max(1);
    let factor = 1_i64 << quiet_reads.min(20);
    let gap = base.saturating_mul(factor).min(MAX_READ_GAP_SECS * 1000);
    last.plus_millis(gap)
}

/// When a payment the acquirer does not know may count as never created: `notAfter` of its
/// creation request plus the grace.
pub fn not_found_final_at(requested_at: Timestamp) -> Timestamp {
    requested_at.plus_seconds(NOT_AFTER_SECS + NOT_FOUND_GRACE_SECS)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn failed(reason: Option<FailureReason>) -> AcquirerPayment {
        AcquirerPayment {
            id: "acq_1".into(),
            status: PaymentStatus::Failed,
            redirect_url: None,
            failure: reason.map(|reason| Failure::new(reason, "code")),
        }
    }

    #[test]
    fn failure_reasons_mean_what_the_table_says() {
        use DeclineCode::*;
        use Direction::{Deposit, Withdrawal};
        use FailureReason as R;
        let cases = [
            (Some(R::CardDeclined), Deposit, CardDeclined),
            (Some(R::InsufficientFunds), Deposit, InsufficientFunds),
            (Some(R::RecipientNotFound), Withdrawal, RecipientNotFound),
            (Some(R::Rejected), Deposit, PaymentRejected),
            (Some(R::Other), Withdrawal, ProviderDeclined),
            (None, Deposit, ProviderDeclined),
            (Some(R::Expired), Deposit, Expired),
            (Some(R::ProviderUnavailable), Deposit, ProviderUnavailable),
            (Some(R::IssuerUnavailable), Withdrawal, ProviderUnavailable),
            (Some(R::InsufficientFunds), Withdrawal, ProviderUnavailable),
        ];
        for (reason, direction, expected) in cases {
            assert_eq!(
                outcome_of(&failed(reason), direction),
                Some(Outcome::Decline(Decline::new(expected))),
                "{reason:?} {direction:?}"
            );
        }
        assert_eq!(
            failed(Some(R::InsufficientFunds)).failure_meaning(Withdrawal),
            FailureMeaning::Unavailable
        );
    }

    #[test]
    fn only_final_statuses_give_an_outcome() {
        let mut payment = failed(None);
        for (status, outcome) in [
            (PaymentStatus::Pending, None),
            (PaymentStatus::ActionRequired, None),
            (PaymentStatus::Succeeded, Some(Outcome::Approve)),
            (PaymentStatus::Canceled, Some(Outcome::expired())),
        ] {
            payment.status = status;
            assert_eq!(outcome_of(&payment, Direction::Deposit), outcome);
        }
    }

    #[test]
    fn unknown_outcomes_are_read_on_the_schedule() {
        let since = Timestamp::from_millis(0);
        let mut now = since;
        let mut at = Vec::new();
        for _ in 0..9 {
            now = next_unknown_read(since, now);
            at.push(now.millis() / 1000);
        }
        assert_eq!(at, [1, 3, 8, 18, 48, 108, 408, 708, 1008]);
    }

    #[test]
    fn a_read_off_the_schedule_does_not_shift_it() {
        let since = Timestamp::from_millis(0);
        // A read at the 404 rule's threshold (360 s): the next one is still at 408 s.
        assert_eq!(
            next_unknown_read(since, since.plus_seconds(360)).millis(),
            408_000
        );
        assert_eq!(
            next_unknown_read(since, since.plus_millis(408_000)).millis(),
            708_000
        );
        assert_eq!(
            next_unknown_read(since, since.plus_millis(2_500)).millis(),
            3_000
        );
    }

    #[test]
    fn quiet_reads_double_up_to_five_minutes() {
        let last = Timestamp::from_millis(0);
        let gaps: Vec<i64> = (0..5)
            .map(|n| next_quiet_read(last, Duration::from_secs(60), n).millis() / 1000)
            .collect();
        assert_eq!(gaps, [60, 120, 240, 300, 300]);
    }
}
