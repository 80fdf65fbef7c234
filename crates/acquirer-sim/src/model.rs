//! Payments, refunds and disputes as the simulator keeps them, and their JSON views.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

mod disputes;

pub use disputes::{to_millis, Dispute, DisputeStatus, Outcome};

/// The direction of a payment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Money in: the payer completes it on the simulator's page.
    Payin,
    /// Money out to a card or a phone.
    Payout,
}

/// A payment's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Being executed (payouts).
    Pending,
    /// Waiting for the payer on `action.redirectUrl` (payins).
    ActionRequired,
    /// Money moved.
    Succeeded,
    /// Nothing moved; `failureCode` says why.
    Failed,
    /// Canceled before it became final.
    Canceled,
}

impl Status {
    /// Whether the status never changes again.
    pub fn is_final(self) -> bool {
        match self {
            Status::Pending | Status::ActionRequired => false,
            Status::Succeeded | Status::Failed | Status::Canceled => true,
        }
    }
}

/// A refund's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RefundStatus {
    /// Being executed.
    Pending,
    /// Money returned.
    Succeeded,
    /// Nothing returned.
    Failed,
}

/// The acquirer's failure codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureCode {
    /// The card was declined.
    CardDeclined,
    /// The card (payins) or the merchant's float (payouts) lacks funds.
    InsufficientFunds,
    /// No such payout recipient.
    RecipientNotFound,
    /// The payer rejected the payin.
    Rejected,
    /// Declined by the acquirer.
    Declined,
    /// The payin was not completed before `expiresAt`.
    Expired,
    /// The acquirer cannot execute it now.
    ProviderUnavailable,
    /// The issuer cannot be reached.
    IssuerUnavailable,
    /// The request was not acceptable.
    InvalidRequest,
}

/// Where a payout goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recipient {
    /// A card number.
    Card(String),
    /// An SBP phone number.
    Phone(String),
}

impl Recipient {
    /// The card number or phone, as the stats key it.
    pub fn as_str(&self) -> &str {
        match self {
            Recipient::Card(pan) => pan,
            Recipient::Phone(phone) => phone,
        }
    }
}

/// A parsed `POST /v1/payments`: what a payment is asked to be, kept with it.
#[derive(Debug, Clone)]
pub struct Order {
    /// The `Idempotency-Key` header.
    pub key: String,
    /// The creation body as received, for idempotent repeats.
    pub request: Value,
    /// The caller's reference (its operation id).
    pub reference: String,
    /// Payin or payout.
    pub kind: Kind,
    /// The payout's recipient.
    pub recipient: Option<Recipient>,
    /// The caller's payment method name, verbatim.
    pub method: String,
    /// Minor units.
    pub amount: i64,
    /// Currency code, verbatim.
    pub currency: String,
    /// Where the payer's browser goes back (payins).
    pub return_url: Option<String>,
    /// Where notifications go.
    pub notify_url: Option<String>,
    /// Creations received after this are refused.
    pub not_after: Option<OffsetDateTime>,
    /// When a waiting payin expires.
    pub expires_at: Option<OffsetDateTime>,
}

/// A status with a pending start, and a succeeded and a failed end.
pub trait Ends: Copy + PartialEq + Serialize {
    /// Being executed.
    const PENDING: Self;
    /// Money moved.
    const SUCCEEDED: Self;
    /// Nothing moved; the failure code says why.
    const FAILED: Self;
}

impl Ends for Status {
    const PENDING: Self = Status::Pending;
    const SUCCEEDED: Self = Status::Succeeded;
    const FAILED: Self = Status::Failed;
}

impl Ends for RefundStatus {
    const PENDING: Self = RefundStatus::Pending;
    const SUCCEEDED: Self = RefundStatus::Succeeded;
    const FAILED: Self = RefundStatus::Failed;
}

