//! The ports adapters implement. Each method says what it must return on failure.

use std::collections::BTreeMap;

use async_trait::async_trait;
use futures::future::{BoxFuture, Shared};

use crate::acquirer::{
    CreateResult, Lookup, PaymentOrder, RefundLookup, RefundOrder, RefundResult,
};
use crate::attempt::{Attempt, Discrepancy};
use crate::callback::{CallbackData, QueuedCallback, RefundCallback, RefundCallbackData};
use crate::console::{
    AuditEntry, AuditRecord, ConsoleAccount, Cursor, Health, LedgerCheck, Listed, MinuteCount,
    OperationEvent, OperationFilter, Session,
};
use crate::ledger::{Balance, BalanceMove};
use crate::merchant::Merchant;
use crate::operation::{Action, Decline, Operation, ProviderState};
use crate::provider::AcquirerProvider;
use crate::refund::Refund;
use crate::route::Route;
use crate::signature::Fingerprint;
use crate::{
    CardDetails, Direction, MerchantId, MerchantOperationId, MerchantRefundId, OperationId,
    RefundId, Timestamp, WithdrawalRequisites,
};

/// The cause of a failure, kept as a source so logs show the whole chain (see
/// [`crate::service`]'s error policy).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A storage failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be reached or is overloaded; the request is safe to retry.
    #[error("storage unavailable")]
    Unavailable(#[source] BoxError),
    /// Anything else: a bug or corrupt data.
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

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
    pub callback: Option<RefundCallback>,
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

/// Writes a callback's body: the wire format of callbacks lives in the callback adapter.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait CallbackFormat: Send + Sync {
    /// The exact body to send and sign for `data`; the same data always gives the same body.
    fn body(&self, data: &CallbackData) -> String;

    /// The exact body of a refund's callback, as [`CallbackFormat::body`] for operations.
    fn refund_body(&self, data: &RefundCallbackData) -> String;
}

/// Merchants and their credentials.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait MerchantDirectory: Send + Sync {
    /// The merchant with this id, enabled or not; `Ok(None)` if unknown. Its secrets MUST be
    /// current (a rotation made by any process applies from the next call), revoked ones
    /// included; the rest may be up to 5 seconds old.
    async fn merchant(&self, id: &MerchantId) -> Result<Option<Merchant>, StoreError>;

    /// The merchants among `ids` that exist, enabled or not, each once and in any order;
    /// unknown ids are left out. Their secrets MUST be current as of the call, as for
    /// [`MerchantDirectory::merchant`]. One read for them all: the callback worker reads the
    /// merchants of a claimed batch with it instead of one read per callback.
    async fn merchants(&self, ids: &[MerchantId]) -> Result<Vec<Merchant>, StoreError>;
}

/// The route table.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait RouteTable: Send + Sync {
    /// Every route, enabled or not. Changes MUST be visible within 5 seconds.
    async fn routes(&self) -> Result<Vec<Route>, StoreError>;
}

/// What a serving process reports of itself: who it is and its circuits, written every few
/// seconds so that operators see every process's view of the providers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessReport {
    /// Unique per process run.
    pub id: String,
    /// The gateway version it runs.
    pub version: String,
    pub started_at: Timestamp,
    /// When it last reported.
    pub seen_at: Timestamp,
    pub circuits: Vec<crate::circuit::Circuit>,
}

/// Where serving processes report themselves.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ProcessRegistry: Send + Sync {
    /// Writes `report` in place of the process's earlier one, in one transaction.
    async fn report(&self, report: &ProcessReport) -> Result<(), StoreError>;

    /// Every process that reported at or after `since`, by id.
    async fn processes(&self, since: Timestamp) -> Result<Vec<ProcessReport>, StoreError>;
}

/// The acquirers the gateway reaches over the network, as configured.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ProviderDirectory: Send + Sync {
    /// Every acquirer provider, enabled or not. Changes MUST be visible within 5 seconds.
    async fn acquirers(&self) -> Result<Vec<AcquirerProvider>, StoreError>;

    /// The acquirer provider with this name, enabled or not; `Ok(None)` if there is none.
    /// Changes MUST be visible within 5 seconds.
    async fn acquirer(&self, name: &str) -> Result<Option<AcquirerProvider>, StoreError>;
}

