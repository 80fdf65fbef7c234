//! The hosted pages' use cases: a user pays or decides on a waiting deposit.

use std::sync::Arc;

use super::core::Core;
use super::steps::Steps;
use super::{CheckoutError, CompleteError};
use crate::operation::{Action, Operation, Outcome};
use crate::ports::{HostedCheckout, ProviderVerdict};
use crate::{CardDetails, Direction, OperationId, PaymentMethod};

/// Hosted pages over the gateway's checkout steps and the provider's checkout side.
#[derive(Clone)]
pub struct Checkout {
    core: Arc<Core>,
    hosted: Arc<dyn HostedCheckout>,
}

impl Checkout {
    /// The pages of `hosted` on the same stores, clock and process state as `steps`.
    pub fn new(steps: &Steps, hosted: Arc<dyn HostedCheckout>) -> Self {
        Self {
            core: Arc::clone(&steps.core),
            hosted,
        }
    }

    /// The deposit a page shows; payouts, and operations of other providers, are `NotFound`.
    pub async fn deposit(&self, id: OperationId) -> Result<Operation, CheckoutError> {
        let operation = self
            .core
            .operation_of_provider(id, self.hosted.provider())
            .await?;
        if operation.direction() != Direction::Deposit {
            return Err(CheckoutError::NotFound);
        }
        Ok(operation)
    }

    /// Finishes a processing operation of this provider (deposit or payout) the way a scripted
    /// test asks; another provider's operation is `NotFound`, as if unknown.
    #[tracing::instrument(skip(self, outcome), fields(operation.id = %id))]
    pub async fn complete(
        &self,
        id: OperationId,
        outcome: Outcome,
    ) -> Result<Operation, CompleteError> {
        let operation = self
            .core
            .operation_of_provider(id, self.hosted.provider())
            .await?;
        self.core.complete_loaded(&operation, outcome).await
    }

    /// The banks the SBP page offers, as (id, display name).
    pub fn sbp_banks(&self) -> Vec<(String, String)> {
        self.hosted.sbp_banks()
    }

    /// Pays a waiting card deposit with the typed card (checked first: a bad card changes nothing).
    #[tracing::instrument(skip_all, fields(operation.id = %id))]
    pub async fn pay_by_card(
        &self,
        id: OperationId,
        pan: &str,
        expiry: &str,
        cvc: &str,
    ) -> Result<Operation, CheckoutError> {
        let operation = self.waiting(id, |m| m == PaymentMethod::Card).await?;
        let today = self.core.clock.now().year_month();
        let card = CardDetails::parse(pan, expiry, cvc, today).map_err(CheckoutError::Invalid)?;
        let verdict = self
            .hosted
            .pay_by_card(&operation, &card)
            .await
            .map_err(|e| CheckoutError::Unavailable(Box::new(e)))?;
        self.settle(operation, verdict).await
    }

    /// The user's Confirm (`true`) or Reject (`false`) on a bank page or the QR bank app.
    #[tracing::instrument(skip_all, fields(operation.id = %id, approve))]
    pub async fn decide(&self, id: OperationId, approve: bool) -> Result<Operation, CheckoutError> {
        let operation = self.waiting(id, |m| m != PaymentMethod::Card).await?;
        let verdict = self
            .hosted
            .user_decision(&operation, approve)
            .await
            .map_err(|e| CheckoutError::Unavailable(Box::new(e)))?;
        self.settle(operation, verdict).await
    }

    /// A processing deposit with a redirect or QR action whose method fits the page.
    async fn waiting(
        &self,
        id: OperationId,
        fits: impl Fn(PaymentMethod) -> bool,
    ) -> Result<Operation, CheckoutError> {
        let operation = self.deposit(id).await?;
        let hosted = matches!(operation.action(), Some(Action::Redirect { .. }))
            || (operation.method() == PaymentMethod::SbpQr
                && matches!(operation.action(), Some(Action::Requisites { .. })));
        if operation.status().is_final() || !hosted || !fits(operation.method()) {
            return Err(CheckoutError::NotWaiting(Box::new(operation)));
        }
        if operation.is_expired(self.core.clock.now()) {
            let expired = Outcome::expired();
            return match self.core.complete_loaded(&operation, expired).await {
                Ok(done) => Err(CheckoutError::NotWaiting(Box::new(done))),
                Err(error) => Err(self.after_failure(id, error).await),
            };
        }
        Ok(operation)
    }

    async fn settle(
        &self,
        operation: Operation,
        verdict: ProviderVerdict,
    ) -> Result<Operation, CheckoutError> {
        let outcome = match verdict {
            ProviderVerdict::Approve => Outcome::Approve,
            ProviderVerdict::Decline(decline) => Outcome::Decline(decline),
            ProviderVerdict::Pending(_) => return Ok(operation),
        };
        match self.core.complete_loaded(&operation, outcome).await {
            Ok(done) => Ok(done),
            Err(error) => Err(self.after_failure(operation.id(), error).await),
        }
    }

    /// A completion that lost a race shows the operation's current state.
    async fn after_failure(&self, id: OperationId, error: CompleteError) -> CheckoutError {
        match error {
            CompleteError::InvalidState => match self.core.operation(id).await {
                Ok(current) => CheckoutError::NotWaiting(Box::new(current)),
                Err(e) => e.into(),
            },
            CompleteError::NotFound => CheckoutError::NotFound,
            CompleteError::Unavailable(why) => CheckoutError::Unavailable(why),
            CompleteError::Unknown(e) => CheckoutError::Unknown(e),
        }
    }
}
