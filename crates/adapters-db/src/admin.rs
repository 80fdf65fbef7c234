//! The operator's storage: the [`OperatorStore`] port (merchants, routes, providers, manual
//! balance moves and `ledger verify`; the providers' writes are in `crate::providers`, the
//! reads of one operation's ledger entries and callbacks in `crate::story`, discrepancies in
//! `crate::discrepancies`). The
//! rules are the domain's (`domain::operator`); what arrives here already passed them.
//!
//! Every method is one unit of work on a blocking thread; changes take effect in this process
//! at once; other processes see them within their cache TTL (2 s by default), except merchant
//! secrets, which every process reads afresh on each lookup.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use domain::discrepancy::{RecordedDiscrepancy, Resolution, ResolutionNote, Resolved};
use domain::ledger::{Balance, BalanceMove, LedgerMismatch, ManualEntry, ManualNote};
use domain::merchant::KeyRotation;
use domain::merchant::{KeyRing, Merchant, SigningKey, SigningRulesChange};
use domain::ports::{
    ManualMoveError, MerchantInsertError, OperatorStore, ProviderInsertError, StoreError,
};
use domain::provider::AcquirerProvider;
use domain::route::CheckedRoute;
use domain::route::Route;
use domain::story::{CallbackDelivery, LedgerEntry};
use domain::{MerchantId, OperationId, Timestamp};

use crate::conn::{last_insert_rowid, DbConn};
use crate::crypto::Vault;
use crate::database::{Database, SECRETS_TTL};
use crate::directory::{read_merchant, read_routes, MerchantKey};
use crate::discrepancies::resolve_open_of;
use crate::outbox::release_merchant;
use crate::rows::{
    self, profile_from_rows, KeyRow, KeyRows, MerchantRow, NewKeyRow, NewMerchantRow, NewRouteRow,
};
use crate::schema::{balances, merchant_keys, merchant_methods, merchants, routes};
use crate::store::{apply_manual_entry, ledger_sums};
use crate::work::{corrupt, decode_all, TxError};

/// Which unique constraint a merchant insert broke.
fn merchant_conflict(error: DieselError) -> TxError<MerchantInsertError> {
    match &error {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            // PostgreSQL names the constraint (merchants_name_key), SQLite the column.
            let which = info.constraint_name().unwrap_or(info.message());
            if which.contains("name") {
                TxError::Fail(MerchantInsertError::NameTaken)
            } else {
                TxError::Fail(MerchantInsertError::IdTaken)
            }
        }
        _ => TxError::Db(error),
    }
}

fn insert_route(conn: &mut DbConn, row: &NewRouteRow<'_>) -> Result<i64, DieselError> {
    match conn {
        DbConn::Pg(pg) => diesel::insert_into(routes::table)
            .values(row)
            .returning(routes::id)
            .get_result(pg),
        DbConn::Sqlite(lite) => {
            diesel::insert_into(routes::table)
                .values(row)
                .execute(lite)?;
            last_insert_rowid(lite)
        }
    }
}

/// The balance of `merchant` in `currency` as it stands inside the caller's transaction.
fn read_balance<E: From<StoreError>>(
    conn: &mut DbConn,
    adjustment: &BalanceMove,
) -> Result<Balance, TxError<E>> {
    let found: Option<(i64, i64)> = balances::table
        .filter(balances::merchant_id.eq(adjustment.merchant_id.as_str()))
        .filter(balances::currency.eq(adjustment.currency.as_str()))
        .select((balances::available, balances::held))
        .first(conn)
        .optional()?;
    let (available, held) = found.unwrap_or((0, 0));
    Ok(Balance {
        currency: adjustment.currency,
        available,
        held,
    })
}

/// Whether merchant `id` exists, its row locked until the commit on PostgreSQL (`FOR UPDATE`),
/// so that concurrent rotations of its secrets run one after the other; on SQLite the write
/// transaction began `IMMEDIATE`, so it is the only writer already.
pub(crate) fn lock_merchant<E>(conn: &mut DbConn, id: &str) -> Result<bool, TxError<E>> {
    let query = merchants::table.find(id).select(merchants::id);
    let found: Option<String> = match conn {
        DbConn::Pg(pg) => query.for_update().first(pg).optional()?,
        DbConn::Sqlite(_) => query.first(conn).optional()?,
    };
    Ok(found.is_some())
}

