//! Cancels: the merchant's of an operation that has not happened yet, and an operator's at
//! the acquirer. No cancel sets a status directly: the sandbox's is a guarded decline, an
//! acquirer's answer is applied as any other it gives.

use super::payments::Heard;
use super::refund::Refunds;
use super::{CompleteError, ReadError};
use crate::acquirer::{Lookup, PaymentStatus};
use crate::merchant::Merchant;
use crate::operation::{Decline, DeclineCode, Operation, Outcome};
use crate::ports::ProviderVerdict;
use crate::{Direction, OperationId, Timestamp};

/// Why an operator's cancel at the provider did not cancel.
#[derive(Debug, thiserror::Error)]
pub enum CancelError {
    #[error("operation not found")]
    NotFound,
    /// Already final (or the provider had already finished it: that status now applies).
    #[error("the operation is already final")]
    Final(Box<Operation>),
    /// The sandbox's operations are not canceled at a provider.
    #[error("only operations at an acquirer are canceled at their provider")]
    NotAtAcquirer,
    /// The acquirer could not be asked, or its answer is not known: nothing changed; retry.
    #[error("the acquirer's answer is not known; nothing changed")]
    Unavailable(String),
    #[error(transparent)]
    Complete(#[from] CompleteError),
}

impl From<ReadError> for CancelError {
    fn from(error: ReadError) -> Self {
        CancelError::Complete(error.into())
    }
}

impl From<crate::ports::StoreError> for CancelError {
    fn from(error: crate::ports::StoreError) -> Self {
        CancelError::Complete(error.into())
    }
}

impl Refunds {
    /// The merchant's cancel of its operation `id` that has not happened yet: a waiting
    /// deposit, or a payout its provider has not executed, becomes Declined `Canceled` (a
    /// payout's hold released) with its callback. Final already, or executed meanwhile (it
    /// then takes that status): `Final`.
    #[tracing::instrument(skip(self, merchant), fields(merchant.id = %merchant.id, operation.id = %id))]
    pub async fn cancel(
        &self,
        merchant: &Merchant,
        direction: Direction,
        id: OperationId,
    ) -> Result<Operation, CancelError> {
        let operation =
            self.core
                .read(merchant, direction, id)
                .await
                .map_err(|error| match error {
                    ReadError::NotFound => CancelError::NotFound,
                    other => other.into(),
                })?;
        if operation.status().is_final() {
            return Err(CancelError::Final(Box::new(operation)));
        }
        if !operation.is_sandbox() {
            return self.cancel_at_provider(id).await;
        }
        let now = self.core.clock.now();
        if direction == Direction::Withdrawal && operation.due_at().is_some_and(|due| due <= now) {
            // Its settle time has passed: the sandbox has executed it.
            if let Some(outcome) = self.settled_outcome(&operation, now).await? {
                let done = self.settle_or_stored(&operation, outcome).await?;
                return Err(CancelError::Final(Box::new(done)));
            }
        }
        let canceled = Outcome::Decline(Decline::new(DeclineCode::Canceled));
        match self.core.finish(&operation, canceled).await {
            Ok(done) => Ok(done),
            Err(CompleteError::InvalidState) => {
                Err(CancelError::Final(Box::new(self.core.operation(id).await?)))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// What the sandbox decided of a payout whose settle time has come; `None` if nothing yet.
    async fn settled_outcome(
        &self,
        payout: &Operation,
        now: Timestamp,
    ) -> Result<Option<Outcome>, CompleteError> {
        Ok(match self.calls.provider.poll_payout(payout, now).await? {
            ProviderVerdict::Approve => Some(Outcome::Approve),
            ProviderVerdict::Decline(decline) => Some(Outcome::Decline(decline)),
            ProviderVerdict::Pending(_) => None,
        })
    }

    /// Finishes `operation` with `outcome`, or, if another writer finished it first, the
    /// stored operation.
    async fn settle_or_stored(
        &self,
        operation: &Operation,
        outcome: Outcome,
    ) -> Result<Operation, CompleteError> {
        match self.core.finish(operation, outcome).await {
            Ok(done) => Ok(done),
            Err(CompleteError::InvalidState) => Ok(self.core.operation(operation.id()).await?),
            Err(e) => Err(e),
        }
    }

    /// Asks the acquirer to cancel a processing operation (after resolving the acquirer's id by
    /// reference when it is not known) and applies its answer: `canceled` declines it as
    /// `Canceled`; a final status the payment already had applies as it is (and is `Final`).
    /// No operator action sets a status directly.
    #[tracing::instrument(skip(self), fields(operation.id = %id))]
    pub async fn cancel_at_provider(&self, id: OperationId) -> Result<Operation, CancelError> {
        let operation = self.core.operation(id).await.map_err(|error| match error {
            ReadError::NotFound => CancelError::NotFound,
            other => other.into(),
        })?;
        if operation.status().is_final() {
            return Err(CancelError::Final(Box::new(operation)));
        }
        if operation.is_sandbox() {
            return Err(CancelError::NotAtAcquirer);
        }
        let attempt = self
            .core
            .current_attempt(id)
            .await?
            .ok_or(CancelError::NotAtAcquirer)?;
        let acquirer = self
            .calls
            .providers
            .acquirer(&attempt.provider)
            .await?
            .ok_or(CancelError::NotAtAcquirer)?;
        let now = self.core.clock.now();
        let acquirer_id = match &attempt.acquirer_id {
            Some(known) => known.clone(),
            None => match self.calls.acquirer.find(&acquirer, id).await {
                Lookup::Found(payment) if payment.status.is_final() => {
                    let current = self
                        .core
                        .apply_payment(&operation, attempt, &payment, Heard::Read)
                        .await?;
                    return Err(CancelError::Final(Box::new(current)));
                }
                Lookup::Found(payment) => payment.id,
                Lookup::NotFound
                    if now >= crate::acquirer::not_found_final_at(attempt.created_at) =>
                {
                    let done = self
                        .core
                        .finish(
                            &operation,
                            Outcome::Decline(Decline::new(DeclineCode::Canceled)),
                        )
                        .await?;
                    return Ok(done);
                }
                Lookup::NotFound => {
                    return Err(CancelError::Unavailable(
                        "the acquirer does not know the payment yet".into(),
                    ))
                }
                Lookup::Failed(reason) => return Err(CancelError::Unavailable(reason)),
            },
        };
        match self.calls.acquirer.cancel(&acquirer, &acquirer_id).await {
            Lookup::Found(payment) if payment.id == acquirer_id => {
                let canceled = payment.status == PaymentStatus::Canceled;
                let current = self
                    .core
                    .apply_payment(&operation, attempt, &payment, Heard::Read)
                    .await?;
                if !current.status().is_final() {
                    Err(CancelError::Unavailable(format!(
                        "the acquirer answered {} and did not cancel",
                        payment.status.as_str()
                    )))
                } else if canceled && current.status() != crate::Status::Approved {
                    Ok(current)
                } else {
                    Err(CancelError::Final(Box::new(current)))
                }
            }
            Lookup::Found(_) => Err(CancelError::Unavailable(
                "the acquirer answered for another payment".into(),
            )),
            Lookup::NotFound => Err(CancelError::Unavailable(
                "the acquirer does not know the payment".into(),
            )),
            Lookup::Failed(reason) => Err(CancelError::Unavailable(reason)),
        }
    }
}