/// The Acquirer API, spoken to one acquirer per call. Every answer comes back classified;
/// nothing here retries a call that may have moved money.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait Acquirer: Send + Sync {
    /// Creates a payment (once: the caller never sends the same order again). An answer
    /// whose reference, kind, amount or currency differ from the order is `Unknown`.
    async fn create(&self, provider: &AcquirerProvider, order: &PaymentOrder) -> CreateResult;

    /// The payment with this reference, as the acquirer has it now.
    async fn find(&self, provider: &AcquirerProvider, reference: OperationId) -> Lookup;

    /// Asks the acquirer to cancel a payment: the payment as it stands afterwards (`canceled`,
    /// or its final status if it already had one), `NotFound`, or `Failed`.
    async fn cancel(&self, provider: &AcquirerProvider, acquirer_id: &str) -> Lookup;

    /// Asks the acquirer to refund part of a payment (once: the caller never sends the same
    /// order again). An answer whose amount differs from the order is `Unknown`.
    async fn refund(&self, provider: &AcquirerProvider, order: &RefundOrder) -> RefundResult;

    /// The refund with this reference, as the acquirer has it now.
    async fn find_refund(&self, provider: &AcquirerProvider, reference: RefundId) -> RefundLookup;
}

/// Why a new provider was not stored. Nothing was written in either case.
#[derive(Debug, thiserror::Error)]
pub enum ProviderInsertError {
    /// Provider names are unique.
    #[error("a provider with this name already exists")]
    NameTaken,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a new merchant was not stored. Nothing was written in either case.
#[derive(Debug, thiserror::Error)]
pub enum MerchantInsertError {
    /// Merchant names are unique.
    #[error("a merchant with this name already exists")]
    NameTaken,
    /// The merchant id is in use.
    #[error("a merchant with this id already exists")]
    IdTaken,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why an operator's balance move was not stored. Nothing was written in either case.
#[derive(Debug, thiserror::Error)]
pub enum ManualMoveError {
    /// A debit larger than the available balance.
    #[error("insufficient balance")]
    InsufficientBalance,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The operator's side of storage: merchants, routes, manual balance moves, the ledger
/// check and an operation's ledger entries and callbacks, for [`crate::operator::Operator`].
/// The values handed in already passed the rules.
///
/// Every method is one transaction. Changes MUST be visible at once to the
/// [`MerchantDirectory`] and [`RouteTable`] of the same adapter instance.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait OperatorStore: Send + Sync {
    /// Stores a new merchant with its access pairs, created at `at`. MUST return `NameTaken` or
    /// `IdTaken` on a clash (even with a concurrent insert), writing nothing.
    async fn insert_merchant(
        &self,
        merchant: &Merchant,
        at: Timestamp,
    ) -> Result<(), MerchantInsertError>;

    /// Every merchant, enabled or not, by name.
    async fn list_merchants(&self) -> Result<Vec<Merchant>, StoreError>;

    /// The merchant with this id, enabled or not; `Ok(None)` if unknown.
    async fn find_merchant(&self, id: &MerchantId) -> Result<Option<Merchant>, StoreError>;

    /// The merchant with this name, enabled or not; `Ok(None)` if unknown.
    async fn merchant_by_name(&self, name: &str) -> Result<Option<Merchant>, StoreError>;

    /// Disables a merchant. `Ok(false)` if it is unknown.
    async fn disable_merchant(&self, id: &MerchantId) -> Result<bool, StoreError>;

    /// Applies `rotation` in one transaction (concurrent rotations of one direction MUST get
    /// distinct versions) and returns the direction's secrets after it; `Ok(None)` if the
    /// merchant is unknown, writing nothing. The [`MerchantDirectory`] of every process MUST
    /// see it from its next call.
    async fn rotate_key(
        &self,
        rotation: &crate::operator::KeyRotation,
    ) -> Result<Option<crate::merchant::KeyRing>, StoreError>;

    /// Sets the merchant's signing rules that `change` names (`x-timestamp` and signature
    /// version 2 mandatory or not), leaving the others. `Ok(false)` if it is unknown. The
    /// [`MerchantDirectory`] of every process MUST apply it within 5 s.
    async fn change_signing_rules(
        &self,
        id: &MerchantId,
        change: crate::merchant::SigningRulesChange,
    ) -> Result<bool, StoreError>;

