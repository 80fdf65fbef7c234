//! The callback a merchant receives when an operation becomes final (the callback rules of
//! docs/api.md). The domain decides what a callback says ([`CallbackData`]); the body's wire
//! format belongs to the callback adapter, through the `CallbackFormat` port.

use crate::dispute::Dispute;
use crate::names::names;
use crate::operation::{Decline, Operation};
use crate::ports::CallbackFormat;
use crate::refund::Refund;
use crate::{
    Amount, Currency, Direction, DisputeId, HttpUrl, MerchantId, MerchantOperationId,
    MerchantRefundId, OperationId, PaymentMethod, RefundId, Status, Timestamp, UserId,
};

/// A callback queued in the same unit of work as the final status it reports: one envelope
/// for every kind of money movement, `D` being what it reports ([`CallbackData`] of an
/// operation, [`RefundCallbackData`] of a refund, a [`Dispute`]). The outbox keys it by the
/// dispute's change when there is one, else by the refund when there is one, else by the
/// operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedCallback<D = CallbackData> {
    /// The operation, or the refunded deposit.
    pub operation_id: OperationId,
    /// A refund's callback: the refund (kept in the outbox beside its deposit's callback).
    pub refund_id: Option<RefundId>,
    /// A dispute's callback: the dispute and its status change (a dispute has one callback
    /// per change, each its own).
    pub dispute: Option<DisputeChange>,
    pub merchant_id: MerchantId,
    /// Whose secret signs it: the operation's direction, a deposit's for a refund.
    pub direction: Direction,
    pub url: HttpUrl,
    /// What the callback reports.
    pub data: D,
    /// The body to send and sign, as the `CallbackFormat` port wrote `data`, but for its
    /// sequence number, which the outbox draws as it queues the callback.
    pub body: CallbackBody,
    pub queued_at: Timestamp,
}

/// A dispute's status change, as its callback is keyed: a dispute reports every change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DisputeChange {
    pub dispute_id: DisputeId,
    /// The change's own id, its callback's key in the outbox.
    pub change_id: uuid::Uuid,
}

/// A callback's id: the same on every attempt of it (its `webhook-id`) and its key in the
/// outbox. The dispute change's id for a dispute's callback, the refund's id for a refund's,
/// else the operation's id.
pub fn callback_id(
    operation_id: &OperationId,
    refund_id: Option<&RefundId>,
    dispute: Option<&DisputeChange>,
) -> String {
    match (dispute, refund_id) {
        (Some(change), _) => change.change_id.hyphenated().to_string(),
        (None, Some(refund)) => refund.to_string(),
        (None, None) => operation_id.to_string(),
    }
}

/// A callback's exact body but for its `sequence`: the text before the number and the text
/// after it. The outbox numbers an operation's callbacks (its own, its refunds' and its
/// disputes') 1, 2, ... as it queues them, in the unit of work that queues each, so the
/// number is known only there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallbackBody {
    before: String,
    after: String,
}

impl CallbackBody {
    /// The body `before` + the sequence number + `after`.
    pub fn around(before: impl Into<String>, after: impl Into<String>) -> Self {
        Self {
            before: before.into(),
            after: after.into(),
        }
    }

    /// The text before the sequence number.
    pub fn before(&self) -> &str {
        &self.before
    }

    /// The text after the sequence number.
    pub fn after(&self) -> &str {
        &self.after
    }

    /// The exact body, numbered `sequence`.
    pub fn with_sequence(&self, sequence: u64) -> String {
        format!("{}{sequence}{}", self.before, self.after)
    }
}

/// What a callback can report: written to a body by the [`CallbackFormat`] port.
pub trait Reported {
    /// The body for this report, waiting for its sequence number.
    fn body(&self, format: &dyn CallbackFormat) -> CallbackBody;
}

impl Reported for CallbackData {
    fn body(&self, format: &dyn CallbackFormat) -> CallbackBody {
        format.body(self)
    }
}

impl Reported for RefundCallbackData {
    fn body(&self, format: &dyn CallbackFormat) -> CallbackBody {
        format.refund_body(self)
    }
}

impl Reported for Dispute {
    fn body(&self, format: &dyn CallbackFormat) -> CallbackBody {
        format.dispute_body(self)
    }
}

