//! Operator functions for the CLI: merchants, routes and `ledger verify`.
//!
//! All are async (each runs as one unit of work on a blocking thread) and take effect in this
//! process at once; other processes see them within their cache TTL (2 s by default).

use std::collections::{BTreeMap, BTreeSet};

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use domain::ledger::LedgerMismatch;
use domain::merchant::{Merchant, Secret};
use domain::ports::StoreError;
use domain::route::{Flow, Route};
use domain::{Currency, Direction, MerchantId, PaymentMethod, ValueError};

use crate::conn::DbConn;
use crate::database::Database;
use crate::directory::{read_merchant, read_routes, MerchantKey};
use crate::rows::{self, merchant_from_rows, MerchantRow, NewMerchantRow, NewRouteRow};
use crate::schema::{merchant_methods, merchants, routes};
use crate::store::ledger_sums;
use crate::work::{corrupt, TxError};

/// Why an operator's change was refused.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// Merchant names are unique.
    #[error("a merchant with this name already exists")]
    NameTaken,
    /// The explicit merchant id is in use.
    #[error("a merchant with this id already exists")]
    IdTaken,
    /// A value breaks a rule (the variant says which).
    #[error(transparent)]
    Invalid(#[from] Invalid),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A merchant to create. The secrets are made by the caller (the CLI), 64 hex characters.
#[derive(Debug, Clone)]
pub struct NewMerchant {
    /// `None`: a fresh UUID v4 in text form.
    pub id: Option<MerchantId>,
    pub name: String,
    pub access: BTreeSet<(Direction, PaymentMethod)>,
    pub deposit_secret: Secret,
    pub withdrawal_secret: Secret,
}

/// A route to add (enabled). Amounts are inclusive bounds in minor units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRoute {
    pub direction: Direction,
    pub method: PaymentMethod,
    pub currency: Currency,
    pub min_amount: i64,
    pub max_amount: i64,
    pub priority: i32,
    pub provider: String,
    pub flow: Flow,
    /// `None`: the domain default (600 s) applies.
    pub lifetime_secs: Option<i64>,
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The rule an operator's value breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("this method is not allowed in this direction")]
    MethodForDirection,
    #[error("the minimum must be at least 0.01 and the maximum at least the minimum")]
    AmountBounds,
    #[error("the lifetime must be a positive number of seconds")]
    Lifetime,
    #[error("the provider must be named")]
    Provider,
    #[error("the name {0}")]
    Name(ValueError),
}

fn check_route(route: &NewRoute) -> Result<(), Invalid> {
    if !route.direction.methods().contains(&route.method) {
        return Err(Invalid::MethodForDirection);
    }
    if route.min_amount < 1 || route.max_amount < route.min_amount {
        return Err(Invalid::AmountBounds);
    }
    if route.lifetime_secs.is_some_and(|s| s <= 0) {
        return Err(Invalid::Lifetime);
    }
    if route.provider.trim().is_empty() {
        return Err(Invalid::Provider);
    }
    Ok(())
}

/// Which unique constraint a merchant insert broke.
fn merchant_conflict(error: DieselError) -> TxError<AdminError> {
    match &error {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            // PostgreSQL names the constraint (merchants_name_key), SQLite the column.
            let which = info.constraint_name().unwrap_or(info.message());
            if which.contains("name") {
                TxError::Fail(AdminError::NameTaken)
            } else {
                TxError::Fail(AdminError::IdTaken)
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
            diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
                "last_insert_rowid()",
            ))
            .get_result(lite)
        }
    }
}