    /// Stores a new enabled route and returns its id.
    async fn insert_route(&self, route: &crate::operator::CheckedRoute) -> Result<i64, StoreError>;

    /// Every route, enabled or not, by id, as stored now (not from a cache).
    async fn list_routes(&self) -> Result<Vec<Route>, StoreError>;

    /// Disables a route. `Ok(false)` if there is no route with this id.
    async fn disable_route(&self, id: i64) -> Result<bool, StoreError>;

    /// Enables a route. `Ok(false)` if there is no route with this id.
    async fn enable_route(&self, id: i64) -> Result<bool, StoreError>;

    /// Sets a route's priority. `Ok(false)` if there is no route with this id.
    async fn set_route_priority(&self, id: i64, priority: i32) -> Result<bool, StoreError>;

    /// Stores a new acquirer provider, created at `at`. MUST return `NameTaken` on a clash
    /// (even with a concurrent insert), writing nothing.
    async fn insert_provider(
        &self,
        provider: &AcquirerProvider,
        at: Timestamp,
    ) -> Result<(), ProviderInsertError>;

    /// Replaces a provider's record (found by its name). `Ok(false)` if there is none.
    async fn update_provider(
        &self,
        provider: &AcquirerProvider,
        at: Timestamp,
    ) -> Result<bool, StoreError>;

    /// Every acquirer provider, by name, as stored now (not from a cache).
    async fn list_providers(&self) -> Result<Vec<AcquirerProvider>, StoreError>;

    /// Applies a manual credit or debit with its ledger entry and returns the balance of that
    /// merchant and currency after it, with the entry's number. MUST return
    /// `InsufficientBalance` for a debit larger than the available balance, writing nothing.
    /// The ledger entry records `note`'s actor and reason, and `adjustment.operation_id` (the
    /// operation it names, already checked to be the merchant's). When it names one, every
    /// open discrepancy of that operation is resolved in the same transaction, at
    /// `adjustment.at`, by `note`'s actor with its reason, naming the entry (and written on
    /// the operation's timeline).
    async fn apply_manual_move(
        &self,
        adjustment: &BalanceMove,
        note: &crate::ledger::ManualNote,
    ) -> Result<crate::ledger::ManualEntry, ManualMoveError>;

    /// Enables a merchant again and, in the same transaction, puts its held callbacks back to
    /// pending (their due times kept; updated at `at`); returns how many, or `None` if there
    /// is no such merchant (nothing changed). MUST be ordered against
    /// [`CallbackOutbox::hold`] so that no callback of the merchant stays held once it commits.
    async fn enable_merchant(
        &self,
        id: &MerchantId,
        at: Timestamp,
    ) -> Result<Option<u64>, StoreError>;

    /// Recorded discrepancies, newest first, at most `limit`; only open ones if `open_only`.
    async fn discrepancies(
        &self,
        open_only: bool,
        limit: u32,
    ) -> Result<Vec<crate::discrepancy::RecordedDiscrepancy>, StoreError>;

    /// The discrepancies recorded for operation `id`, oldest first.
    async fn operation_discrepancies(
        &self,
        id: OperationId,
    ) -> Result<Vec<crate::discrepancy::RecordedDiscrepancy>, StoreError>;

    /// Resolves discrepancy `id` with `resolution`, writing the resolution on its operation's
    /// timeline, in one transaction. MUST NOT change one already resolved (even concurrently):
    /// `Already` with it as it stands; `NotFound` if there is none.
    async fn resolve_discrepancy(
        &self,
        id: i64,
        resolution: &crate::discrepancy::Resolution,
    ) -> Result<crate::discrepancy::Resolved, StoreError>;

    /// Every merchant and currency whose balance differs from the sums of its ledger entries
    /// (available and held each), including entries with no balance row. Empty: it holds.
    async fn verify_ledger(&self) -> Result<Vec<crate::ledger::LedgerMismatch>, StoreError>;

    /// The ledger entries written for operation `id`, for its refunds (whose entries carry
    /// the refunded deposit's id) and by hand naming it (with their actor and reason), oldest
    /// first (empty if there are none, or no such operation).
    async fn operation_ledger(
        &self,
        id: OperationId,
    ) -> Result<Vec<crate::story::LedgerEntry>, StoreError>;