/// Applies `rotation` in the caller's write transaction: the direction's next version is the
/// new secret, and every older one still live at `older_end` ends then. The direction's ring
/// after it; `None`, writing nothing, if the merchant is unknown.
fn rotate(
    conn: &mut DbConn,
    vault: &Vault,
    rotation: &KeyRotation,
) -> Result<Option<KeyRing>, TxError<StoreError>> {
    use crate::schema::merchant_keys::dsl::*;
    let (merchant, way) = (rotation.merchant.as_str(), rotation.direction.as_str());
    if !lock_merchant(conn, merchant)? {
        return Ok(None);
    }
    let newest: Option<i32> = merchant_keys
        .filter(merchant_id.eq(merchant))
        .filter(direction.eq(way))
        .select(diesel::dsl::max(version))
        .first(conn)?;
    let next = newest
        .unwrap_or(0)
        .checked_add(1)
        .ok_or_else(|| corrupt(anyhow::anyhow!("no version after {newest:?} of {merchant}")))?;
    let end = rotation.older_end.millis();
    diesel::update(
        merchant_keys
            .filter(merchant_id.eq(merchant))
            .filter(direction.eq(way))
            .filter(expires_at.is_null().or(expires_at.gt(end))),
    )
    .set(expires_at.eq(Some(end)))
    .execute(conn)?;
    let key = SigningKey {
        version: next,
        secret: rotation.secret.clone(),
        created_at: rotation.at,
        expires_at: None,
    };
    let row =
        NewKeyRow::new(vault, &rotation.merchant, rotation.direction, &key).map_err(corrupt)?;
    diesel::insert_into(merchant_keys)
        .values(&row)
        .execute(conn)?;
    let stored: Vec<KeyRow> = merchant_keys
        .filter(merchant_id.eq(merchant))
        .filter(direction.eq(way))
        .select(KeyRow::as_select())
        .load(conn)?;
    let mut keys = KeyRows::default();
    for each in stored {
        keys.push(vault, each).map_err(corrupt)?;
    }
    keys.ring(rotation.direction).map(Some).map_err(corrupt)
}

/// What an operator changes on a route.
#[derive(Debug, Clone, Copy)]
enum RouteChange {
    Enabled(bool),
    Priority(i32),
}

/// Sets merchant `id`'s `enabled` flag in the caller's transaction; whether it exists.
fn set_enabled<E>(conn: &mut DbConn, id: &str, on: bool) -> Result<bool, TxError<E>> {
    let changed = diesel::update(merchants::table.find(id))
        .set(merchants::enabled.eq(i16::from(on)))
        .execute(conn)?;
    Ok(changed == 1)
}

impl Database {
    /// Disables merchant `id`; `Ok(false)` if there is none. This process's directory sees it
    /// at once.
    async fn disable(&self, id: &MerchantId) -> Result<bool, StoreError> {
        let id = id.as_str().to_string();
        let found = self
            .write(move |conn| set_enabled::<StoreError>(conn, &id, false))
            .await?;
        self.forget_merchants();
        Ok(found)
    }

    /// Enables merchant `id` and releases its held callbacks in the same transaction: the
    /// update of the merchant's row first (on PostgreSQL it waits for a hold that read the row
    /// under `FOR SHARE`), then the release, which then sees what that hold wrote. How many
    /// were released; `None` if there is no such merchant. This process's directory sees it
    /// at once.
    async fn enable(&self, id: &MerchantId, at: Timestamp) -> Result<Option<u64>, StoreError> {
        let id = id.as_str().to_string();
        let released = self
            .write(move |conn| {
                if !set_enabled::<StoreError>(conn, &id, true)? {
                    return Ok(None);
                }
                Ok(Some(release_merchant::<StoreError>(conn, &id, at)?))
            })
            .await?;
        self.forget_merchants();
        Ok(released)
    }

    /// Applies `change` to route `id`; `Ok(false)` if there is none. This process's routing
    /// sees it at once.
    async fn change_route(&self, id: i64, change: RouteChange) -> Result<bool, StoreError> {
        let found = self
            .write_one(move |conn| {
                let route = routes::table.find(id);
                let changed = match change {
                    RouteChange::Enabled(on) => diesel::update(route)
                        .set(routes::enabled.eq(i16::from(on)))
                        .execute(conn)?,
                    RouteChange::Priority(priority) => diesel::update(route)
                        .set(routes::priority.eq(priority))
                        .execute(conn)?,
                };
                Ok::<_, TxError<StoreError>>(changed == 1)
            })
            .await?;
        self.inner.routes.clear();
        Ok(found)
    }
}

