//! What providers answer, and the sweeps that find out when they do not: notifications
//! (`notifications`), the reconciler's reads (`reconcile`), refunds' settlement
//! (`refund_checks`), the sandbox's scripted completions, expiry and payout settlement (here).

use std::sync::Arc;

use super::calls::Calls;
use super::core::Core;
use super::CompleteError;
use crate::operation::{Operation, Outcome};
use crate::ports::ProviderVerdict;
use crate::OperationId;

/// Most operations one sweep looks at.
const SWEEP_BATCH: u32 = 200;

/// Providers' answers and the reconciliation of what they did not answer.
#[derive(Clone)]
pub struct Answers {
    pub(super) core: Arc<Core>,
    pub(super) calls: Arc<Calls>,
}

impl Answers {
    /// Approves or declines a processing operation, moving money and queueing its callback
    /// in the same unit of work. A final operation refuses with `InvalidState`; an expired
    /// deposit is declined as `Expired` instead and also refuses.
    #[tracing::instrument(skip(self, outcome), fields(operation.id = %id))]
    pub async fn complete(
        &self,
        id: OperationId,
        outcome: Outcome,
    ) -> Result<Operation, CompleteError> {
        let operation = self.core.operation(id).await?;
        self.core.complete_loaded(&operation, outcome).await
    }

    /// Declines processing deposits whose lifetime has passed; returns how many this call declined.
    /// Safe to run in several processes at once: each deposit is declined once.
    pub async fn expire_overdue(&self) -> Result<usize, CompleteError> {
        let now = self.core.clock.now();
        let ids = self.core.store.expired_deposits(now, SWEEP_BATCH).await?;
        let mut declined = 0;
        for id in ids {
            let Some(operation) = self.core.store.get(id).await? else {
                continue;
            };
            match self.core.finish(&operation, Outcome::expired()).await {
                Ok(_) => declined += 1,
                Err(CompleteError::InvalidState) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(declined)
    }

    /// Asks the provider about processing payouts that are due, and finishes those it decided;
    /// returns how many this call finished.
    pub async fn settle_due_payouts(&self) -> Result<usize, CompleteError> {
        let now = self.core.clock.now();
        let payouts = self.core.store.due_payouts(now, SWEEP_BATCH).await?;
        let mut finished = 0;
        for payout in payouts {
            let outcome = match self.calls.provider.poll_payout(&payout, now).await? {
                ProviderVerdict::Approve => Outcome::Approve,
                ProviderVerdict::Decline(decline) => Outcome::Decline(decline),
                ProviderVerdict::Pending(next) => {
                    self.core.store.postpone(payout.id(), next).await?;
                    continue;
                }
            };
            match self.core.finish(&payout, outcome).await {
                Ok(_) => finished += 1,
                Err(CompleteError::InvalidState) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(finished)
    }
}