    /// The callbacks queued for operation `id`: its own first (if one was queued), then its
    /// refunds' in the order they were queued (ties by id), each with every delivery attempt
    /// recorded, by attempt number; empty if none was queued.
    async fn operation_callbacks(
        &self,
        id: OperationId,
    ) -> Result<Vec<crate::story::CallbackDelivery>, StoreError>;
}

/// The operator console's storage: accounts, sessions, failed sign-ins, the audit log, the
/// operations search, each operation's events and the overview's counters
/// ([`crate::console`]). Every method is one transaction; sessions and accounts are rows, so
/// every gateway process on one database shares them.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ConsoleStore: Send + Sync {
    /// Stores a new account; `false` (writing nothing) if the name is taken.
    async fn insert_account(&self, account: &ConsoleAccount) -> Result<bool, StoreError>;

    /// The account with this (lower-case) name, enabled or not.
    async fn account(&self, name: &str) -> Result<Option<ConsoleAccount>, StoreError>;

    /// Every account, by name.
    async fn accounts(&self) -> Result<Vec<ConsoleAccount>, StoreError>;

    /// Sets an account's password hash and deletes every session of the account in the same
    /// transaction (whoever signed in with the old password is signed out); `false`, writing
    /// nothing, if there is no such account. Whether the account is enabled does not change.
    async fn set_password(&self, name: &str, password_hash: &str) -> Result<bool, StoreError>;

    /// Disables an account and deletes its sessions in the same transaction; `false` if there
    /// is no such account.
    async fn disable_account(&self, name: &str) -> Result<bool, StoreError>;

    /// Failed sign-ins recorded for `name` at or after `since`.
    async fn failed_signins(&self, name: &str, since: Timestamp) -> Result<u32, StoreError>;

    /// Records a failed sign-in for `name` (known or not) at `at`, and MAY delete failures
    /// older than a day (of every name).
    async fn record_failed_signin(&self, name: &str, at: Timestamp) -> Result<(), StoreError>;

    /// Reserves a sign-in attempt before its password is checked: records it as a failure of
    /// `name` at `at` and returns the record's id with the failures of `name` at or after
    /// `since`, this one included, in one transaction (so concurrent attempts each see the
    /// others that were reserved before them). A successful attempt is then forgotten
    /// ([`ConsoleStore::forget_signin`]).
    async fn reserve_signin(
        &self,
        name: &str,
        at: Timestamp,
        since: Timestamp,
    ) -> Result<(i64, u32), StoreError>;

    /// Deletes the reserved attempt `id` (its password matched).
    async fn forget_signin(&self, id: i64) -> Result<(), StoreError>;

    /// Stores `session` only while its account is enabled and still has `password_hash` (the
    /// hash its password was just checked against), both read in the writing transaction
    /// (under a lock that a password change or a disable waits for): a sign-in checked
    /// against a password changed meanwhile opens nothing. `Ok(false)` when nothing was
    /// written.
    async fn insert_session(
        &self,
        session: &Session,
        password_hash: &str,
    ) -> Result<bool, StoreError>;

    /// The session with this id whose account is enabled, its role read from the account;
    /// `None` otherwise. Liveness is the caller's ([`Session::is_live`]).
    async fn session(&self, id: &str) -> Result<Option<Session>, StoreError>;

    /// Sets a session's last-seen time.
    async fn touch_session(&self, id: &str, at: Timestamp) -> Result<(), StoreError>;

    /// Deletes a session (sign-out, or found expired).
    async fn delete_session(&self, id: &str) -> Result<(), StoreError>;

    async fn audit(&self, entry: &AuditEntry) -> Result<(), StoreError>;

    /// Audit entries, newest first, older than entry `before` when given.
    async fn audit_log(
        &self,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<AuditRecord>, StoreError>;

    /// Up to `limit` operations matching `filter`, ordered by `createdAt` then `operationId`,
    /// both descending, starting after `after`. MUST use a keyset (never an offset).
    async fn search_operations<'a>(
        &self,
        filter: &OperationFilter,
        after: Option<&'a Cursor>,
        limit: u32,
    ) -> Result<Vec<Listed>, StoreError>;

