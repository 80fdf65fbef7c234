//! The [`RefundStore`] port: refunds, their holds and final statuses.

use async_trait::async_trait;

use crate::callback::{QueuedCallback, RefundCallbackData};
use crate::ledger::BalanceMove;
use crate::refund::Refund;
use crate::signature::Fingerprint;
use crate::{MerchantId, MerchantRefundId, OperationId, RefundId, Timestamp};

use super::{FinishError, StoreError};

/// A new refund and its hold, in one unit of work.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRefund {
    pub refund: Refund,
    /// Keyed hash of the deposit's id and the canonical request, present when a
    /// merchantRefundId was given.
    pub fingerprint: Option<Fingerprint>,
    /// `available -= amount; held += amount`, applied only if the available balance covers it.
    pub hold: BalanceMove,
}

/// Why a new refund was not stored. Nothing at all was written in any case; the checks run
/// in this order.
#[derive(Debug, thiserror::Error)]
pub enum RefundInsertError {
    /// The merchant has a refund with this merchantRefundId (even a concurrent insert's).
    #[error("a refund with this merchantRefundId exists")]
    Duplicate,
    /// The deposit is not approved.
    #[error("only an approved deposit can be refunded")]
    NotApproved,
    /// The deposit's refunds that are not declined, with this one, would exceed its amount.
    #[error("the refunds would exceed the deposit's amount")]
    ExceedsAmount,
    /// The hold found the available balance too low.
    #[error("insufficient balance")]
    InsufficientBalance,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A refund's final status and everything written with it, in one unit of work.
#[derive(Debug, Clone, PartialEq)]
pub struct RefundCompletion {
    /// The refund after the change; stored only if it is still processing in storage.
    pub refund: Refund,
    pub moves: Vec<BalanceMove>,
    pub callback: Option<QueuedCallback<RefundCallbackData>>,
}

/// Refunds: their records, holds and final statuses, beside the operations they refund.
///
/// Every method is one transaction: it either writes everything or nothing.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait RefundStore: Send + Sync {
    /// Stores a new refund with its hold. Under a lock on the refunded deposit (so that
    /// concurrent refunds of one deposit are checked one after the other), it MUST check, in
    /// this order: the merchantRefundId is free (`Duplicate`), the deposit is approved
    /// (`NotApproved`), the deposit's refunds that are not declined plus this one do not exceed
    /// its amount (`ExceedsAmount`), the available balance covers the hold
    /// (`InsufficientBalance`); and write nothing when one fails.
    async fn insert_refund(&self, new: &NewRefund) -> Result<(), RefundInsertError>;

    /// Writes a refund's final status with its moves and callback, guarded so it happens at
    /// most once: MUST return `NotProcessing` (writing nothing) if the stored refund is final.
    async fn finish_refund(&self, completion: &RefundCompletion) -> Result<(), FinishError>;

    /// Writes what is known of a processing refund (its acquirer id, next check, unknown-since
    /// and `updated_at`), and ends any lease on it. MUST return `NotProcessing` (writing
    /// nothing) if the stored refund is final; a stored acquirer id is kept.
    async fn save_refund(&self, refund: &Refund) -> Result<(), FinishError>;

    /// The refund with this id; `Ok(None)` if there is none.
    async fn refund(&self, id: RefundId) -> Result<Option<Refund>, StoreError>;

    /// The refunds of operation `id`, oldest first (ties by id).
    async fn refunds_of(&self, id: OperationId) -> Result<Vec<Refund>, StoreError>;

    /// The merchant's refund with this merchantRefundId, with the fingerprint of the request
    /// that made it; `Ok(None)` if there is none.
    async fn find_by_merchant_refund_id(
        &self,
        merchant: &MerchantId,
        merchant_refund_id: &MerchantRefundId,
    ) -> Result<Option<(Refund, Option<Fingerprint>)>, StoreError>;

    /// Leases to `owner` until `lease_until` up to `limit` processing refunds whose `check_at`
    /// has come by `now`, not leased or whose lease ended, oldest `check_at` first. Each is
    /// claimed by one caller only, even with several processes on one database.
    async fn claim_due_refunds(
        &self,
        owner: &str,
        now: Timestamp,
        lease_until: Timestamp,
        limit: u32,
    ) -> Result<Vec<Refund>, StoreError>;
}
