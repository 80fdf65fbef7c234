//! The [`IdGenerator`] port.

use crate::{DisputeId, MerchantId, OperationId, RefundId};

/// New operation and merchant ids.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait IdGenerator: Send + Sync {
    /// A fresh, never-used operation id.
    fn operation_id(&self) -> OperationId;

    /// A fresh merchant id (a UUID in text form), for a merchant created without one.
    fn merchant_id(&self) -> MerchantId;

    /// A fresh, never-used refund id (never an operation's id either).
    fn refund_id(&self) -> RefundId;

    /// A fresh, never-used dispute id (never an operation's or a refund's either).
    fn dispute_id(&self) -> DisputeId;

    /// A fresh id of a dispute's status change, its callback's key.
    fn change_id(&self) -> uuid::Uuid;
}
