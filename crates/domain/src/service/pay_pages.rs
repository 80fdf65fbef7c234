//! What the payment pages of an acquirer deposit show: `/pay/{id}` sends the payer on to the
//! acquirer's page, `/pay/{id}/return` is where the acquirer sends them back. Either may read
//! a processing deposit's payment from the acquirer, through the gates of
//! [`super::page_reads`]: at most one read per operation per [`READ_GAP`], across requests
//! and processes.

use futures::future::{self, Either};

use super::page_reads::{Turn, FOLLOW_WAIT, READ_GAP};
use super::payments::{same_payment, Heard};
use super::steps::Steps;
use super::ReadError;
use crate::acquirer::Lookup;
use crate::attempt::Attempt;
use crate::operation::Operation;
use crate::ports::Chain;
use crate::{Direction, OperationId};

/// What `/pay/{id}` shows for an acquirer deposit.
#[derive(Debug, Clone, PartialEq)]
pub enum PayPage {
    /// The deposit is final: its result.
    Final(Operation),
    /// The acquirer's own payment page.
    Acquirer(String),
    /// Not known yet: a page that refreshes.
    Processing(Operation),
}

impl Steps {
    /// What `/pay/{id}` shows for an acquirer deposit; a sandbox operation or a payout is
    /// `NotFound` here. Without the acquirer's page yet, it reads the payment (a page read).
    pub async fn pay_page(&self, id: OperationId) -> Result<PayPage, ReadError> {
        let operation = self.acquirer_deposit(id).await?;
        if operation.status().is_final() {
            return Ok(PayPage::Final(operation));
        }
        let Some(attempt) = self.core.current_attempt(id).await? else {
            return Ok(PayPage::Processing(operation));
        };
        if let Some(url) = &attempt.redirect_url {
            return Ok(PayPage::Acquirer(url.clone()));
        }
        let operation = self.page_read(operation, attempt).await?;
        if operation.status().is_final() {
            return Ok(PayPage::Final(operation));
        }
        match self.core.current_attempt(id).await? {
            Some(Attempt {
                redirect_url: Some(url),
                ..
            }) => Ok(PayPage::Acquirer(url)),
            _ => Ok(PayPage::Processing(operation)),
        }
    }

    /// For `/pay/{id}/return`: an acquirer deposit still processing is read from the acquirer
    /// (a page read). Returns the deposit as it then stands.
    pub async fn pay_return(&self, id: OperationId) -> Result<Operation, ReadError> {
        let operation = self.acquirer_deposit(id).await?;
        if operation.status().is_final() {
            return Ok(operation);
        }
        match self.core.current_attempt(id).await? {
            Some(attempt) => self.page_read(operation, attempt).await,
            None => Ok(operation),
        }
    }

    /// Reads the payment of `attempt` for a page, unless this process is reading it or read
    /// it within [`READ_GAP`] (the request then waits for that read and takes what is
    /// stored), or another process claimed a read of it within [`READ_GAP`] (the request
    /// takes what is stored: the winner's result arrives there). Returns the operation as it
    /// then stands.
    async fn page_read(
        &self,
        operation: Operation,
        attempt: Attempt,
    ) -> Result<Operation, ReadError> {
        let id = operation.id();
        let now = self.core.clock.now();
        match self.page_reads.turn(id, now) {
            Turn::Lead(_reading) => {
                let claimed = self.core.store.claim_page_read(id, now, READ_GAP).await;
                match claimed {
                    Ok(true) => self.read_once(operation, attempt).await,
                    Ok(false) => {
                        tracing::debug!(operation.id = %id, "another process read the payment for a page just now");
                        Ok(operation)
                    }
                    Err(error) => {
                        tracing::warn!(operation.id = %id, error = %Chain(&error), "page read not claimed");
                        Err(error.into())
                    }
                }
            }
            Turn::Follow(over) => {
                let waited = future::select(over, self.core.clock.sleep(FOLLOW_WAIT)).await;
                if matches!(waited, Either::Right(_)) {
                    tracing::debug!(operation.id = %id, "the page read followed is still going on");
                }
                self.acquirer_deposit(id).await
            }
        }
    }

    /// Whether `id` is an acquirer deposit.
    pub async fn acquirer_deposit(&self, id: OperationId) -> Result<Operation, ReadError> {
        let operation = self.core.operation(id).await?;
        if operation.is_sandbox() || operation.direction() != Direction::Deposit {
            return Err(ReadError::NotFound);
        }
        Ok(operation)
    }

    /// Reads the payment of `attempt` once and applies what is found; any failure leaves the
    /// operation as it was (the reconciler reads it later).
    async fn read_once(
        &self,
        operation: Operation,
        attempt: Attempt,
    ) -> Result<Operation, ReadError> {
        let Some(acquirer) = self.calls.providers.acquirer(&attempt.provider).await? else {
            return Ok(operation);
        };
        match self.calls.acquirer.find(&acquirer, operation.id()).await {
            Lookup::Found(payment) if same_payment(&attempt, &payment) => {
                match self
                    .core
                    .apply_payment(&operation, attempt, &payment, Heard::Notification)
                    .await
                {
                    Ok(current) => Ok(current),
                    Err(error) => {
                        tracing::warn!(operation.id = %operation.id(), error = %Chain(&error), "payment read but not applied");
                        Ok(operation)
                    }
                }
            }
            _ => Ok(operation),
        }
    }
}