/// What a callback reports of a final operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackData {
    pub operation_id: OperationId,
    pub merchant_operation_id: Option<MerchantOperationId>,
    pub direction: Direction,
    pub method: PaymentMethod,
    pub user_id: UserId,
    pub status: Status,
    pub amount: Amount,
    pub currency: Currency,
    pub updated_at: Timestamp,
    pub decline: Option<Decline>,
    /// The fee fixed at creation, in minor units.
    pub fee: i64,
}

impl CallbackData {
    pub fn of(op: &Operation) -> Self {
        Self {
            operation_id: op.id(),
            merchant_operation_id: op.merchant_operation_id().cloned(),
            direction: op.direction(),
            method: op.method(),
            user_id: op.user_id().clone(),
            status: op.status(),
            amount: op.amount(),
            currency: op.currency(),
            updated_at: op.updated_at(),
            decline: op.decline().cloned(),
            fee: op.fee().amount,
        }
    }
}

/// What a refund's callback reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundCallbackData {
    pub refund_id: RefundId,
    pub merchant_refund_id: Option<MerchantRefundId>,
    pub operation_id: OperationId,
    pub status: Status,
    pub amount: Amount,
    pub currency: Currency,
    pub updated_at: Timestamp,
    pub decline: Option<Decline>,
    /// The refund's fee, in minor units.
    pub fee: i64,
}

impl RefundCallbackData {
    pub fn of(refund: &Refund) -> Self {
        Self {
            refund_id: refund.id,
            merchant_refund_id: refund.merchant_refund_id.clone(),
            operation_id: refund.operation_id,
            status: refund.status(),
            amount: refund.amount,
            currency: refund.currency,
            updated_at: refund.updated_at,
            decline: refund.decline().cloned(),
            fee: refund.fee.amount,
        }
    }
}

/// One delivery attempt, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackAttempt {
    pub operation_id: OperationId,
    /// Set for a refund's callback.
    pub refund_id: Option<RefundId>,
    /// Set for a dispute's callback.
    pub dispute: Option<DisputeChange>,
    pub attempt: u32,
    pub at: Timestamp,
    pub duration_ms: i64,
    /// The HTTP status, if an answer came.
    pub http_status: Option<u16>,
    /// Why the attempt failed, if it did (never the body or signature).
    pub error: Option<String>,
}

names! {
    /// Where a callback stands.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum CallbackState {
        Pending = "pending",
        Delivered = "delivered",
        Failed = "failed",
        /// Due while its merchant was disabled: it waits, its attempt count, failures and due
        /// time as they were, and goes back to pending when the merchant is enabled again.
        Held = "held",
    }
}

/// Delays between callback attempts: a schedule of N delays allows at most N + 1 attempts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySchedule(pub Vec<std::time::Duration>);

impl RetrySchedule {
    /// 10 s, 30 s, 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 4 h, 8 h, 12 h, 24 h.
    pub fn standard() -> Self {
        let secs = [
            10, 30, 60, 300, 900, 1_800, 3_600, 7_200, 14_400, 28_800, 43_200, 86_400,
        ];
        Self(
            secs.into_iter()
                .map(std::time::Duration::from_secs)
                .collect(),
        )
    }

    /// The delay before the next attempt after `failed_attempts` failures in this schedule
    /// run, or `None` when the callback should be marked failed.
    pub fn next_delay(&self, failed_attempts: u32) -> Option<std::time::Duration> {
        let index = usize::try_from(failed_attempts).ok()?.checked_sub(1)?;
        self.0.get(index).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_takes_its_sequence_number_between_its_two_parts() {
        let body = CallbackBody::around("{\"sequence\":", "}");
        assert_eq!(body.with_sequence(1), "{\"sequence\":1}");
        assert_eq!(body.with_sequence(42), "{\"sequence\":42}");
    }

    #[test]
    fn standard_schedule_gives_thirteen_attempts() {
        let schedule = RetrySchedule::standard();
        assert_eq!(
            schedule.next_delay(1),
            Some(std::time::Duration::from_secs(10))
        );
        assert_eq!(
            schedule.next_delay(12),
            Some(std::time::Duration::from_secs(86_400))
        );
        assert_eq!(schedule.next_delay(13), None);
        assert_eq!(schedule.next_delay(0), None);
    }
}
