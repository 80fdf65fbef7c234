//! Reading operations and balances (operators' balance adjustments are `crate::operator`'s).

use super::{Gateway, ReadError};
use crate::ledger::Balance;
use crate::merchant::Merchant;
use crate::operation::Operation;
use crate::{Direction, MerchantId, MerchantOperationId, OperationId};

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

    /// An operation by id whose current attempt is with `provider`; any other is `NotFound`,
    /// as if unknown (a provider's own surfaces, such as the sandbox's, act on its operations
    /// only).
    pub async fn operation_of_provider(
        &self,
        id: OperationId,
        provider: &str,
    ) -> Result<Operation, ReadError> {
        let operation = self.operation(id).await?;
        if operation.provider() == provider {
            Ok(operation)
        } else {
            Err(ReadError::NotFound)
        }
    }

    /// The merchant's balances.
    pub async fn balances(&self, merchant: &MerchantId) -> Result<Vec<Balance>, ReadError> {
        Ok(self.ports.store.balances(merchant).await?)
    }
}
