//! The [`ConsoleStore`] port: the operator console's storage.

use async_trait::async_trait;

use crate::console::{
    AuditEntry, AuditRecord, ConsoleAccount, Cursor, Health, LedgerCheck, Listed, MinuteCount,
    OperationEvent, OperationFilter, Session,
};
use crate::{Currency, OperationId, Timestamp};

use super::{CallbackStatus, StoreError};

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

    /// What the operator's fee accounts earned at or after `since`: per currency, the sum of
    /// the `available_delta` of the ledger's fee income entries
    /// ([`crate::ledger::EntryKind::FeeIncome`]) created at or after `since`, by currency
    /// code. A currency without such an entry is left out (never a zero). One snapshot.
    async fn fee_income(&self, since: Timestamp) -> Result<Vec<(Currency, i64)>, StoreError>;

    /// Pending, held and failed callbacks (operations' and refunds'), newest first, at most
    /// `limit`.
    async fn open_callbacks(&self, limit: u32) -> Result<Vec<CallbackStatus>, StoreError>;

    /// Makes a pending callback due at `now` (its attempt count and schedule unchanged);
    /// `false` if `id` (an operation's or a refund's) has no pending callback.
    async fn send_callback_now(&self, id: uuid::Uuid, now: Timestamp) -> Result<bool, StoreError>;
}