    /// The events of operation `id` and of its refunds, oldest first.
    async fn operation_events(&self, id: OperationId) -> Result<Vec<OperationEvent>, StoreError>;

    /// The per-minute counters of operations created in `[from, to)`.
    async fn minute_counts(
        &self,
        from: Timestamp,
        to: Timestamp,
    ) -> Result<Vec<MinuteCount>, StoreError>;

    /// Callbacks pending, held and failed, operations processing since before `stuck_before`,
    /// open (unresolved) discrepancies and the last ledger check.
    async fn health(&self, stuck_before: Timestamp) -> Result<Health, StoreError>;

    async fn record_ledger_check(&self, check: &LedgerCheck) -> Result<(), StoreError>;

    /// Pending, held and failed callbacks (operations' and refunds'), newest first, at most
    /// `limit`.
    async fn open_callbacks(&self, limit: u32) -> Result<Vec<CallbackStatus>, StoreError>;

    /// Makes a pending callback due at `now` (its attempt count and schedule unchanged);
    /// `false` if `id` (an operation's or a refund's) has no pending callback.
    async fn send_callback_now(&self, id: uuid::Uuid, now: Timestamp) -> Result<bool, StoreError>;
}

/// A provider failure: it could not be reached or answered nonsense. Nothing was started.
#[derive(Debug, thiserror::Error)]
#[error("provider failure")]
pub struct ProviderError(#[source] pub BoxError);

/// Shows an error with every source after it (`outer: inner: innermost`), for log lines.
pub struct Chain<'a>(pub &'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(error) = source {
            write!(f, ": {error}")?;
            source = error.source();
        }
        Ok(())
    }
}

/// What a provider says when a deposit starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DepositStart {
    /// The user must do this; the deposit stays processing.
    Wait(Action),
    Declined(Decline),
}

/// What a provider says when a payout starts.
#[derive(Debug, Clone, PartialEq)]
pub enum PayoutStart {
    /// Accepted: stored with the payout, `state` and `due_at` drive [`PaymentProvider::poll_payout`].
    Accepted {
        state: Option<ProviderState>,
        due_at: Timestamp,
    },
    Declined(Decline),
}

/// What a provider says about a processing operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderVerdict {
    Approve,
    Decline(Decline),
    /// Not decided yet; ask again at the given time.
    Pending(Timestamp),
}

/// The built-in, in-process sandbox provider. Its answer is never lost, so it is asked
/// before anything is stored (an acquirer over the network goes through [`Acquirer`], the
/// other way round). Nothing here moves the merchant's balance.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait PaymentProvider: Send + Sync {
    /// Starts a deposit on `route` and says what the user must do, or declines it. It is
    /// called before the deposit is stored, so it MUST be safe to call again for the same
    /// operation id.
    async fn start_deposit(
        &self,
        deposit: &Operation,
        route: &Route,
    ) -> Result<DepositStart, ProviderError>;

    /// Starts a payout with its full requisites, or declines it. It is called before the hold
    /// commits, so it MUST NOT send money (money leaves only through `poll_payout`).
    async fn start_payout(
        &self,
        payout: &Operation,
        requisites: &WithdrawalRequisites,
        route: &Route,
    ) -> Result<PayoutStart, ProviderError>;

    /// Advances a processing payout whose `due_at` has come.
    async fn poll_payout(
        &self,
        payout: &Operation,
        now: Timestamp,
    ) -> Result<ProviderVerdict, ProviderError>;

    /// The user's input-field values for a deposit waiting for them (already checked against the fields).
    async fn submit_input(
        &self,
        deposit: &Operation,
        values: &BTreeMap<String, String>,
    ) -> Result<ProviderVerdict, ProviderError>;

    /// Whether `code` is the right confirmation code for the deposit.
    async fn check_code(&self, deposit: &Operation, code: &str) -> Result<bool, ProviderError>;

    /// When a new refund of one of its deposits settles (it is stored processing until then).
    /// It MUST NOT move money: the refund is decided only through `poll_refund`.
    async fn start_refund(&self, refund: &Refund) -> Result<Timestamp, ProviderError>;

    /// Decides (or postpones) a processing refund whose check time has come.
    async fn poll_refund(
        &self,
        refund: &Refund,
        now: Timestamp,
    ) -> Result<ProviderVerdict, ProviderError>;
}

