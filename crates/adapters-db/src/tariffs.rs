//! `TariffStore`: the `tariffs` table, read for every creation from a short-lived copy per
//! merchant (the cache TTL, 2 s by default, within the 5 s the contract allows). A change
//! made here clears this process's copies when it returns; any copy, here or elsewhere, is
//! at most the TTL old.

use std::sync::Arc;

use async_trait::async_trait;
use diesel::prelude::*;
use domain::fee::{FeeTerms, Tariff};
use domain::ports::{StoreError, TariffKey, TariffStore};
use domain::{MerchantId, Timestamp};

use crate::conn::DbConn;
use crate::database::Database;
use crate::rows::TariffRow;
use crate::schema::tariffs;
use crate::work::{corrupt, decode_all, TxError};

/// The tariffs of `merchant` (of every merchant when `None`), in key order.
fn read_tariffs<E: From<StoreError>>(
    conn: &mut DbConn,
    merchant: Option<&str>,
) -> Result<Vec<Tariff>, TxError<E>> {
    let mut query = tariffs::table
        .select(TariffRow::as_select())
        .order((
            tariffs::merchant_id.asc(),
            tariffs::direction.asc(),
            tariffs::method.asc(),
            tariffs::currency.asc(),
        ))
        .into_boxed();
    if let Some(merchant) = merchant {
        query = query.filter(tariffs::merchant_id.eq(merchant.to_owned()));
    }
    let rows: Vec<TariffRow> = query.load(conn)?;
    decode_all(rows, TariffRow::into_tariff)
}

/// The primary key of the row stored under `key`.
fn primary_key(key: &TariffKey) -> (&str, &str, &str, &str) {
    (
        key.merchant_id.as_str(),
        key.direction.as_str(),
        key.method.as_str(),
        key.currency.as_str(),
    )
}

/// The row stored under `key`.
fn find_row<E: From<StoreError>>(
    conn: &mut DbConn,
    key: &TariffKey,
) -> Result<Option<FeeTerms>, TxError<E>> {
    let row: Option<TariffRow> = tariffs::table
        .find(primary_key(key))
        .select(TariffRow::as_select())
        .first(conn)
        .optional()?;
    row.map(|row| row.terms()).transpose().map_err(corrupt)
}

impl Database {
    /// Writes `put` (a tariff and its time) or removes the tariff under `key`, returning the
    /// terms that were stored; forgets this process's copies.
    async fn change_tariff(
        &self,
        key: TariffKey,
        put: Option<(Tariff, Timestamp)>,
    ) -> Result<Option<FeeTerms>, StoreError> {
        let before = self
            .write(move |conn| {
                // Changes of one merchant's tariffs run one after the other (its row locked on
                // PostgreSQL; SQLite has one writer): the terms read are the ones replaced,
                // and a set never races a remove or another set of the same key.
                crate::admin::lock_merchant::<StoreError>(conn, key.merchant_id.as_str())?;
                let before = find_row(conn, &key)?;
                let target = tariffs::table.find(primary_key(&key));
                match &put {
                    Some((tariff, at)) => {
                        let row = TariffRow::new(tariff, at.millis());
                        if before.is_some() {
                            diesel::update(target).set(&row).execute(conn)?;
                        } else {
                            diesel::insert_into(tariffs::table)
                                .values(&row)
                                .execute(conn)?;
                        }
                    }
                    None => {
                        diesel::delete(target).execute(conn)?;
                    }
                }
                Ok(before)
            })
            .await;
        self.inner.tariffs.clear();
        before
    }
}

#[async_trait]
impl TariffStore for Database {
    async fn terms(&self, key: &TariffKey) -> Result<Option<FeeTerms>, StoreError> {
        let cache = &self.inner.tariffs;
        let of_merchant = match cache.get(&key.merchant_id) {
            Some(found) => found,
            None => {
                let ticket = cache.ticket();
                let id = key.merchant_id.as_str().to_owned();
                let found = Arc::new(
                    self.read(move |conn| read_tariffs::<StoreError>(conn, Some(&id)))
                        .await?,
                );
                cache.put(key.merchant_id.clone(), ticket, Arc::clone(&found));
                found
            }
        };
        // The copy is the merchant's: the rest of the key picks the tariff (no key built per
        // tariff on every creation).
        Ok(of_merchant
            .iter()
            .find(|t| {
                t.direction == key.direction && t.method == key.method && t.currency == key.currency
            })
            .map(|tariff| tariff.terms))
    }

    #[tracing::instrument(skip_all, fields(merchant.id = %tariff.merchant_id))]
    async fn put_tariff(
        &self,
        tariff: &Tariff,
        at: Timestamp,
    ) -> Result<Option<FeeTerms>, StoreError> {
        self.change_tariff(tariff.key(), Some((tariff.clone(), at)))
            .await
    }

    #[tracing::instrument(skip_all, fields(merchant.id = %key.merchant_id))]
    async fn remove_tariff(&self, key: &TariffKey) -> Result<Option<FeeTerms>, StoreError> {
        self.change_tariff(key.clone(), None).await
    }

    async fn tariffs<'a>(
        &self,
        merchant: Option<&'a MerchantId>,
    ) -> Result<Vec<Tariff>, StoreError> {
        let merchant = merchant.map(|m| m.as_str().to_owned());
        self.read(move |conn| read_tariffs::<StoreError>(conn, merchant.as_deref()))
            .await
    }
}
