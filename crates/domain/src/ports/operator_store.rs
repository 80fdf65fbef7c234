//! The [`OperatorStore`] port: the operator's side of storage.

use async_trait::async_trait;

use crate::ledger::BalanceMove;
use crate::merchant::Merchant;
use crate::provider::AcquirerProvider;
use crate::route::Route;
use crate::{MerchantId, OperationId, Timestamp};

use super::StoreError;

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
/// [`MerchantDirectory`](super::MerchantDirectory) and [`RouteTable`](super::RouteTable) of the same adapter instance.
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
    /// merchant is unknown, writing nothing. The [`MerchantDirectory`](super::MerchantDirectory) of every process MUST
    /// see it from its next call.
    async fn rotate_key(
        &self,
        rotation: &crate::merchant::KeyRotation,
    ) -> Result<Option<crate::merchant::KeyRing>, StoreError>;

    /// Sets the merchant's signing rules that `change` names (`x-timestamp` and signature
    /// version 2 mandatory or not), leaving the others. `Ok(false)` if it is unknown. The
    /// [`MerchantDirectory`](super::MerchantDirectory) of every process MUST apply it within 5 s.
    async fn change_signing_rules(
        &self,
        id: &MerchantId,
        change: crate::merchant::SigningRulesChange,
    ) -> Result<bool, StoreError>;

    /// Stores a new enabled route and returns its id.
    async fn insert_route(&self, route: &crate::route::CheckedRoute) -> Result<i64, StoreError>;

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
    /// [`CallbackOutbox::hold`](super::CallbackOutbox::hold) so that no callback of the merchant stays held once it commits.
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

    /// For every currency found in balances, the ledger, operations or refunds: the
    /// merchants' balances, the fee account, and what came in and went out (see
    /// [`crate::ledger::Flows`]), from the operations and refunds themselves rather than the
    /// ledger, all read in one snapshot.
    async fn ledger_flows(&self) -> Result<Vec<crate::ledger::Flows>, StoreError>;

    /// The merchant entries (at most `limit`, in ledger order) whose recorded balance is not
    /// the previous entry's of the same balance plus their own change (zero before the
    /// first), that record none, or that are dated before an entry numbered after them.
    /// Empty: every balance's entries chain.
    async fn broken_entries(
        &self,
        limit: u32,
    ) -> Result<Vec<crate::ledger::BrokenEntry>, StoreError>;

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
