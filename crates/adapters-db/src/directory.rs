//! `MerchantDirectory` and `RouteTable`, served from short-lived in-memory copies.
//!
//! Every API request needs its merchant's secrets. A merchant found with them is kept for
//! at most [`SECRETS_TTL`](crate::SECRETS_TTL) (1 s), counted from before the read that
//! found it, and a rotation returns only after that long (`rotate_key`): so any lookup that
//! starts after a rotation returned, in any process, uses secrets read after the rotation's
//! commit, and a rotation applies from the next request without a read per request. The
//! rest of the merchant (its row and access pairs) may be as old as the merchant cache's
//! TTL plus that second: 3 s by default, within the 5 s the contract allows.
//!
//! The reads of secrets after that time runs out are grouped like the writes
//! (`crate::group`): a request queues its read, and a reader takes every read queued (at
//! most [`MAX_KEY_READS`]) and serves them with one query, so under load one statement and
//! one blocking hand-off serve many requests, and alone a read runs at once.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use async_trait::async_trait;
use diesel::prelude::*;
use domain::merchant::Merchant;
use domain::ports::{MerchantDirectory, RouteTable, StoreError};
use domain::route::Route;
use domain::MerchantId;

use crate::conn::DbConn;
use crate::crypto::Vault;
use crate::database::Database;
use crate::jobs::KeyJob;
use crate::rows::{
    profile_from_rows, route_from_row, KeyRow, KeyRows, MerchantProfile, MerchantRow, RouteRow,
};
use crate::schema::{merchant_keys, merchant_methods, merchants, routes};
use crate::work::{corrupt, decode_all, TxError};

/// Which merchant to read.
pub(crate) enum MerchantKey {
    Id(String),
    Name(String),
}

/// The merchant's row and access pairs, enabled or not.
fn read_profile<E: From<StoreError>>(
    conn: &mut DbConn,
    key: &MerchantKey,
) -> Result<Option<MerchantProfile>, TxError<E>> {
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
    profile_from_rows(row, &methods).map(Some).map_err(corrupt)
}

/// Every secret of merchant `id`, opened with `vault`: one query on the primary key.
fn read_keys<E: From<StoreError>>(
    conn: &mut DbConn,
    vault: &Vault,
    id: &str,
) -> Result<KeyRows, TxError<E>> {
    let rows: Vec<KeyRow> = merchant_keys::table
        .filter(merchant_keys::merchant_id.eq(id))
        .select(KeyRow::as_select())
        .load(conn)?;
    let mut keys = KeyRows::default();
    for row in rows {
        keys.push(vault, row).map_err(corrupt)?;
    }
    Ok(keys)
}

/// The secrets of every merchant of `ids`, opened with `vault`, by merchant id: one query.
fn read_keys_of<E: From<StoreError>>(
    conn: &mut DbConn,
    vault: &Vault,
    ids: &[String],
) -> Result<HashMap<String, KeyRows>, TxError<E>> {
    let rows: Vec<KeyRow> = merchant_keys::table
        .filter(merchant_keys::merchant_id.eq_any(ids))
        .select(KeyRow::as_select())
        .load(conn)?;
    let mut keys: HashMap<String, KeyRows> = HashMap::new();
    for row in rows {
        let of = keys.entry(row.merchant_id.clone()).or_default();
        of.push(vault, row).map_err(corrupt)?;
    }
    Ok(keys)
}

/// `profiles` with their secrets as stored now (one query for all).
fn with_keys_of<E: From<StoreError>>(
    conn: &mut DbConn,
    vault: &Vault,
    profiles: Vec<MerchantProfile>,
) -> Result<Vec<Merchant>, TxError<E>> {
    if profiles.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<String> = profiles
        .iter()
        .map(|p| p.id().as_str().to_string())
        .collect();
    let mut keys = read_keys_of(conn, vault, &ids)?;
    decode_all(profiles, |profile| {
        let of = keys.remove(profile.id().as_str()).unwrap_or_default();
        of.merchant(profile)
    })
}

/// `profile` with its secrets as stored now.
fn with_keys<E: From<StoreError>>(
    conn: &mut DbConn,
    vault: &Vault,
    profile: MerchantProfile,
) -> Result<Merchant, TxError<E>> {
    let keys = read_keys(conn, vault, profile.id().as_str())?;
    keys.merchant(profile).map_err(corrupt)
}

/// The merchant with its access pairs and secrets, enabled or not.
pub(crate) fn read_merchant<E: From<StoreError>>(
    conn: &mut DbConn,
    vault: &Vault,
    key: &MerchantKey,
) -> Result<Option<Merchant>, TxError<E>> {
    match read_profile(conn, key)? {
        Some(profile) => with_keys(conn, vault, profile).map(Some),
        None => Ok(None),
    }
}

/// Every route, enabled or not, by id.
pub(crate) fn read_routes<E: From<StoreError>>(
    conn: &mut DbConn,
) -> Result<Vec<Route>, TxError<E>> {
    let found: Vec<RouteRow> = routes::table
        .order(routes::id.asc())
        .select(RouteRow::as_select())
        .load(conn)?;
    decode_all(found, route_from_row)
}

/// Most reads one query serves.
const MAX_KEY_READS: usize = 128;
/// Readers at work at once (each holds a pooled connection while it reads).
const KEY_READERS: usize = 2;

