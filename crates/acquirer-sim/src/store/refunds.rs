//! Refunds in the store: creation with its limits, reads and settling.

use serde_json::Value;
use time::OffsetDateTime;

use super::{Created, Store};
use crate::model::{FailureCode, Kind, Progress, Refund, RefundStatus, Status};

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
        let same_payment = |known: &Refund| known.payment_id == payment_id;
        let known = (self.refunds).existing(&new.key, &new.reference, &new.request, same_payment);
        if let Some(known) = known {
            return Ok(known);
        }
        let payment = self
            .payments
            .get(payment_id)
            .ok_or(RefundRefused::NoPayment)?;
        if payment.order.kind != Kind::Payin || payment.progress.status != Status::Succeeded {
            return Err(RefundRefused::NotRefundable);
        }
        let refunded: i64 = self
            .refunds
            .iter()
            .filter(|refund| {
                refund.payment_id == payment_id && refund.progress.status != RefundStatus::Failed
            })
            .map(|refund| refund.amount)
            .sum();
        if new.amount <= 0 || refunded.saturating_add(new.amount) > payment.order.amount {
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
            progress: Progress {
                status: if failure_code.is_some() {
                    RefundStatus::Failed
                } else {
                    RefundStatus::Pending
                },
                failure_code,
                updated_at: now,
            },
        };
        Ok(self.refunds.insert(refund))
    }
}
