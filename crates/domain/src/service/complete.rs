//! Finishing operations: by the provider, the user, the sandbox, expiry or payout settlement.

use super::{CompleteError, Gateway};
use crate::ledger::moves_on_finish;
use crate::operation::{Operation, Outcome};
use crate::ports::{Completion, FinishError, ProviderVerdict};
use crate::service::callbacks::callback_for;
use crate::{Direction, OperationId};

/// Most operations one sweep looks at.
const SWEEP_BATCH: u32 = 200;

impl Gateway {
    /// Approves or declines a processing operation, moving money and queueing its callback
    /// in the same unit of work. A final operation refuses with `InvalidState`; an expired
    /// deposit is declined as `Expired` instead and also refuses.
    #[tracing::instrument(skip(self, outcome), fields(operation.id = %id))]
    pub async fn complete(
        &self,
        id: OperationId,
        outcome: Outcome,
    ) -> Result<Operation, CompleteError> {
        let operation = self
            .ports
            .store
            .get(id)
            .await?
            .ok_or(CompleteError::NotFound)?;
        self.complete_loaded(&operation, outcome).await
    }

    /// As [`Gateway::complete`], for an operation already read.
    pub(crate) async fn complete_loaded(
        &self,
        operation: &Operation,
        outcome: Outcome,
    ) -> Result<Operation, CompleteError> {
        let now = self.ports.clock.now();
        if operation.direction() == Direction::Deposit && operation.is_expired(now) {
            self.finish(operation, Outcome::expired()).await?;
            return Err(CompleteError::InvalidState);
        }
        self.finish(operation, outcome).await
    }

    /// Writes the final status, its moves and its callback.
    pub(super) async fn finish(
        &self,
        operation: &Operation,
        outcome: Outcome,
    ) -> Result<Operation, CompleteError> {
        self.finish_from(operation, outcome, None).await
    }

    /// [`Gateway::finish`] with the status reported for attempt `from_attempt`: written only
    /// while that attempt is still the operation's current one (else `InvalidState`).
    pub(super) async fn finish_from(
        &self,
        operation: &Operation,
        outcome: Outcome,
        from_attempt: Option<u32>,
    ) -> Result<Operation, CompleteError> {
        let now = self.ports.clock.now();
        let done = operation
            .finish(&outcome, now)
            .map_err(|_| CompleteError::InvalidState)?;
        let completion = Completion {
            moves: moves_on_finish(&done),
            callback: callback_for(&done, self.ports.callback_format.as_ref()),
            operation: done,
            from_attempt,
        };
        self.ports.store.finish(&completion).await?;
        tracing::info!(
            operation.id = %completion.operation.id(),
            status = completion.operation.status().name(),
            "operation final"
        );
        Ok(completion.operation)
    }

    /// Declines processing deposits whose lifetime has passed; returns how many this call declined.
    /// Safe to run in several processes at once: each deposit is declined once.
    pub async fn expire_overdue(&self) -> Result<usize, CompleteError> {
        let now = self.ports.clock.now();
        let ids = self.ports.store.expired_deposits(now, SWEEP_BATCH).await?;
        let mut declined = 0;
        for id in ids {
            let Some(operation) = self.ports.store.get(id).await? else {
                continue;
            };
            match self.finish(&operation, Outcome::expired()).await {
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
        let now = self.ports.clock.now();
        let payouts = self.ports.store.due_payouts(now, SWEEP_BATCH).await?;
        let mut finished = 0;
        for payout in payouts {
            let outcome = match self.ports.provider.poll_payout(&payout, now).await? {
                ProviderVerdict::Approve => Outcome::Approve,
                ProviderVerdict::Decline(decline) => Outcome::Decline(decline),
                ProviderVerdict::Pending(next) => {
                    self.ports.store.postpone(payout.id(), next).await?;
                    continue;
                }
            };
            match self.finish(&payout, outcome).await {
                Ok(_) => finished += 1,
                Err(CompleteError::InvalidState) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(finished)
    }
}

impl From<FinishError> for super::StepError {
    fn from(error: FinishError) -> Self {
        CompleteError::from(error).into()
    }
}
