//! Refunds in the store: creation with its limits, reads and settling.

use serde_json::Value;
use time::OffsetDateTime;

use super::{Created, Store};
use crate::model::{FailureCode, Kind, Refund, RefundStatus, Status};

/// A parsed `POST /v1/payments/{id}/refunds`.
#[derive(Debug, Clone)]
pub struct NewRefund {
    /// The `Idempotency-Key` header.
    pub key: String,
    /// The body as received.
    pub request: Value,
    /// See [`Refund::reference`].
    pub reference: String,
    /// See [`Refund::amount`].
    pub amount: i64,
}

/// Why a refund was not created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefundRefused {
    /// No such payment.
    #[error("no such payment")]
    NoPayment,
    /// Only a succeeded payin can be refunded.
    #[error("only a succeeded payin can be refunded")]
    NotRefundable,
    /// The refunds that have not failed would exceed the payment's amount.
    #[error("refunds would exceed the payment's amount")]
    OverAmount,
}

impl Store {
    /// Creates a refund of a payment; `failure` gives a new one's immediate failure
    /// (an injected decline) and is called only when one is created.
    pub fn create_refund(
        &mut self,
        payment_id: &str,
        new: NewRefund,
        now: OffsetDateTime,
        failure: impl FnOnce() -> Option<FailureCode>,
    ) -> Result<Created<Refund>, RefundRefused> {
        if let Some(existing) = self
            .refund_by_key
            .get(&new.key)
            .and_then(|id| self.refunds.get(id))
        {
            return Ok(
                if existing.request == new.request && existing.payment_id == payment_id {
                    Created::Repeat(existing.clone())
                } else {
                    Created::Conflict(existing.clone())
                },
            );
        }
        if let Some(existing) = self.refund_by_reference(&new.reference) {
            return Ok(Created::Conflict(existing.clone()));
        }
        let payment = self
            .payments
            .get(payment_id)
            .ok_or(RefundRefused::NoPayment)?;
        if payment.kind != Kind::Payin || payment.status != Status::Succeeded {
            return Err(RefundRefused::NotRefundable);
        }
        let refunded: i64 = self
            .refunds
            .values()
            .filter(|refund| {
                refund.payment_id == payment_id && refund.status != RefundStatus::Failed
            })
            .map(|refund| refund.amount)
            .sum();
        if new.amount <= 0 || refunded.saturating_add(new.amount) > payment.amount {
            return Err(RefundRefused::OverAmount);
        }
        let failure_code = failure();
        let refund = Refund {
            id: format!("acqr_{}", uuid::Uuid::new_v4().simple()),
            reference: new.reference,
            idempotency_key: new.key,
            request: new.request,
            payment_id: payment_id.to_owned(),
            amount: new.amount,
            status: if failure_code.is_some() {
                RefundStatus::Failed
            } else {
                RefundStatus::Pending
            },
            failure_code,
            updated_at: now,
        };
        self.refund_by_key
            .insert(refund.idempotency_key.clone(), refund.id.clone());
        self.refund_by_reference
            .insert(refund.reference.clone(), refund.id.clone());
        self.refunds.insert(refund.id.clone(), refund.clone());
        Ok(Created::New(refund))
    }

    /// A refund by id.
    pub fn refund(&self, id: &str) -> Option<&Refund> {
        self.refunds.get(id)
    }

    /// A refund by reference.
    pub fn refund_by_reference(&self, reference: &str) -> Option<&Refund> {
        self.refund_by_reference
            .get(reference)
            .and_then(|id| self.refunds.get(id))
    }

    /// Settles a pending refund: succeeded, or failed with `failure`.
    pub fn settle_refund(
        &mut self,
        id: &str,
        failure: Option<FailureCode>,
        now: OffsetDateTime,
    ) -> Option<Refund> {
        let refund = self.refunds.get_mut(id)?;
        if refund.status != RefundStatus::Pending {
            return None;
        }
        refund.status = if failure.is_some() {
            RefundStatus::Failed
        } else {
            RefundStatus::Succeeded
        };
        refund.failure_code = failure;
        refund.updated_at = now;
        Some(refund.clone())
    }
}