/// Where a payment or a refund stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress<S> {
    /// Current status.
    pub status: S,
    /// Set with `failed`.
    pub failure_code: Option<FailureCode>,
    /// When the status last changed.
    pub updated_at: OffsetDateTime,
}

impl<S: Ends> Progress<S> {
    /// Moves to `status` with `failure_code` at `now` if the status is `from`; whether it moved.
    pub fn advance(
        &mut self,
        from: S,
        status: S,
        failure_code: Option<FailureCode>,
        now: OffsetDateTime,
    ) -> bool {
        if self.status != from {
            return false;
        }
        *self = Progress {
            status,
            failure_code,
            updated_at: now,
        };
        true
    }

    /// Ends a progress at `from`: failed with `failure`, or succeeded; whether it moved.
    pub fn settle(&mut self, from: S, failure: Option<FailureCode>, now: OffsetDateTime) -> bool {
        let status = if failure.is_some() {
            S::FAILED
        } else {
            S::SUCCEEDED
        };
        self.advance(from, status, failure, now)
    }

    /// Adds `status`, `updatedAt` and, when failed, `failureCode` to an answer's `body`.
    fn show(&self, mut body: Value) -> Value {
        body["status"] = json!(self.status);
        body["updatedAt"] = json!(rfc3339(self.updated_at));
        if let (true, Some(code)) = (self.status == S::FAILED, self.failure_code) {
            body["failureCode"] = json!(code);
        }
        body
    }

    /// The notification body of `object` (`payment` or `refund`) `id` at this progress.
    fn notification(&self, object: &str, id: &str, reference: &str) -> Value {
        json!({
            "object": object, "id": id, "reference": reference, "status": self.status,
            "failureCode": self.failure_code, "updatedAt": rfc3339(self.updated_at),
        })
    }
}

/// A payment held in memory.
#[derive(Debug, Clone)]
pub struct Payment {
    /// `acq_...`.
    pub id: String,
    /// What it was created with.
    pub order: Order,
    /// Where it stands.
    pub progress: Progress<Status>,
}

/// A refund held in memory.
#[derive(Debug, Clone)]
pub struct Refund {
    /// `acqr_...`.
    pub id: String,
    /// The caller's reference (its refund id).
    pub reference: String,
    /// The `Idempotency-Key` it was created with.
    pub idempotency_key: String,
    /// The creation body as received, for idempotent repeats.
    pub request: Value,
    /// The refunded payment.
    pub payment_id: String,
    /// Minor units.
    pub amount: i64,
    /// Where it stands.
    pub progress: Progress<RefundStatus>,
}

/// RFC 3339 text of a time (UTC).
pub fn rfc3339(at: OffsetDateTime) -> String {
    // Formatting a UTC time as RFC 3339 only fails for years outside 0..=9999.
    at.format(&Rfc3339).unwrap_or_else(|_| at.to_string())
}

impl Payment {
    /// The payment's JSON answer; `page_base` builds `action.redirectUrl`.
    pub fn view(&self, page_base: &str) -> Value {
        let order = &self.order;
        let mut body = self.progress.show(json!({
            "id": self.id, "reference": order.reference, "kind": order.kind,
            "method": order.method, "amount": order.amount, "currency": order.currency,
        }));
        if self.progress.status == Status::ActionRequired {
            body["action"] = json!({ "redirectUrl": format!("{page_base}/pay/{}", self.id) });
        }
        body
    }

    /// The notification body for the current status.
    pub fn notification(&self) -> Value {
        self.progress
            .notification("payment", &self.id, &self.order.reference)
    }
}

impl Refund {
    /// The refund's JSON answer.
    pub fn view(&self) -> Value {
        self.progress.show(json!({
            "id": self.id, "reference": self.reference,
            "paymentId": self.payment_id, "amount": self.amount,
        }))
    }

    /// The notification body for the current status.
    pub fn notification(&self) -> Value {
        self.progress
            .notification("refund", &self.id, &self.reference)
    }
}
