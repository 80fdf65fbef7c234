//! The shared core every service finishes movements with: the stores, the clock, the
//! callbacks' format and this process's memory of the statuses it applied last.
//!
//! It sits below the services and knows none of them. Its guarded finishing steps are in
//! `finish` (final statuses), `payments` (statuses an acquirer reports) and `refund_finish`
//! (a refund's statuses).

use std::sync::Arc;
use std::time::Duration;

use super::recent::Recent;
use super::ReadError;
use crate::attempt::{self, Attempt};
use crate::merchant::Merchant;
use crate::operation::Operation;
use crate::ports::{
    CallbackFormat, Clock, DisputeStore, IdGenerator, OperationStore, RefundStore, StoreError,
};
use crate::{Direction, OperationId};

/// The ports and per-process state that finishing a movement needs.
pub(super) struct Core {
    pub(super) store: Arc<dyn OperationStore>,
    /// Refunds, beside the operations they refund (the same database).
    pub(super) refunds: Arc<dyn RefundStore>,
    /// Disputes, beside the deposits they dispute (the same database): chargebacks are
    /// finished here as refunds are.
    pub(super) disputes: Arc<dyn DisputeStore>,
    /// Ids of the disputes and dispute changes the acquirers' chargebacks make.
    pub(super) ids: Arc<dyn IdGenerator>,
    pub(super) clock: Arc<dyn Clock>,
    /// The wire format of callback bodies.
    pub(super) callback_format: Arc<dyn CallbackFormat>,
    /// The latest non-final payment status this process applied to each acquirer operation.
    pub(super) recent: Recent,
    /// How long a processing acquirer operation may stay quiet before the reconciler reads
    /// it (`GATEWAY_RECONCILE_AFTER`).
    pub(super) reconcile_after: Duration,
}

impl Core {
    /// An operation by id, whoever owns it.
    pub(super) async fn operation(&self, id: OperationId) -> Result<Operation, ReadError> {
        self.store.get(id).await?.ok_or(ReadError::NotFound)
    }

    /// The merchant's operation of `direction`; another merchant's is `NotFound`.
    pub(super) async fn read(
        &self,
        merchant: &Merchant,
        direction: Direction,
        id: OperationId,
    ) -> Result<Operation, ReadError> {
        match self.store.get(id).await? {
            Some(op) if *op.merchant_id() == merchant.id && op.direction() == direction => Ok(op),
            _ => Err(ReadError::NotFound),
        }
    }

    /// An operation by id whose current attempt is with `provider`; any other is `NotFound`,
    /// as if unknown.
    pub(super) async fn operation_of_provider(
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

    /// The operation's current attempt: the last one tried.
    pub(super) async fn current_attempt(
        &self,
        id: OperationId,
    ) -> Result<Option<Attempt>, StoreError> {
        Ok(attempt::current(&self.store.attempts(id).await?).cloned())
    }
}
