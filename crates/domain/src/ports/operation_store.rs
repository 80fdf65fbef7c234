//! The [`OperationStore`] port: operations, balances, the ledger and the callback outbox's writes.

use async_trait::async_trait;
use futures::future::{BoxFuture, Shared};

use crate::attempt::{Attempt, Discrepancy};
use crate::callback::QueuedCallback;
use crate::ledger::{Balance, BalanceMove};
use crate::operation::{Action, Operation};
use crate::signature::Fingerprint;
use crate::{Direction, MerchantId, MerchantOperationId, OperationId, Timestamp};

use super::StoreError;

/// Why a new operation was not stored. Nothing at all was written in either case.
#[derive(Debug, thiserror::Error)]
pub enum InsertError {
    /// An operation with the same (merchant, direction, merchantOperationId) exists.
    #[error("an operation with this merchantOperationId exists")]
    Duplicate,
    /// A move with a negative `available` found the available balance too low.
    #[error("insufficient balance")]
    InsufficientBalance,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a finished operation was not stored. Nothing at all was written in either case.
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    /// The stored operation is no longer processing: another completion won.
    #[error("the operation is no longer processing")]
    NotProcessing,
    /// A move with a negative `available` found the available balance too low.
    #[error("insufficient balance")]
    InsufficientBalance,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A new operation and everything written with it, in one unit of work.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOperation {
    pub operation: Operation,
    /// Keyed hash of the canonical request, present when a merchantOperationId was given.
    pub fingerprint: Option<Fingerprint>,
    /// Applied in order after the operation row; a payout's hold comes first.
    pub moves: Vec<BalanceMove>,
    /// Queued when the operation is final at creation.
    pub callback: Option<QueuedCallback>,
    /// The operation's first provider attempts, written with it: routes passed over
    /// (`skipped`), then the one about to be called (`sent`), if any.
    pub attempts: Vec<Attempt>,
}

/// A final status and everything written with it, in one unit of work.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The operation after the change; stored only if it is still processing in storage.
    pub operation: Operation,
    pub moves: Vec<BalanceMove>,
    pub callback: Option<QueuedCallback>,
    /// The attempt whose provider reported the status, if one did: the status applies only
    /// while it is still the operation's current attempt (no later attempt was tried).
    pub from_attempt: Option<u32>,
}

/// Whether a queued save ([`OperationStore::save_attempt_soon`]) was committed: `true` once
/// the transaction that wrote it committed, `false` if it was not written. Every clone hears
/// the same answer.
pub type SaveCommitted = Shared<BoxFuture<'static, bool>>;

