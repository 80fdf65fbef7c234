//! The [`CallbackOutbox`] port: the durable callback outbox and its delivery.

use async_trait::async_trait;

use crate::callback::{CallbackAttempt, CallbackState, DisputeChange};
use crate::{Direction, MerchantId, OperationId, RefundId, Timestamp};

use super::StoreError;

/// A callback due for delivery, claimed under a lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingCallback {
    pub operation_id: OperationId,
    /// Set for a refund's callback (`operation_id` is then the refunded deposit's).
    pub refund_id: Option<RefundId>,
    /// Set for a dispute's callback (`operation_id` is then the disputed deposit's).
    pub dispute: Option<DisputeChange>,
    pub merchant_id: MerchantId,
    pub direction: Direction,
    pub url: String,
    /// The exact JSON body to send and sign.
    pub body: String,
    /// The number this attempt carries in `x-callback-attempt` (1, 2, ...), counted over the
    /// callback's whole life, operator retries included.
    pub attempt: u32,
    /// Failed attempts since the current schedule started (an operator retry resets it).
    pub failures_in_run: u32,
}

impl PendingCallback {
    /// Its id, the same on every attempt ([`crate::callback::callback_id`]).
    pub fn id(&self) -> String {
        crate::callback::callback_id(
            &self.operation_id,
            self.refund_id.as_ref(),
            self.dispute.as_ref(),
        )
    }
}

/// What happens to a callback after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptResult {
    Delivered,
    /// Try again at this time.
    RetryAt(Timestamp),
    /// Give up: the schedule is exhausted or the target is refused; the reason is kept.
    Failed(String),
}

/// What putting a claimed callback on hold did ([`CallbackOutbox::hold`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldOutcome {
    /// Held: no attempt made or counted, its due time kept, its lease ended.
    Held,
    /// The merchant is enabled as of the hold's own read (it was enabled after the caller read
    /// it): nothing changed, the caller still holds the lease and sends it.
    MerchantEnabled,
    /// The caller no longer holds the lease: nothing changed.
    NotLeased,
}

/// What an operator's retry of a callback did ([`CallbackOutbox::retry`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryOutcome {
    /// The failed callback is pending again with a fresh schedule, due now.
    Queued,
    /// The callback is held (its merchant is disabled): nothing changed; enabling the
    /// merchant sends it.
    Held,
    /// There is no failed (or held) callback under that id: nothing changed.
    NotFailed,
}

/// A callback as an operator sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackStatus {
    pub operation_id: OperationId,
    /// Set for a refund's callback.
    pub refund_id: Option<RefundId>,
    /// Set for a dispute's callback.
    pub dispute: Option<DisputeChange>,
    pub merchant_id: MerchantId,
    pub url: String,
    pub state: CallbackState,
    pub attempts: u32,
    pub next_attempt_at: Option<Timestamp>,
    pub last_error: Option<String>,
}

/// The durable callback outbox (rows are written by [`OperationStore`](super::OperationStore) with the final status).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait CallbackOutbox: Send + Sync {
    /// Leases up to `limit` pending callbacks that are due at `now` and not leased (or whose lease
    /// ended) to `owner` until `lease_until`. Each callback MUST be claimed by one caller only,
    /// even with several processes on one database.
    async fn claim_due(
        &self,
        owner: &str,
        now: Timestamp,
        lease_until: Timestamp,
        limit: u32,
    ) -> Result<Vec<PendingCallback>, StoreError>;

    /// Records an attempt and what follows it, and ends `owner`'s lease. MUST do nothing
    /// (returning `Ok(false)`) if `owner` no longer holds the lease.
    async fn record_attempt(
        &self,
        owner: &str,
        attempt: &CallbackAttempt,
        result: &AttemptResult,
    ) -> Result<bool, StoreError>;

    /// Ends every lease `owner` holds without recording an attempt (graceful shutdown).
    async fn release(&self, owner: &str) -> Result<(), StoreError>;

    /// Puts `callback`, claimed by `owner` and read as its merchant's while that merchant was
    /// disabled, on hold at `at`: state held, lease ended, attempts, failures and due time
    /// unchanged (no attempt is made or counted). The merchant's `enabled` flag MUST be read
    /// again in the same transaction, ordered against [`OperatorStore::enable_merchant`](super::OperatorStore::enable_merchant) (so
    /// that a callback is never left held after an enable committed): if it is enabled then,
    /// nothing changes and `MerchantEnabled` is returned. `NotLeased` (nothing changed) if
    /// `owner` no longer holds the lease.
    async fn hold(
        &self,
        owner: &str,
        callback: &PendingCallback,
        at: Timestamp,
    ) -> Result<HoldOutcome, StoreError>;

    /// The safety net of [`OperatorStore::enable_merchant`](super::OperatorStore::enable_merchant): every held callback whose
    /// merchant is enabled goes back to pending at `at`, its due time kept. Returns how many.
    /// MUST cost next to nothing when no callback is held.
    async fn release_held(&self, at: Timestamp) -> Result<u64, StoreError>;

    /// Queues a failed callback again with a fresh schedule, due at `now`: the operation's own
    /// callback when `id` is an operation's id, a refund's when it is a refund's. A held
    /// callback is left as it is (`Held`); `NotFailed` if there is no failed callback under
    /// that id.
    async fn retry(&self, id: uuid::Uuid, now: Timestamp) -> Result<RetryOutcome, StoreError>;

    /// Callbacks, newest first, at most `limit`; only those in state `only` when given.
    async fn list(
        &self,
        only: Option<CallbackState>,
        limit: u32,
    ) -> Result<Vec<CallbackStatus>, StoreError>;
}
