//! The in-memory ledger of payments, refunds and disputes, with the idempotency and status
//! rules.
//! Pure: every function takes `now`, nothing here sleeps or sends.

use time::OffsetDateTime;

use crate::model::{Ends, FailureCode, Order, Payment, Progress, Refund, Status};

mod disputes;
mod ledger;
mod refunds;

pub use disputes::{DisputeRefused, Disputes, Evidence, Lapse, NewDispute};
pub use ledger::{Ledger, Record};
pub use refunds::{NewRefund, RefundRefused};

/// A parsed `POST /v1/payments`.
pub type NewPayment = Order;

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

/// Every payment, refund and dispute, with the indexes the API reads by.
#[derive(Debug, Default)]
pub struct Store {
    payments: Ledger<Payment>,
    refunds: Ledger<Refund>,
    disputes: Disputes,
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
        let known = (self.payments).existing(&new.key, &new.reference, &new.request, |_| true);
        if let Some(known) = known {
            return Ok(known);
        }
        if new.not_after.is_some_and(|deadline| now > deadline) {
            return Err(PaymentRefused::NotAfterPassed);
        }
        let (status, failure_code) = plan(&new);
        let payment = Payment {
            id: format!("acq_{}", uuid::Uuid::new_v4().simple()),
            order: new,
            progress: Progress {
                status,
                failure_code,
                updated_at: now,
            },
        };
        Ok(self.payments.insert(payment))
    }

    /// Settles a pending payout or refund: succeeded, or failed with `failure`.
    pub fn settle<T: Record>(
        &mut self,
        id: &str,
        failure: Option<FailureCode>,
        now: OffsetDateTime,
    ) -> Option<T> {
        T::ledger(self).update(id, |progress| {
            progress.settle(T::Status::PENDING, failure, now)
        })
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
        let waiting = Status::ActionRequired;
        Some(
            self.payments
                .update(id, |progress| progress.settle(waiting, failure, now))
                .ok_or(current),
        )
    }

    /// Fails a payin still waiting at its `expiresAt` with `expired`.
    pub fn expire_payin(&mut self, id: &str, now: OffsetDateTime) -> Option<Payment> {
        if now < self.payments.get(id)?.order.expires_at? {
            return None;
        }
        let expired = Some(FailureCode::Expired);
        self.payments.update(id, |progress| {
            progress.advance(Status::ActionRequired, Status::Failed, expired, now)
        })
    }

    /// Cancels a payment that is not final.
    pub fn cancel(&mut self, id: &str, now: OffsetDateTime) -> Cancel {
        let Some(payment) = self.payments.get_mut(id) else {
            return Cancel::NotFound;
        };
        let from = payment.progress.status;
        if from.is_final() {
            return Cancel::AlreadyFinal(payment.clone());
        }
        payment.progress.advance(from, Status::Canceled, None, now);
        Cancel::Canceled(payment.clone())
    }

    /// Every payment, by id and by reference.
    pub fn payments(&self) -> &Ledger<Payment> {
        &self.payments
    }

    /// Every refund, by id and by reference.
    pub fn refunds(&self) -> &Ledger<Refund> {
        &self.refunds
    }
}

#[cfg(test)]
mod tests;
