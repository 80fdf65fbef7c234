//! The in-memory ledger of payments and refunds, with the idempotency and status rules.
//! Pure: every function takes `now`, nothing here sleeps or sends.

use std::collections::HashMap;

use serde_json::Value;
use time::OffsetDateTime;

use crate::model::{FailureCode, Kind, Payment, Recipient, Refund, Status};

mod refunds;

pub use refunds::{NewRefund, RefundRefused};

/// A parsed `POST /v1/payments`.
#[derive(Debug, Clone)]
pub struct NewPayment {
    /// The `Idempotency-Key` header.
    pub key: String,
    /// The body as received.
    pub request: Value,
    /// See [`Payment::reference`].
    pub reference: String,
    /// See [`Payment::kind`].
    pub kind: Kind,
    /// See [`Payment::method`].
    pub method: String,
    /// See [`Payment::amount`].
    pub amount: i64,
    /// See [`Payment::currency`].
    pub currency: String,
    /// See [`Payment::return_url`].
    pub return_url: Option<String>,
    /// See [`Payment::notify_url`].
    pub notify_url: Option<String>,
    /// Creations received after this are refused.
    pub not_after: Option<OffsetDateTime>,
    /// See [`Payment::expires_at`].
    pub expires_at: Option<OffsetDateTime>,
    /// See [`Payment::recipient`].
    pub recipient: Option<Recipient>,
}

/// The answer to a creation that was not refused.
#[derive(Debug, Clone)]
pub enum Created<T> {
    /// Created now (201).
    New(T),
    /// The same key and body again: the existing one (200).
    Repeat(T),
    /// The key with another body, or the reference under another key: the existing one (409).
    Conflict(T),
}

/// Why a payment was not created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PaymentRefused {
    /// Received after its `notAfter`.
    #[error("the request arrived after its notAfter")]
    NotAfterPassed,
}

/// The answer to a cancel.
#[derive(Debug, Clone)]
pub enum Cancel {
    /// Canceled now.
    Canceled(Payment),
    /// Already final: as it is.
    AlreadyFinal(Payment),
    /// No such payment.
    NotFound,
}

/// Every payment and refund, with the indexes the API reads by.
#[derive(Debug, Default)]
pub struct Store {
    payments: HashMap<String, Payment>,
    payment_by_key: HashMap<String, String>,
    payment_by_reference: HashMap<String, String>,
    refunds: HashMap<String, Refund>,
    refund_by_key: HashMap<String, String>,
    refund_by_reference: HashMap<String, String>,
}

impl Store {
    /// Creates a payment unless its key or reference is known; `plan` gives the
    /// initial status and failure of a new one, and is called only when one is created.
    pub fn create_payment(
        &mut self,
        new: NewPayment,
        now: OffsetDateTime,
        plan: impl FnOnce(&NewPayment) -> (Status, Option<FailureCode>),
    ) -> Result<Created<Payment>, PaymentRefused> {
        if let Some(existing) = self
            .payment_by_key
            .get(&new.key)
            .and_then(|id| self.payments.get(id))
        {
            return Ok(if existing.request == new.request {
                Created::Repeat(existing.clone())
            } else {
                Created::Conflict(existing.clone())
            });
        }
        if let Some(existing) = self.payment_by_reference(&new.reference) {
            return Ok(Created::Conflict(existing.clone()));
        }
        if new.not_after.is_some_and(|deadline| now > deadline) {
            return Err(PaymentRefused::NotAfterPassed);
        }
        let (status, failure_code) = plan(&new);
        let payment = Payment {
            id: format!("acq_{}", uuid::Uuid::new_v4().simple()),
            reference: new.reference,
            idempotency_key: new.key,
            request: new.request,
            kind: new.kind,
            method: new.method,
            amount: new.amount,
            currency: new.currency,
            return_url: new.return_url,
            notify_url: new.notify_url,
            expires_at: new.expires_at,
            recipient: new.recipient,
            status,
            failure_code,
            updated_at: now,
        };
        self.payment_by_key
            .insert(payment.idempotency_key.clone(), payment.id.clone());
        self.payment_by_reference
            .insert(payment.reference.clone(), payment.id.clone());
        self.payments.insert(payment.id.clone(), payment.clone());
        Ok(Created::New(payment))
    }

    /// A payment by id.
    pub fn payment(&self, id: &str) -> Option<&Payment> {
        self.payments.get(id)
    }

    /// A payment by reference.
    pub fn payment_by_reference(&self, reference: &str) -> Option<&Payment> {
        self.payment_by_reference
            .get(reference)
            .and_then(|id| self.payments.get(id))
    }

    /// Moves a payment that is not final to `status`; `None` if it is unknown or final.
    fn transition(
        &mut self,
        id: &str,
        from: Status,
        status: Status,
        failure_code: Option<FailureCode>,
        now: OffsetDateTime,
    ) -> Option<Payment> {
        let payment = self.payments.get_mut(id)?;
        if payment.status != from {
            return None;
        }
        payment.status = status;
        payment.failure_code = failure_code;
        payment.updated_at = now;
        Some(payment.clone())
    }

    /// Settles a pending payout: succeeded, or failed with `failure`.
    pub fn settle_payout(
        &mut self,
        id: &str,
        failure: Option<FailureCode>,
        now: OffsetDateTime,
    ) -> Option<Payment> {
        let status = if failure.is_some() {
            Status::Failed
        } else {
            Status::Succeeded
        };
        self.transition(id, Status::Pending, status, failure, now)
    }

    /// Finishes a waiting payin: succeeded, or failed with `failure`. `Err` with the
    /// payment as it is when it was not waiting.
    pub fn complete_payin(
        &mut self,
        id: &str,
        failure: Option<FailureCode>,
        now: OffsetDateTime,
    ) -> Option<Result<Payment, Payment>> {
        let current = self.payments.get(id)?.clone();
        let status = if failure.is_some() {
            Status::Failed
        } else {
            Status::Succeeded
        };
        Some(
            self.transition(id, Status::ActionRequired, status, failure, now)
                .ok_or(current),
        )
    }

    /// Fails a payin still waiting at its `expiresAt` with `expired`.
    pub fn expire_payin(&mut self, id: &str, now: OffsetDateTime) -> Option<Payment> {
        let expires_at = self.payments.get(id)?.expires_at?;
        if now < expires_at {
            return None;
        }
        self.transition(
            id,
            Status::ActionRequired,
            Status::Failed,
            Some(FailureCode::Expired),
            now,
        )
    }

    /// Cancels a payment that is not final.
    pub fn cancel(&mut self, id: &str, now: OffsetDateTime) -> Cancel {
        let Some(payment) = self.payments.get_mut(id) else {
            return Cancel::NotFound;
        };
        if payment.status.is_final() {
            return Cancel::AlreadyFinal(payment.clone());
        }
        payment.status = Status::Canceled;
        payment.failure_code = None;
        payment.updated_at = now;
        Cancel::Canceled(payment.clone())
    }

    /// Every payment.
    pub fn payments(&self) -> impl Iterator<Item = &Payment> {
        self.payments.values()
    }

    /// Every refund.
    pub fn refunds(&self) -> impl Iterator<Item = &Refund> {
        self.refunds.values()
    }
}

#[cfg(test)]
mod tests;