/// The provider's side of the hosted pages: what the user's card or decision means.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait HostedCheckout: Send + Sync {
    /// The provider (route `provider` name) whose operations these pages serve.
    fn provider(&self) -> &'static str;

    /// The user paid a waiting card deposit on the hosted card page with `card`.
    async fn pay_by_card(
        &self,
        deposit: &Operation,
        card: &CardDetails,
    ) -> Result<ProviderVerdict, ProviderError>;

    /// The user confirmed (`true`) or rejected (`false`) a waiting deposit on a bank page.
    async fn user_decision(
        &self,
        deposit: &Operation,
        approve: bool,
    ) -> Result<ProviderVerdict, ProviderError>;

    /// The banks the SBP page offers, as (id, display name).
    fn sbp_banks(&self) -> Vec<(String, String)>;
}

/// Draws QR codes.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait QrEncoder: Send + Sync {
    /// A `data:image/png;base64,...` URI of a QR code of `text`.
    fn data_uri(&self, text: &str) -> Result<String, BoxError>;
}

/// The current time, and waits measured on it.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait Clock: Send + Sync {
    fn now(&self) -> Timestamp;

    /// A future that is ready once `duration` has passed. The domain uses it only to bound
    /// a wait for something else (it races the two), never to schedule work: a clock that
    /// does not run on its own (a test's) may end the wait at once.
    fn sleep(&self, duration: std::time::Duration) -> BoxFuture<'static, ()>;
}

/// New operation and merchant ids.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait IdGenerator: Send + Sync {
    /// A fresh, never-used operation id.
    fn operation_id(&self) -> OperationId;

    /// A fresh merchant id (a UUID in text form), for a merchant created without one.
    fn merchant_id(&self) -> MerchantId;

    /// A fresh, never-used refund id (never an operation's id either).
    fn refund_id(&self) -> RefundId;
}

/// A callback due for delivery, claimed under a lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingCallback {
    pub operation_id: OperationId,
    /// Set for a refund's callback (`operation_id` is then the refunded deposit's).
    pub refund_id: Option<RefundId>,
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

/// One delivery attempt, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackAttempt {
    pub operation_id: OperationId,
    /// Set for a refund's callback.
    pub refund_id: Option<RefundId>,
    pub attempt: u32,
    pub at: Timestamp,
    pub duration_ms: i64,
    /// The HTTP status, if an answer came.
    pub http_status: Option<u16>,
    /// Why the attempt failed, if it did (never the body or signature).
    pub error: Option<String>,
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

/// Where a callback stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackState {
    Pending,
    Delivered,
    Failed,
    /// Due while its merchant was disabled: it waits, its attempt count, failures and due time
    /// as they were, and goes back to pending when the merchant is enabled again.
    Held,
}

impl CallbackState {
    pub fn as_str(self) -> &'static str {
        match self {
            CallbackState::Pending => "pending",
            CallbackState::Delivered => "delivered",
            CallbackState::Failed => "failed",
            CallbackState::Held => "held",
        }
    }
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
    pub merchant_id: MerchantId,
    pub url: String,
    pub state: CallbackState,
    pub attempts: u32,
    pub next_attempt_at: Option<Timestamp>,
    pub last_error: Option<String>,
}

/// The durable callback outbox (rows are written by [`OperationStore`] with the final status).
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
    /// again in the same transaction, ordered against [`OperatorStore::enable_merchant`] (so
    /// that a callback is never left held after an enable committed): if it is enabled then,
    /// nothing changes and `MerchantEnabled` is returned. `NotLeased` (nothing changed) if
    /// `owner` no longer holds the lease.
    async fn hold(
        &self,
        owner: &str,
        callback: &PendingCallback,
        at: Timestamp,
    ) -> Result<HoldOutcome, StoreError>;

    /// The safety net of [`OperatorStore::enable_merchant`]: every held callback whose
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

#[cfg(test)]
mod chain_tests {
    use super::*;

    #[test]
    fn a_chain_shows_every_source_once() {
        let inner: BoxError = "database is locked".into();
        let error = StoreError::Unavailable(inner);
        assert_eq!(
            Chain(&error).to_string(),
            "storage unavailable: database is locked"
        );
    }
}
