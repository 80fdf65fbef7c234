//! Acquirer providers: the [`ProviderDirectory`] port, served from a short-lived in-memory
//! copy, and the operator's writes (in [`OperatorStore`](domain::ports::OperatorStore)).

use std::sync::Arc;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use domain::ports::{ProviderDirectory, ProviderInsertError, StoreError};
use domain::provider::AcquirerProvider;
use domain::Direction;
use domain::Timestamp;

use crate::conn::DbConn;
use crate::crypto::Vault;
use crate::database::Database;
use crate::rows::{NewProviderRow, ProviderChanges, ProviderRow};
use crate::schema::providers;
use crate::work::{corrupt, decode_all, TxError};

/// Every acquirer provider, enabled or not, by name, its credentials opened with `vault`.
fn read_providers<E: From<StoreError>>(
    conn: &mut DbConn,
    vault: &Vault,
) -> Result<Vec<AcquirerProvider>, TxError<E>> {
    let rows: Vec<ProviderRow> = providers::table
        .order(providers::name.asc())
        .select(ProviderRow::as_select())
        .load(conn)?;
    decode_all(rows, |row| row.into_provider(vault))
}

fn name_taken(error: DieselError) -> TxError<ProviderInsertError> {
    match error {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _) => {
            TxError::Fail(ProviderInsertError::NameTaken)
        }
        other => TxError::Db(other),
    }
}

impl Database {
    /// See [`OperatorStore::insert_provider`](domain::ports::OperatorStore::insert_provider).
    pub(crate) async fn insert_provider_row(
        &self,
        provider: &AcquirerProvider,
        at: Timestamp,
    ) -> Result<(), ProviderInsertError> {
        // The built-in sandbox holds its name (the table's CHECK says the same).
        if provider.name.is_sandbox() {
            return Err(ProviderInsertError::NameTaken);
        }
        let provider = provider.clone();
        let vault = Arc::clone(&self.inner.vault);
        // Two inserts of one name: the primary key makes the second wait for the first and
        // fail once it commits (PostgreSQL), or run after it (SQLite's one writer).
        self.write_one(move |conn| {
            let row = NewProviderRow::new(&vault, &provider, at).map_err(corrupt)?;
            diesel::insert_into(providers::table)
                .values(&row)
                .execute(conn)
                .map_err(name_taken)?;
            Ok(())
        })
        .await?;
        self.inner.providers.clear();
        Ok(())
    }

    /// See [`OperatorStore::update_provider`](domain::ports::OperatorStore::update_provider).
    pub(crate) async fn update_provider_row(
        &self,
        provider: &AcquirerProvider,
        at: Timestamp,
    ) -> Result<bool, StoreError> {
        let provider = provider.clone();
        let vault = Arc::clone(&self.inner.vault);
        let found = self
            .write_one(move |conn| {
                let changes = ProviderChanges::new(&vault, &provider, at).map_err(corrupt)?;
                let changed = diesel::update(providers::table.find(provider.name.as_str()))
                    .set(&changes)
                    .execute(conn)?;
                Ok::<_, TxError<StoreError>>(changed == 1)
            })
            .await?;
        self.inner.providers.clear();
        Ok(found)
    }

    /// See [`OperatorStore::list_providers`](domain::ports::OperatorStore::list_providers).
    pub(crate) async fn read_provider_rows(&self) -> Result<Vec<AcquirerProvider>, StoreError> {
        let vault = Arc::clone(&self.inner.vault);
        self.read(move |conn| read_providers(conn, &vault)).await
    }

    /// Every provider, from memory for up to the cache TTL (2 s by default).
    async fn cached_providers(&self) -> Result<Arc<Vec<AcquirerProvider>>, StoreError> {
        let cache = &self.inner.providers;
        if let Some(found) = cache.get(&()) {
            return Ok(found);
        }
        let ticket = cache.ticket();
        let found = Arc::new(self.read_provider_rows().await?);
        cache.put((), ticket, Arc::clone(&found));
        Ok(found)
    }
}

#[async_trait]
impl ProviderDirectory for Database {
    /// Served from memory for up to the cache TTL (2 s by default).
    async fn acquirers(&self) -> Result<Vec<AcquirerProvider>, StoreError> {
        Ok(self.cached_providers().await?.as_ref().clone())
    }

    /// Served from memory for up to the cache TTL (2 s by default).
    async fn acquirer(&self, name: &str) -> Result<Option<AcquirerProvider>, StoreError> {
        let all = self.cached_providers().await?;
        Ok(all.iter().find(|p| p.name.as_str() == name).cloned())
    }
}

/// What the provider metrics show, as storage has it now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderSignals {
    /// Discrepancies ever recorded, per provider.
    pub discrepancies: Vec<(String, i64)>,
    /// Per provider and direction with a processing operation, the oldest one's creation time.
    pub oldest_processing: Vec<(String, String, Timestamp)>,
}

impl Database {
    /// Reads [`ProviderSignals`]: the discrepancies grouped, and the oldest processing
    /// operation per provider and direction by a skip scan of the partial index of processing
    /// operations (`operations_processing`: provider, direction, created_at), a few index
    /// lookups per provider however many operations are processing. A `GROUP BY` read
    /// the whole index instead: with 200,000 deposits waiting for their users that was 60 ms
    /// of database time every 5 seconds in every process.
    pub async fn provider_signals(&self) -> Result<ProviderSignals, StoreError> {
        use crate::schema::{operations, provider_discrepancies};
        use diesel::dsl::count_star;
        self.read(|conn| {
            let discrepancies = provider_discrepancies::table
                .group_by(provider_discrepancies::provider)
                .select((provider_discrepancies::provider, count_star()))
                .order(provider_discrepancies::provider.asc())
                .load::<(String, i64)>(conn)?;
            let processing = || operations::table.filter(operations::status.eq(3_i16));
            let mut oldest_processing = Vec::new();
            let mut after: Option<String> = None;
            loop {
                let next = match &after {
                    None => processing().into_boxed(),
                    Some(last) => processing()
                        .filter(operations::provider.gt(last.clone()))
                        .into_boxed(),
                };
                let Some(provider) = next
                    .select(operations::provider)
                    .order(operations::provider.asc())
                    .first::<String>(conn)
                    .optional()?
                else {
                    break;
                };
                for direction in [Direction::Deposit, Direction::Withdrawal] {
                    let first = processing()
                        .filter(operations::provider.eq(&provider))
                        .filter(operations::direction.eq(direction.as_str()))
                        .select(operations::created_at)
                        .order(operations::created_at.asc())
                        .first::<i64>(conn)
                        .optional()?;
                    if let Some(at) = first {
                        let direction = direction.as_str().to_string();
                        oldest_processing.push((
                            provider.clone(),
                            direction,
                            Timestamp::from_millis(at),
                        ));
                    }
                }
                after = Some(provider);
            }
            Ok(ProviderSignals {
                discrepancies,
                oldest_processing,
            })
        })
        .await
    }
}
