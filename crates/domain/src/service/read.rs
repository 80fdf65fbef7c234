//! Reading operations, balances and refunds (operators' balance adjustments are
//! `crate::operator`'s).

use std::sync::Arc;

use super::core::Core;
use super::ReadError;
use crate::ledger::Balance;
use crate::merchant::Merchant;
use crate::operation::Operation;
use crate::refund::Refund;
use crate::{Direction, MerchantId, MerchantOperationId, OperationId, Status};

/// What merchants, pages and operators read.
#[derive(Clone)]
pub struct Reads {
    pub(super) core: Arc<Core>,
}

impl Reads {
    /// The merchant's operation of `direction`; another merchant's is `NotFound`.
    pub async fn read(
        &self,
        merchant: &Merchant,
        direction: Direction,
        id: OperationId,
    ) -> Result<Operation, ReadError> {
        self.core.read(merchant, direction, id).await
    }

    /// The merchant's operation of `direction` with this merchantOperationId.
    pub async fn read_by_merchant_operation_id(
        &self,
        merchant: &Merchant,
        direction: Direction,
        moid: &MerchantOperationId,
    ) -> Result<Operation, ReadError> {
        self.core
            .store
            .find_by_merchant_operation_id(&merchant.id, direction, moid)
            .await?
            .map(|(op, _)| op)
            .ok_or(ReadError::NotFound)
    }

    /// An operation by id, whoever owns it (for hosted pages and the sandbox).
    pub async fn operation(&self, id: OperationId) -> Result<Operation, ReadError> {
        self.core.operation(id).await
    }

    /// An operation by id whose current attempt is with `provider`; any other is `NotFound`,
    /// as if unknown (a provider's own surfaces, such as the sandbox's, act on its operations
    /// only).
    pub async fn operation_of_provider(
        &self,
        id: OperationId,
        provider: &str,
    ) -> Result<Operation, ReadError> {
        self.core.operation_of_provider(id, provider).await
    }

    /// The merchant's balances.
    pub async fn balances(&self, merchant: &MerchantId) -> Result<Vec<Balance>, ReadError> {
        Ok(self.core.store.balances(merchant).await?)
    }

    /// The refunds of `operation`, oldest first: only an approved deposit can have any, so
    /// nothing is read for any other.
    pub async fn refunds_of(&self, operation: &Operation) -> Result<Vec<Refund>, ReadError> {
        if operation.direction() != Direction::Deposit || operation.status() != Status::Approved {
            return Ok(Vec::new());
        }
        Ok(self.core.refunds.refunds_of(operation.id()).await?)
    }
}