impl Database {
    /// `profile` with its secrets as stored now, read in the next group of reads.
    async fn with_keys_grouped(&self, profile: MerchantProfile) -> Result<Merchant, StoreError> {
        self.enqueue_and_wait(
            |db| &db.inner.key_reads,
            |reply| KeyJob { profile, reply },
            KEY_READERS,
            MAX_KEY_READS,
            Database::read_key_jobs,
            "the read of the merchant's secrets",
        )
        .await
    }

    /// Serves `jobs` with one query for all their merchants' secrets; if it fails, each job
    /// is read on its own, so each gets its own answer.
    fn read_key_jobs(&self, jobs: Vec<KeyJob>) {
        let vault = Arc::clone(&self.inner.vault);
        let mut by_merchant: HashMap<String, Vec<KeyJob>> = HashMap::new();
        for job in jobs {
            let id = job.profile.id().as_str().to_string();
            by_merchant.entry(id).or_default().push(job);
        }
        let ids: Vec<String> = by_merchant.keys().cloned().collect();
        match self.retrying(false, |conn| read_keys_of::<StoreError>(conn, &vault, &ids)) {
            Ok(mut keys) => {
                for (id, jobs) in by_merchant {
                    let of = keys.remove(&id).unwrap_or_default();
                    // The merchant's profile as the first of its requests found it cached.
                    let built = of.merchant(jobs[0].profile.clone());
                    for job in jobs {
                        let answer = match &built {
                            Ok(merchant) => Ok(merchant.clone()),
                            Err(error) => Err(StoreError::Other(anyhow::anyhow!("{error:#}"))),
                        };
                        let _ = job.reply.send(answer);
                    }
                }
            }
            Err(error) => {
                tracing::debug!(error = %domain::ports::Chain(&error), "grouped key read failed; reads made one by one");
                for job in by_merchant.into_values().flatten() {
                    let profile = job.profile;
                    let answer =
                        self.retrying(false, |conn| with_keys(conn, &vault, profile.clone()));
                    let _ = job.reply.send(answer);
                }
            }
        }
    }
}

impl Database {
    /// The merchant with its secrets as stored now; its row and access pairs may come from
    /// the merchant cache (unknown ids included).
    async fn merchant_read(&self, id: &MerchantId) -> Result<Option<Merchant>, StoreError> {
        let cache = &self.inner.merchants;
        if let Some(cached) = cache.get(id) {
            let Some(profile) = cached else {
                return Ok(None);
            };
            return self.with_keys_grouped(profile).await.map(Some);
        }
        let ticket = cache.ticket();
        let key = MerchantKey::Id(id.as_str().to_string());
        let vault = Arc::clone(&self.inner.vault);
        let (profile, found) = self
            .read(move |conn| match read_profile::<StoreError>(conn, &key)? {
                Some(profile) => {
                    let merchant = with_keys(conn, &vault, profile.clone())?;
                    Ok((Some(profile), Some(merchant)))
                }
                None => Ok((None, None)),
            })
            .await?;
        cache.put(id.clone(), ticket, profile);
        Ok(found)
    }
}

#[async_trait]
impl MerchantDirectory for Database {
    /// The merchant's row and access pairs are served from memory for up to the cache TTL (2 s
    /// by default), unknown ids included; with its secrets, for up to
    /// [`SECRETS_TTL`](crate::SECRETS_TTL) more, so a rotation made by any process applies
    /// from the next lookup after it returned.
    async fn merchant(&self, id: &MerchantId) -> Result<Option<Merchant>, StoreError> {
        let signing = &self.inner.signing;
        if let Some(merchant) = signing.get(id) {
            return Ok(Some(merchant));
        }
        // Taken before any read starts: the entry's time runs from before what it saw.
        let signing_ticket = signing.ticket();
        let found = self.merchant_read(id).await?;
        if let Some(merchant) = &found {
            signing.put(id.clone(), signing_ticket, merchant.clone());
        }
        Ok(found)
    }

    /// As [`MerchantDirectory::merchant`] for each, in one unit of work: the rows of the
    /// merchants not in memory, then the secrets of all of them with one query.
    async fn merchants(&self, ids: &[MerchantId]) -> Result<Vec<Merchant>, StoreError> {
        let cache = &self.inner.merchants;
        let (mut cached, mut missing) = (Vec::new(), Vec::new());
        let mut seen = HashSet::new();
        for id in ids.iter().filter(|id| seen.insert(*id)) {
            match cache.get(id) {
                Some(Some(profile)) => cached.push(profile),
                Some(None) => {}
                None => missing.push(id.clone()),
            }
        }
        if cached.is_empty() && missing.is_empty() {
            return Ok(Vec::new());
        }
        let ticket = cache.ticket();
        let vault = Arc::clone(&self.inner.vault);
        let (read, found) = self
            .read(move |conn| {
                let mut read = Vec::with_capacity(missing.len());
                for id in &missing {
                    let key = MerchantKey::Id(id.as_str().to_string());
                    read.push((id.clone(), read_profile::<StoreError>(conn, &key)?));
                }
                let profiles = cached
                    .iter()
                    .chain(read.iter().filter_map(|(_, profile)| profile.as_ref()))
                    .cloned()
                    .collect();
                Ok((read, with_keys_of(conn, &vault, profiles)?))
            })
            .await?;
        for (id, profile) in read {
            cache.put(id, ticket, profile);
        }
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
