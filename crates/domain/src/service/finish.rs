//! Finishing operations: by the provider, the user, the sandbox, expiry or payout settlement.
//! Every final status is written here, with its moves and its callback, once.

use super::core::Core;
use super::CompleteError;
use crate::ledger::moves_on_finish;
use crate::operation::{Operation, Outcome};
use crate::ports::{Completion, FinishError};
use crate::service::callbacks::callback_for;
use crate::Direction;

impl Core {
    /// Approves or declines a processing operation already read, moving money and queueing
    /// its callback in the same unit of work. A final operation refuses with `InvalidState`;
    /// an expired deposit is declined as `Expired` instead and also refuses.
    pub(super) async fn complete_loaded(
        &self,
        operation: &Operation,
        outcome: Outcome,
    ) -> Result<Operation, CompleteError> {
        let now = self.clock.now();
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

    /// [`Core::finish`] with the status reported for attempt `from_attempt`: written only
    /// while that attempt is still the operation's current one (else `InvalidState`).
    pub(super) async fn finish_from(
        &self,
        operation: &Operation,
        outcome: Outcome,
        from_attempt: Option<u32>,
    ) -> Result<Operation, CompleteError> {
        let now = self.clock.now();
        let done = operation
            .finish(&outcome, now)
            .map_err(|_| CompleteError::InvalidState)?;
        let completion = Completion {
            moves: moves_on_finish(&done),
            callback: callback_for(&done, self.callback_format.as_ref()),
            operation: done,
            from_attempt,
        };
        self.store.finish(&completion).await?;
        tracing::info!(
            operation.id = %completion.operation.id(),
            status = completion.operation.status().name(),
            "operation final"
        );
        Ok(completion.operation)
    }
}

impl From<FinishError> for super::StepError {
    fn from(error: FinishError) -> Self {
        CompleteError::from(error).into()
    }
}