/// Added to [`SECRETS_TTL`] in a rotation's wait, for clocks that tick at slightly
/// different rates on different machines.
const SECRETS_TTL_MARGIN: std::time::Duration = std::time::Duration::from_millis(50);

#[async_trait]
impl OperatorStore for Database {
    #[tracing::instrument(skip_all, fields(merchant.id = %merchant.id))]
    async fn insert_merchant(
        &self,
        merchant: &Merchant,
        at: Timestamp,
    ) -> Result<(), MerchantInsertError> {
        let stored = merchant.clone();
        let vault = Arc::clone(&self.inner.vault);
        self.write(move |conn| {
            let row = NewMerchantRow {
                id: stored.id.as_str(),
                name: &stored.name,
                enabled: 1,
                require_timestamp: i16::from(stored.require_timestamp),
                require_signature_v2: i16::from(stored.require_signature_v2),
                created_at: at.millis(),
            };
            diesel::insert_into(merchants::table)
                .values(&row)
                .execute(conn)
                .map_err(merchant_conflict)?;
            for (direction, method) in &stored.access {
                diesel::insert_into(merchant_methods::table)
                    .values((
                        merchant_methods::merchant_id.eq(stored.id.as_str()),
                        merchant_methods::direction.eq(direction.as_str()),
                        merchant_methods::method.eq(method.as_str()),
                    ))
                    .execute(conn)?;
            }
            for direction in domain::Direction::ALL {
                for key in stored.keys(direction).keys() {
                    let row =
                        NewKeyRow::new(&vault, &stored.id, direction, key).map_err(corrupt)?;
                    diesel::insert_into(merchant_keys::table)
                        .values(&row)
                        .execute(conn)?;
                }
            }
            Ok(())
        })
        .await?;
        self.forget_merchants();
        Ok(())
    }

    async fn list_merchants(&self) -> Result<Vec<Merchant>, StoreError> {
        let vault = Arc::clone(&self.inner.vault);
        self.read(move |conn| {
            let rows: Vec<MerchantRow> = merchants::table
                .order(merchants::name.asc())
                .select(MerchantRow::as_select())
                .load(conn)?;
            let pairs: Vec<(String, String, String)> = merchant_methods::table
                .select((
                    merchant_methods::merchant_id,
                    merchant_methods::direction,
                    merchant_methods::method,
                ))
                .load(conn)?;
            let key_rows: Vec<KeyRow> = merchant_keys::table
                .select(KeyRow::as_select())
                .load(conn)?;
            let mut by_merchant: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
            for (merchant, direction, method) in pairs {
                by_merchant
                    .entry(merchant)
                    .or_default()
                    .push((direction, method));
            }
            let mut keys: BTreeMap<String, KeyRows> = BTreeMap::new();
            for row in key_rows {
                let entry = keys.entry(row.merchant_id.clone()).or_default();
                entry.push(&vault, row).map_err(corrupt)?;
            }
            decode_all(rows, |row| {
                let methods = by_merchant.remove(&row.id).unwrap_or_default();
                let merchant_keys = keys.remove(&row.id).unwrap_or_default();
                merchant_keys.merchant(profile_from_rows(row, &methods)?)
            })
        })
        .await
    }

    async fn find_merchant(&self, id: &MerchantId) -> Result<Option<Merchant>, StoreError> {
        let key = MerchantKey::Id(id.as_str().to_string());
        let vault = Arc::clone(&self.inner.vault);
        self.read(move |conn| read_merchant(conn, &vault, &key))
            .await
    }

    async fn merchant_by_name(&self, name: &str) -> Result<Option<Merchant>, StoreError> {
        let key = MerchantKey::Name(name.to_string());
        let vault = Arc::clone(&self.inner.vault);
        self.read(move |conn| read_merchant(conn, &vault, &key))
            .await
    }

    #[tracing::instrument(skip(self), fields(merchant.id = %id))]
    async fn disable_merchant(&self, id: &MerchantId) -> Result<bool, StoreError> {
        self.disable(id).await
    }

