//! Reading operations and balances, and operators' balance adjustments.

use super::{CompleteError, Gateway, ReadError};
use crate::ledger::{manual_move, Balance};
use crate::merchant::Merchant;
use crate::operation::Operation;
use crate::ports::FinishError;
use crate::{Amount, Currency, Direction, MerchantId, MerchantOperationId, OperationId};

/// Why an operator's balance adjustment was refused.
#[derive(Debug, thiserror::Error)]
pub enum AdjustError {
    #[error("the available balance is lower than the debit")]
    InsufficientBalance,
    #[error(transparent)]
    Other(#[from] CompleteError),
}

impl Gateway {
    /// The merchant's operation of `direction`; another merchant's is `NotFound`.
    pub async fn read(
        &self,
        merchant: &Merchant,
        direction: Direction,
        id: OperationId,
    ) -> Result<Operation, ReadError> {
        match self.ports.store.get(id).await? {
            Some(op) if *op.merchant_id() == merchant.id && op.direction() == direction => Ok(op),
            _ => Err(ReadError::NotFound),
        }
    }

    /// The merchant's operation of `direction` with this merchantOperationId.
    pub async fn read_by_merchant_operation_id(
        &self,
        merchant: &Merchant,
        direction: Direction,
        moid: &MerchantOperationId,
    ) -> Result<Operation, ReadError> {
        self.ports
            .store
            .find_by_merchant_operation_id(&merchant.id, direction, moid)
            .await?
            .map(|(op, _)| op)
            .ok_or(ReadError::NotFound)
    }

    /// An operation by id, whoever owns it (for hosted pages and the sandbox).
    pub async fn operation(&self, id: OperationId) -> Result<Operation, ReadError> {
        self.ports.store.get(id).await?.ok_or(ReadError::NotFound)
    }

    /// An operation by id whose route belongs to `provider`; any other is `NotFound`, as if
    /// unknown (a provider's own surfaces, such as the sandbox's, act on its operations only).
    pub async fn operation_of_provider(
        &self,
        id: OperationId,
        provider: &str,
    ) -> Result<Operation, ReadError> {
        let operation = self.operation(id).await?;
        match self.provider_of(&operation).await? {
            Some(found) if found == provider => Ok(operation),
            _ => Err(ReadError::NotFound),
        }
    }

    /// The merchant's balances.
    pub async fn balances(&self, merchant: &MerchantId) -> Result<Vec<Balance>, ReadError> {
        Ok(self.ports.store.balances(merchant).await?)
    }

    /// An operator's credit or debit of a balance, written as a ledger entry.
    pub async fn adjust_balance(
        &self,
        merchant: MerchantId,
        currency: Currency,
        amount: Amount,
        credit: bool,
    ) -> Result<(), AdjustError> {
        let adjustment = manual_move(merchant, currency, amount, credit, self.ports.clock.now());
        match self.ports.store.adjust_balance(&adjustment).await {
            Ok(()) => Ok(()),
            Err(FinishError::InsufficientBalance) => Err(AdjustError::InsufficientBalance),
            Err(e) => Err(AdjustError::Other(e.into())),
        }
    }
}