/// Operations, balances, the ledger and the callback outbox.
///
/// Every method is one transaction: it either writes everything or nothing.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait OperationStore: Send + Sync {
    /// Stores a new operation with its moves and callback. MUST return `Duplicate` when the
    /// merchantOperationId is taken (even by a concurrent insert), `InsufficientBalance` when a
    /// move finds too little available, and write nothing in either case.
    async fn insert(&self, new: &NewOperation) -> Result<(), InsertError>;

    /// Writes a final status with its moves and callback, guarded so it happens at most once.
    /// MUST return `NotProcessing` (writing nothing) if the stored status is not Processing,
    /// or if `from_attempt` is given and a later attempt of the operation was tried (even one
    /// added concurrently: the check follows the status guard's lock).
    async fn finish(&self, completion: &Completion) -> Result<(), FinishError>;

    /// Writes a processing operation's new step as the provider answered it (a deposit's action,
    /// a payout's provider state and due time, `updated_at`), nothing else. MUST return
    /// `NotProcessing` (writing nothing) if the stored operation is no longer processing.
    async fn advance(&self, operation: &Operation) -> Result<(), FinishError>;

    /// Replaces a processing operation's action (e.g. fewer confirmation attempts left).
    /// MUST return `NotProcessing` if the stored operation is final or its action differs from `expected`.
    async fn replace_action(
        &self,
        id: OperationId,
        expected: &Action,
        action: &Action,
        at: Timestamp,
    ) -> Result<(), FinishError>;

    /// The operation with this id, whoever owns it; `Ok(None)` if there is none.
    async fn get(&self, id: OperationId) -> Result<Option<Operation>, StoreError>;

    /// The operation with this id and its attempts by number, read together (one round of
    /// storage work where [`OperationStore::get`] then [`OperationStore::attempts`] take
    /// two); `Ok(None)` if there is no such operation.
    async fn get_with_attempts(
        &self,
        id: OperationId,
    ) -> Result<Option<(Operation, Vec<Attempt>)>, StoreError>;

    /// The merchant's operation with this merchantOperationId in `direction`, with the
    /// fingerprint of the request that created it; `Ok(None)` if there is none.
    async fn find_by_merchant_operation_id(
        &self,
        merchant: &MerchantId,
        direction: Direction,
        merchant_operation_id: &MerchantOperationId,
    ) -> Result<Option<(Operation, Option<Fingerprint>)>, StoreError>;

    /// Ids of processing deposits whose lifetime passed by `now`, oldest first, at most `limit`.
    async fn expired_deposits(
        &self,
        now: Timestamp,
        limit: u32,
    ) -> Result<Vec<OperationId>, StoreError>;

    /// Processing payouts whose `due_at` passed by `now`, at most `limit`.
    async fn due_payouts(&self, now: Timestamp, limit: u32) -> Result<Vec<Operation>, StoreError>;

    /// Moves `due_at` of a processing payout to `next` (the provider is not done yet).
    async fn postpone(&self, id: OperationId, next: Timestamp) -> Result<(), StoreError>;

    /// The merchant's balances, one per currency it has ever held.
    async fn balances(&self, merchant: &MerchantId) -> Result<Vec<Balance>, StoreError>;

    /// Writes what is known of an existing attempt (every field but its operation, number,
    /// route, provider and creation time), and ends any reconciler lease on it. Writers hold
    /// copies that may be older than what is stored, so it MUST merge, never lose what the
    /// provider said: a stored acquirer id is kept, a stored failure code, page or latency is
    /// kept unless a new one is given, and an answered state (`ok`, `declined`,
    /// `unavailable`) is never taken back to `sent` or `unknown`.
    async fn save_attempt(&self, attempt: &Attempt) -> Result<(), StoreError>;

    /// Saves `attempt` as [`OperationStore::save_attempt`] does, but after returning: it is
    /// queued and written shortly (a failure is logged), for a write that nothing the caller
    /// answers with depends on. Only a process that dies before the write loses it, and
    /// then the attempt keeps what was stored before, which the reconciler reads on. The
    /// answer tells whoever asks later whether it was committed; nobody has to wait for it.
    fn save_attempt_soon(&self, attempt: Attempt) -> SaveCommitted;

    /// Moves an operation on from its current attempt, in one transaction: writes `finished`
    /// (merged, as [`OperationStore::save_attempt`] does) and inserts `next`, the routes
    /// passed over (`skipped`) and, if the operation goes on, the attempt about to be called
    /// (`sent`). When `next` holds an attempt to be called, the operation MUST still be
    /// processing: if it is not, nothing is written and the answer is `Ok(false)`.
    async fn add_attempts(&self, finished: &Attempt, next: &[Attempt]) -> Result<bool, StoreError>;

    /// The operation's attempts, by number (empty for an operation made before attempts were
    /// recorded).
    async fn attempts(&self, id: OperationId) -> Result<Vec<Attempt>, StoreError>;

    /// Leases to `owner` until `lease_until` up to `limit` attempts at `provider` that the
    /// reconciler must look at: the current (last) attempt of a processing operation whose
    /// `next_check_at` has come by `now`, not leased or whose lease ended. Each is claimed
    /// by one caller only, even with several processes on one database.
    async fn claim_checks(
        &self,
        provider: &str,
        owner: &str,
        now: Timestamp,
        lease_until: Timestamp,
        limit: u32,
    ) -> Result<Vec<Attempt>, StoreError>;

    /// Records a provider's report that contradicts an operation's final status, once per
    /// operation, provider and reported status (a repeated report is the same discrepancy).
    async fn record_discrepancy(&self, discrepancy: &Discrepancy) -> Result<(), StoreError>;

    /// Claims, for a payment page at `now`, the right to read operation `id`'s payment from
    /// its acquirer. MUST return `true`, recording `now` as the operation's last page read,
    /// only if no page read of it was claimed after `now - gap` (by any process on the
    /// database), and `false`, writing nothing, otherwise: of claimers racing within one gap,
    /// exactly one wins (one conditional write decides).
    async fn claim_page_read(
        &self,
        id: OperationId,
        now: Timestamp,
        gap: std::time::Duration,
    ) -> Result<bool, StoreError>;
}