    #[tracing::instrument(skip(self), fields(merchant.id = %id))]
    async fn enable_merchant(
        &self,
        id: &MerchantId,
        at: Timestamp,
    ) -> Result<Option<u64>, StoreError> {
        self.enable(id, at).await
    }

    #[tracing::instrument(skip_all, fields(merchant.id = %rotation.merchant, direction = %rotation.direction))]
    async fn rotate_key(&self, rotation: &KeyRotation) -> Result<Option<KeyRing>, StoreError> {
        let rotation = rotation.clone();
        let vault = Arc::clone(&self.inner.vault);
        let ring = self
            .write(move |conn| rotate(conn, &vault, &rotation))
            .await?;
        self.forget_merchants();
        if ring.is_some() {
            // Every process serves secrets it read at most `SECRETS_TTL` ago: once that has
            // passed since the commit, no lookup anywhere uses secrets read before it.
            tokio::time::sleep(SECRETS_TTL + SECRETS_TTL_MARGIN).await;
        }
        Ok(ring)
    }

    #[tracing::instrument(skip(self), fields(merchant.id = %id))]
    async fn change_signing_rules(
        &self,
        id: &MerchantId,
        change: SigningRulesChange,
    ) -> Result<bool, StoreError> {
        let id = id.as_str().to_string();
        let found = self
            .write(move |conn| {
                if change.is_empty() {
                    let found = merchants::table
                        .find(&id)
                        .select(merchants::id)
                        .first::<String>(conn)
                        .optional()?;
                    return Ok::<_, TxError<StoreError>>(found.is_some());
                }
                // A rule left out (`None`) is no column in the statement.
                let changed = diesel::update(merchants::table.find(&id))
                    .set((
                        change
                            .require_timestamp
                            .map(|on| merchants::require_timestamp.eq(i16::from(on))),
                        change
                            .require_signature_v2
                            .map(|on| merchants::require_signature_v2.eq(i16::from(on))),
                    ))
                    .execute(conn)?;
                Ok(changed == 1)
            })
            .await?;
        self.forget_merchants();
        Ok(found)
    }

    #[tracing::instrument(skip_all)]
    async fn insert_route(&self, route: &CheckedRoute) -> Result<i64, StoreError> {
        let stored = route.get().clone();
        let id = self
            .write(move |conn| {
                let row = NewRouteRow {
                    direction: stored.direction.as_str(),
                    method: stored.method.as_str(),
                    currency: stored.currency.as_str(),
                    min_amount: stored.min_amount,
                    max_amount: stored.max_amount,
                    priority: stored.priority,
                    provider: &stored.provider,
                    flow: stored.flow.as_str(),
                    lifetime_secs: stored.lifetime_secs,
                    enabled: 1,
                };
                Ok::<_, TxError<StoreError>>(insert_route(conn, &row)?)
            })
            .await?;
        self.inner.routes.clear();
        Ok(id)
    }

    async fn list_routes(&self) -> Result<Vec<Route>, StoreError> {
        self.read(read_routes).await
    }

    #[tracing::instrument(skip(self))]
    async fn disable_route(&self, id: i64) -> Result<bool, StoreError> {
        self.change_route(id, RouteChange::Enabled(false)).await
    }

    #[tracing::instrument(skip(self))]
    async fn enable_route(&self, id: i64) -> Result<bool, StoreError> {
        self.change_route(id, RouteChange::Enabled(true)).await
    }

    #[tracing::instrument(skip(self))]
    async fn set_route_priority(&self, id: i64, priority: i32) -> Result<bool, StoreError> {
        self.change_route(id, RouteChange::Priority(priority)).await
    }

    #[tracing::instrument(skip_all, fields(provider = %provider.name))]
    async fn insert_provider(
        &self,
        provider: &AcquirerProvider,
        at: Timestamp,
    ) -> Result<(), ProviderInsertError> {
        self.insert_provider_row(provider, at).await
    }

    #[tracing::instrument(skip_all, fields(provider = %provider.name))]
    async fn update_provider(
        &self,
        provider: &AcquirerProvider,
        at: Timestamp,
    ) -> Result<bool, StoreError> {
        self.update_provider_row(provider, at).await
    }

