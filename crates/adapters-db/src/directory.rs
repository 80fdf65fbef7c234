//! `MerchantDirectory` and `RouteTable`, served from short-lived in-memory copies.

use std::sync::Arc;

use async_trait::async_trait;
use diesel::prelude::*;
use domain::merchant::Merchant;
use domain::ports::{MerchantDirectory, RouteTable, StoreError};
use domain::route::Route;
use domain::MerchantId;

use crate::conn::DbConn;
use crate::database::Database;
use crate::rows::{merchant_from_rows, route_from_row, MerchantRow, RouteRow};
use crate::schema::{merchant_methods, merchants, routes};
use crate::work::{corrupt, TxError};

/// Which merchant to read.
pub(crate) enum MerchantKey {
    Id(String),
    Name(String),
}

/// The merchant with its access pairs, enabled or not.
pub(crate) fn read_merchant<E: From<StoreError>>(
    conn: &mut DbConn,
    key: &MerchantKey,
) -> Result<Option<Merchant>, TxError<E>> {
    let query = merchants::table.select(MerchantRow::as_select());
    let row = match key {
        MerchantKey::Id(id) => query.filter(merchants::id.eq(id)).first(conn),
        MerchantKey::Name(name) => query.filter(merchants::name.eq(name)).first(conn),
    }
    .optional()?;
    let Some(row) = row else {
        return Ok(None);
    };
    let methods: Vec<(String, String)> = merchant_methods::table
        .filter(merchant_methods::merchant_id.eq(&row.id))
        .select((merchant_methods::direction, merchant_methods::method))
        .load(conn)?;
    merchant_from_rows(row, &methods).map(Some).map_err(corrupt)
}

/// Every route, enabled or not, by id.
pub(crate) fn read_routes<E: From<StoreError>>(
    conn: &mut DbConn,
) -> Result<Vec<Route>, TxError<E>> {
    let found: Vec<RouteRow> = routes::table
        .order(routes::id.asc())
        .select(RouteRow::as_select())
        .load(conn)?;
    found
        .into_iter()
        .map(route_from_row)
        .collect::<anyhow::Result<Vec<_>>>()
        .map_err(corrupt)
}

#[async_trait]
impl MerchantDirectory for Database {
    /// Served from memory for up to the cache TTL (2 s by default), unknown ids included.
    async fn merchant(&self, id: &MerchantId) -> Result<Option<Merchant>, StoreError> {
        let cache = &self.inner.merchants;
        if let Some(found) = cache.get(id) {
            return Ok(found);
        }
        let ticket = cache.ticket();
        let key = MerchantKey::Id(id.as_str().to_string());
        let found = self
            .read(move |conn| read_merchant::<StoreError>(conn, &key))
            .await?;
        cache.put(id.clone(), ticket, found.clone());
        Ok(found)
    }
}

#[async_trait]
impl RouteTable for Database {
    /// Served from memory for up to the cache TTL (2 s by default).
    async fn routes(&self) -> Result<Vec<Route>, StoreError> {
        let cache = &self.inner.routes;
        if let Some(found) = cache.get(&()) {
            return Ok(found.as_ref().clone());
        }
        let ticket = cache.ticket();
        let found = Arc::new(self.read(read_routes::<StoreError>).await?);
        cache.put((), ticket, Arc::clone(&found));
        Ok(found.as_ref().clone())
    }
}
