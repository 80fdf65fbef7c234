//! The operator console's storage: the [`ConsoleStore`] port (`domain::console`).
//!
//! Accounts and sessions are rows, so every gateway process on the database shares them
//! (`accounts`); the audit log and the ledger checks are appended (`audit`); the operations
//! search pages by a keyset (`search`); an operation's events and the per-minute counters are
//! written by the stores with each change (`crate::journal`) and read here (`overview`); the
//! fee accounts' income is summed from the ledger (`fees`).
//! Every method is one unit of work on a blocking thread, one code path on both backends.

mod accounts;
mod audit;
mod fees;
mod overview;
mod search;

use async_trait::async_trait;
use domain::console::{
    AuditEntry, AuditRecord, ConsoleAccount, Cursor, Health, LedgerCheck, Listed, MinuteCount,
    OperationEvent, OperationFilter, Session,
};
use domain::ports::{CallbackStatus, ConsoleStore, StoreError};
use domain::{Currency, OperationId, Timestamp};

use crate::database::Database;

#[async_trait]
impl ConsoleStore for Database {
    #[tracing::instrument(level = "debug", skip_all, fields(operator = %account.name))]
    async fn insert_account(&self, account: &ConsoleAccount) -> Result<bool, StoreError> {
        let account = account.clone();
        self.write_one(move |conn| accounts::insert_account(conn, &account))
            .await
    }

    async fn account(&self, name: &str) -> Result<Option<ConsoleAccount>, StoreError> {
        let name = name.to_string();
        let found = self
            .read(move |conn| accounts::accounts(conn, Some(&name)))
            .await?;
        Ok(found.into_iter().next())
    }

    async fn accounts(&self) -> Result<Vec<ConsoleAccount>, StoreError> {
        self.read(|conn| accounts::accounts(conn, None)).await
    }

    #[tracing::instrument(level = "debug", skip(self, password_hash))]
    async fn set_password(&self, name: &str, password_hash: &str) -> Result<bool, StoreError> {
        let (name, hash) = (name.to_string(), password_hash.to_string());
        self.write(move |conn| accounts::set_password(conn, &name, &hash))
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn disable_account(&self, name: &str) -> Result<bool, StoreError> {
        let name = name.to_string();
        self.write(move |conn| accounts::disable_account(conn, &name))
            .await
    }

    async fn failed_signins(&self, name: &str, since: Timestamp) -> Result<u32, StoreError> {
        let name = name.to_string();
        self.read(move |conn| accounts::failed_signins(conn, &name, since))
            .await
    }

    /// Also forgets the name's failures older than a day.
    #[tracing::instrument(level = "debug", skip(self))]
    async fn record_failed_signin(&self, name: &str, at: Timestamp) -> Result<(), StoreError> {
        let name = name.to_string();
        self.write(move |conn| accounts::record_failed_signin(conn, &name, at))
            .await
    }

    async fn reserve_signin(
        &self,
        name: &str,
        at: Timestamp,
        since: Timestamp,
    ) -> Result<(i64, u32), StoreError> {
        let name = name.to_string();
        self.write(move |conn| accounts::reserve_signin(conn, &name, at, since))
            .await
    }

    async fn forget_signin(&self, id: i64) -> Result<(), StoreError> {
        self.write(move |conn| accounts::forget_signin(conn, id))
            .await
    }

    #[tracing::instrument(level = "debug", skip_all, fields(operator = %session.operator))]
    async fn insert_session(
        &self,
        session: &Session,
        password_hash: &str,
    ) -> Result<bool, StoreError> {
        let (session, hash) = (session.clone(), password_hash.to_string());
        // One transaction: the account's `FOR SHARE` holds until the session is committed.
        self.write(move |conn| accounts::insert_session(conn, &session, &hash))
            .await
    }

    async fn session(&self, id: &str) -> Result<Option<Session>, StoreError> {
        let id = id.to_string();
        self.read(move |conn| accounts::session(conn, &id)).await
    }

    async fn touch_session(&self, id: &str, at: Timestamp) -> Result<(), StoreError> {
        let id = id.to_string();
        self.write_one(move |conn| accounts::touch_session(conn, &id, at))
            .await
    }

    async fn delete_session(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.write_one(move |conn| accounts::delete_session(conn, &id))
            .await
    }

    #[tracing::instrument(level = "debug", skip_all, fields(action = %entry.action))]
    async fn audit(&self, entry: &AuditEntry) -> Result<(), StoreError> {
        let entry = entry.clone();
        self.write_one(move |conn| audit::audit(conn, &entry)).await
    }

    async fn audit_log(
        &self,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        self.read(move |conn| audit::audit_log(conn, before, limit))
            .await
    }

    #[tracing::instrument(level = "debug", skip(self, filter, after))]
    async fn search_operations<'a>(
        &self,
        filter: &OperationFilter,
        after: Option<&'a Cursor>,
        limit: u32,
    ) -> Result<Vec<Listed>, StoreError> {
        let (filter, after) = (filter.clone(), after.copied());
        // The console's lists and CSV export: on the replica when there is one.
        self.read_replica(move |conn| search::search(conn, &filter, after.as_ref(), limit))
            .await
    }

    async fn operation_events(&self, id: OperationId) -> Result<Vec<OperationEvent>, StoreError> {
        self.read(move |conn| overview::events(conn, id)).await
    }

    /// The counters of every minute that may hold an operation created in `[from, to)`:
    /// from the minute `from` falls in, to the minute before `to` when `to` starts a minute,
    /// else to the minute `to` falls in (counters have no finer grain).
    async fn minute_counts(
        &self,
        from: Timestamp,
        to: Timestamp,
    ) -> Result<Vec<MinuteCount>, StoreError> {
        self.read(move |conn| overview::minute_counts(conn, from, to))
            .await
    }

    async fn health(&self, stuck_before: Timestamp) -> Result<Health, StoreError> {
        self.read(move |conn| overview::health(conn, stuck_before))
            .await
    }

    #[tracing::instrument(level = "debug", skip_all, fields(actor = %check.actor))]
    async fn record_ledger_check(&self, check: &LedgerCheck) -> Result<(), StoreError> {
        let check = check.clone();
        self.write_one(move |conn| audit::record_ledger_check(conn, &check))
            .await
    }

    async fn fee_income(&self, since: Timestamp) -> Result<Vec<(Currency, i64)>, StoreError> {
        self.read(move |conn| fees::fee_income(conn, since)).await
    }

    async fn open_callbacks(&self, limit: u32) -> Result<Vec<CallbackStatus>, StoreError> {
        self.read(move |conn| overview::open_callbacks(conn, limit))
            .await
    }

    /// `id` is matched as `CallbackOutbox::retry` matches it: an operation's id names its own
    /// callback, a refund's id the refund's.
    #[tracing::instrument(level = "debug", skip(self))]
    async fn send_callback_now(&self, id: uuid::Uuid, now: Timestamp) -> Result<bool, StoreError> {
        self.write_one(move |conn| overview::send_now(conn, id, now))
            .await
    }
}