    async fn list_providers(&self) -> Result<Vec<AcquirerProvider>, StoreError> {
        self.read_provider_rows().await
    }

    /// The ledger entry records `note`'s actor and reason; one naming an operation resolves
    /// its open discrepancies in the same transaction.
    #[tracing::instrument(skip_all, fields(merchant.id = %adjustment.merchant_id, actor = %note.actor))]
    async fn apply_manual_move(
        &self,
        adjustment: &BalanceMove,
        note: &ManualNote,
    ) -> Result<ManualEntry, ManualMoveError> {
        let (adjustment, note) = (adjustment.clone(), note.clone());
        self.write(move |conn| {
            let short = || ManualMoveError::InsufficientBalance;
            match apply_manual_entry(conn, &adjustment, &note, short) {
                Ok(entry_id) => {
                    let resolved = match adjustment.operation_id {
                        Some(operation) => {
                            let resolution = Resolution {
                                at: adjustment.at,
                                actor: note.actor.clone(),
                                note: ResolutionNote::from_stored(&note.reason),
                                ledger_entry: Some(entry_id),
                            };
                            resolve_open_of(conn, operation, &resolution)?
                        }
                        None => Vec::new(),
                    };
                    Ok(ManualEntry {
                        balance: read_balance(conn, &adjustment)?,
                        entry_id,
                        resolved,
                    })
                }
                // The merchant does not exist (the domain looks first; this is a race or a bug).
                Err(TxError::Db(DieselError::DatabaseError(
                    DatabaseErrorKind::ForeignKeyViolation,
                    _,
                ))) => Err(corrupt(anyhow::anyhow!(
                    "unknown merchant {}",
                    adjustment.merchant_id
                ))),
                Err(other) => Err(other),
            }
        })
        .await
    }

    #[tracing::instrument(skip(self))]
    async fn verify_ledger(&self) -> Result<Vec<LedgerMismatch>, StoreError> {
        self.read(|conn| {
            let mut mismatches = Vec::new();
            for sums in ledger_sums::<StoreError>(conn)? {
                if sums.balance_available == sums.ledger_available
                    && sums.balance_held == sums.ledger_held
                {
                    continue;
                }
                let parsed = rows::merchant_id("balances.merchant_id", &sums.merchant_id)
                    .and_then(|m| Ok((m, rows::currency("balances.currency", &sums.currency)?)));
                let (merchant_id, currency) = parsed.map_err(corrupt)?;
                mismatches.push(LedgerMismatch {
                    merchant_id,
                    currency,
                    balance_available: sums.balance_available,
                    balance_held: sums.balance_held,
                    ledger_available: sums.ledger_available,
                    ledger_held: sums.ledger_held,
                });
            }
            Ok(mismatches)
        })
        .await
    }

    #[tracing::instrument(skip(self))]
    async fn ledger_flows(&self) -> Result<Vec<domain::ledger::Flows>, StoreError> {
        self.read(crate::flows::ledger_flows).await
    }

    #[tracing::instrument(skip(self))]
    async fn broken_entries(
        &self,
        limit: u32,
    ) -> Result<Vec<domain::ledger::BrokenEntry>, StoreError> {
        self.read(move |conn| crate::chain::broken_entries(conn, limit))
            .await
    }

    async fn operation_ledger(&self, id: OperationId) -> Result<Vec<LedgerEntry>, StoreError> {
        self.read_operation_ledger(id).await
    }

    async fn operation_callbacks(
        &self,
        id: OperationId,
    ) -> Result<Vec<CallbackDelivery>, StoreError> {
        self.read_operation_callbacks(id).await
    }

    async fn discrepancies(
        &self,
        open_only: bool,
        limit: u32,
    ) -> Result<Vec<RecordedDiscrepancy>, StoreError> {
        self.read_discrepancies(open_only, limit).await
    }

    async fn operation_discrepancies(
        &self,
        id: OperationId,
    ) -> Result<Vec<RecordedDiscrepancy>, StoreError> {
        self.read_operation_discrepancies(id).await
    }

    #[tracing::instrument(skip(self, resolution), fields(actor = %resolution.actor))]
    async fn resolve_discrepancy(
        &self,
        id: i64,
        resolution: &Resolution,
    ) -> Result<Resolved, StoreError> {
        self.write_resolution(id, resolution).await
    }
}
