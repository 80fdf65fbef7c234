//! A refund's statuses, however they were heard (the refund call's answer, a notification,
//! the reconciler's read, the sandbox's settlement): a final one is written once, with its
//! moves and its callback; a pending one is read again later.

use super::core::Core;
use super::{millis, CompleteError};
use crate::acquirer::{refund_outcome_of, AcquirerRefund, MAX_READ_GAP_SECS};
use crate::ledger::moves_on_refund_finish;
use crate::operation::Outcome;
use crate::ports::{FinishError, RefundCompletion};
use crate::refund::Refund;
use crate::service::callbacks::refund_callback_for;
use crate::RefundId;

impl Core {
    /// Applies what the acquirer reports of a refund: a final status finishes it; `pending`
    /// records the acquirer's id and reads it again after a quiet while.
    pub(super) async fn apply_refund(
        &self,
        mut refund: Refund,
        reported: &AcquirerRefund,
    ) -> Result<Refund, CompleteError> {
        refund.acquirer_id = Some(reported.id.clone());
        if let Some(outcome) = refund_outcome_of(reported) {
            return self.finish_refund(&refund, outcome).await;
        }
        let now = self.clock.now();
        refund.unknown_since = None;
        let quiet = millis(self.reconcile_after);
        refund.check_at = Some(now.plus_millis(quiet.min(MAX_READ_GAP_SECS * 1000)));
        refund.updated_at = now;
        self.save_refund(refund).await
    }

    /// Writes a processing refund's new state; if it became final meanwhile, the stored one.
    pub(super) async fn save_refund(&self, refund: Refund) -> Result<Refund, CompleteError> {
        match self.refunds.save_refund(&refund).await {
            Ok(()) => Ok(refund),
            Err(FinishError::NotProcessing) => self.stored_refund(refund.id).await,
            Err(e) => Err(e.into()),
        }
    }

    /// Writes a refund's final status with its moves and callback. If another writer
    /// finished it first, its status stands and is returned.
    pub(super) async fn finish_refund(
        &self,
        refund: &Refund,
        outcome: Outcome,
    ) -> Result<Refund, CompleteError> {
        let now = self.clock.now();
        let Ok(done) = refund.finish(&outcome, now) else {
            return Ok(refund.clone());
        };
        let completion = RefundCompletion {
            moves: moves_on_refund_finish(&done),
            callback: refund_callback_for(&done, self.callback_format.as_ref()),
            refund: done,
        };
        match self.refunds.finish_refund(&completion).await {
            Ok(()) => {
                tracing::info!(refund.id = %completion.refund.id, status = completion.refund.status().name(), "refund final");
                Ok(completion.refund)
            }
            Err(FinishError::NotProcessing) => self.stored_refund(refund.id).await,
            Err(e) => Err(e.into()),
        }
    }

    async fn stored_refund(&self, id: RefundId) -> Result<Refund, CompleteError> {
        self.refunds
            .refund(id)
            .await?
            .ok_or_else(|| CompleteError::Unknown(anyhow::anyhow!("refund {id} vanished")))
    }
}