impl Database {
    /// Creates a merchant with its access pairs. `NameTaken` / `IdTaken` on a clash.
    #[tracing::instrument(skip_all, fields(merchant.name = %new.name))]
    pub async fn create_merchant(&self, new: NewMerchant) -> Result<Merchant, AdminError> {
        let name = domain::bounded_text(new.name.trim(), 128).map_err(Invalid::Name)?;
        let id = match new.id {
            Some(id) => id,
            None => MerchantId::from_uuid(uuid::Uuid::new_v4()),
        };
        let merchant = Merchant {
            id,
            name,
            deposit_secret: new.deposit_secret,
            withdrawal_secret: new.withdrawal_secret,
            access: new.access,
            enabled: true,
        };
        let stored = merchant.clone();
        self.write(move |conn| {
            let row = NewMerchantRow {
                id: stored.id.as_str(),
                name: &stored.name,
                deposit_secret: stored.deposit_secret.expose(),
                withdrawal_secret: stored.withdrawal_secret.expose(),
                enabled: 1,
                created_at: now_millis(),
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
            Ok(())
        })
        .await?;
        self.inner.merchants.clear();
        Ok(merchant)
    }

    /// Every merchant, by name.
    pub async fn list_merchants(&self) -> Result<Vec<Merchant>, AdminError> {
        self.read(|conn| {
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
            let mut by_merchant: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
            for (merchant, direction, method) in pairs {
                by_merchant
                    .entry(merchant)
                    .or_default()
                    .push((direction, method));
            }
            rows.into_iter()
                .map(|row| {
                    let methods = by_merchant.remove(&row.id).unwrap_or_default();
                    merchant_from_rows(row, &methods)
                })
                .collect::<anyhow::Result<Vec<_>>>()
                .map_err(corrupt)
        })
        .await
    }

    /// The merchant with this name, enabled or not.
    pub async fn merchant_by_name(&self, name: &str) -> Result<Option<Merchant>, AdminError> {
        let key = MerchantKey::Name(name.to_string());
        self.read(move |conn| read_merchant(conn, &key)).await
    }

    /// Disables a merchant: its requests are refused from then on. `false` if it is unknown.
    #[tracing::instrument(skip(self), fields(merchant.id = %id))]
    pub async fn disable_merchant(&self, id: &MerchantId) -> Result<bool, AdminError> {
        let id = id.as_str().to_string();
        let found = self
            .write(move |conn| {
                let changed = diesel::update(merchants::table.find(&id))
                    .set(merchants::enabled.eq(0_i16))
                    .execute(conn)?;
                Ok::<_, TxError<AdminError>>(changed == 1)
            })
            .await?;
        self.inner.merchants.clear();
        Ok(found)
    }

    /// Every route, enabled or not, by id (read from the database, not the cache).
    pub async fn list_routes(&self) -> Result<Vec<Route>, AdminError> {
        self.read(read_routes).await
    }

    /// Adds an enabled route and returns it with its id.
    #[tracing::instrument(skip(self))]
    pub async fn add_route(&self, new: NewRoute) -> Result<Route, AdminError> {
        check_route(&new)?;
        let stored = new.clone();
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
                Ok::<_, TxError<AdminError>>(insert_route(conn, &row)?)
            })
            .await?;
        self.inner.routes.clear();
        Ok(Route {
            id,
            direction: new.direction,
            method: new.method,
            currency: new.currency,
            min_amount: new.min_amount,
            max_amount: new.max_amount,
            priority: new.priority,
            provider: new.provider,
            flow: new.flow,
            lifetime_secs: new.lifetime_secs,
            enabled: true,
        })
    }

    /// Disables a route. `false` if there is no route with this id.
    #[tracing::instrument(skip(self))]
    pub async fn disable_route(&self, id: i64) -> Result<bool, AdminError> {
        let found = self
            .write(move |conn| {
                let changed = diesel::update(routes::table.find(id))
                    .set(routes::enabled.eq(0_i16))
                    .execute(conn)?;
                Ok::<_, TxError<AdminError>>(changed == 1)
            })
            .await?;
        self.inner.routes.clear();
        Ok(found)
    }

    /// Every merchant and currency whose balance differs from the sums of its ledger entries
    /// (available and held each), including ledger entries with no balance row. Empty: it holds.
    #[tracing::instrument(skip(self))]
    pub async fn verify_ledger(&self) -> Result<Vec<LedgerMismatch>, AdminError> {
        self.read(|conn| {
            let mut mismatches = Vec::new();
            for sums in ledger_sums::<AdminError>(conn)? {
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
}
