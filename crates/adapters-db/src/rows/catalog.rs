//! The `merchants`, `merchant_keys`, `merchant_methods` and `routes` rows.

use std::collections::BTreeSet;

use diesel::prelude::*;
use domain::merchant::{KeyRing, Merchant, Secret, SigningKey};
use domain::route::{Flow, Route};
use domain::{Direction, MerchantId, PaymentMethod, Timestamp};

use super::{bad, flag, parse};
use crate::crypto::{Place, Vault};
use crate::schema::{merchant_keys, merchants, routes};

#[derive(Queryable, Selectable)]
#[diesel(table_name = merchants)]
pub(crate) struct MerchantRow {
    pub(crate) id: String,
    name: String,
    enabled: i16,
    require_timestamp: i16,
    require_signature_v2: i16,
}

#[derive(Insertable)]
#[diesel(table_name = merchants)]
pub(crate) struct NewMerchantRow<'a> {
    pub(crate) id: &'a str,
    pub(crate) name: &'a str,
    pub(crate) enabled: i16,
    pub(crate) require_timestamp: i16,
    pub(crate) require_signature_v2: i16,
    pub(crate) created_at: i64,
}

/// A merchant without its secrets: what the directory keeps in memory.
#[derive(Debug, Clone)]
pub(crate) struct MerchantProfile {
    id: MerchantId,
    name: String,
    access: BTreeSet<(Direction, PaymentMethod)>,
    enabled: bool,
    require_timestamp: bool,
    require_signature_v2: bool,
}

impl MerchantProfile {
    pub(crate) fn id(&self) -> &MerchantId {
        &self.id
    }
}

/// A merchant's profile from its row and its `(direction, method)` rows.
pub(crate) fn profile_from_rows(
    row: MerchantRow,
    methods: &[(String, String)],
) -> anyhow::Result<MerchantProfile> {
    let access = methods
        .iter()
        .map(|(d, m)| {
            let direction = super::direction("merchant_methods.direction", d)?;
            Ok((
                direction,
                super::method("merchant_methods.method", direction, m)?,
            ))
        })
        .collect::<anyhow::Result<BTreeSet<_>>>()?;
    Ok(MerchantProfile {
        id: super::merchant_id("merchants.id", &row.id)?,
        name: row.name,
        access,
        enabled: flag("merchants.enabled", row.enabled)?,
        require_timestamp: flag("merchants.require_timestamp", row.require_timestamp)?,
        require_signature_v2: flag("merchants.require_signature_v2", row.require_signature_v2)?,
    })
}

/// One stored secret of a merchant direction.
#[derive(Queryable, Selectable)]
#[diesel(table_name = merchant_keys)]
pub(crate) struct KeyRow {
    pub(crate) merchant_id: String,
    direction: String,
    version: i32,
    secret: String,
    created_at: i64,
    expires_at: Option<i64>,
}

#[derive(Insertable)]
#[diesel(table_name = merchant_keys, treat_none_as_default_value = false)]
pub(crate) struct NewKeyRow<'a> {
    merchant_id: &'a str,
    direction: &'static str,
    version: i32,
    secret: String,
    created_at: i64,
    expires_at: Option<i64>,
}

impl<'a> NewKeyRow<'a> {
    /// The row of `key`, its secret as `vault` stores it.
    pub(crate) fn new(
        vault: &Vault,
        merchant: &'a MerchantId,
        direction: Direction,
        key: &SigningKey,
    ) -> anyhow::Result<Self> {
        let place = Place::MerchantKey {
            merchant: merchant.as_str(),
            direction: direction.as_str(),
            version: key.version,
        };
        Ok(Self {
            merchant_id: merchant.as_str(),
            direction: direction.as_str(),
            version: key.version,
            secret: vault.store(&place, key.secret.expose())?,
            created_at: key.created_at.millis(),
            expires_at: key.expires_at.map(Timestamp::millis),
        })
    }
}

/// The secrets of one merchant's directions, as read from its key rows (in any order).
#[derive(Default)]
pub(crate) struct KeyRows {
    deposit: Vec<SigningKey>,
    withdrawal: Vec<SigningKey>,
}

impl KeyRows {
    /// Adds `row`, its secret opened with `vault`.
    pub(crate) fn push(&mut self, vault: &Vault, row: KeyRow) -> anyhow::Result<()> {
        let direction = super::direction("merchant_keys.direction", &row.direction)?;
        let place = Place::MerchantKey {
            merchant: &row.merchant_id,
            direction: direction.as_str(),
            version: row.version,
        };
        let key = SigningKey {
            version: row.version,
            secret: Secret::new(vault.read(&place, &row.secret)?),
            created_at: Timestamp::from_millis(row.created_at),
            expires_at: row.expires_at.map(Timestamp::from_millis),
        };
        match direction {
            Direction::Deposit => self.deposit.push(key),
            Direction::Withdrawal => self.withdrawal.push(key),
        }
        Ok(())
    }

    /// The ring of `direction`.
    pub(crate) fn ring(self, direction: Direction) -> anyhow::Result<KeyRing> {
        match direction {
            Direction::Deposit => ring(direction, self.deposit),
            Direction::Withdrawal => ring(direction, self.withdrawal),
        }
    }

    /// The merchant of `profile`, with the rings of both directions.
    pub(crate) fn merchant(self, profile: MerchantProfile) -> anyhow::Result<Merchant> {
        Ok(Merchant {
            id: profile.id,
            name: profile.name,
            deposit_keys: ring(Direction::Deposit, self.deposit)?,
            withdrawal_keys: ring(Direction::Withdrawal, self.withdrawal)?,
            access: profile.access,
            enabled: profile.enabled,
            require_timestamp: profile.require_timestamp,
            require_signature_v2: profile.require_signature_v2,
        })
    }
}

/// A direction's ring: one without secrets, or with a version twice, is corrupt.
fn ring(direction: Direction, keys: Vec<SigningKey>) -> anyhow::Result<KeyRing> {
    KeyRing::new(keys).map_err(|e| bad("merchant_keys", format!("{direction}: {e}")))
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = routes)]
pub(crate) struct RouteRow {
    id: i64,
    direction: String,
    method: String,
    currency: String,
    min_amount: i64,
    max_amount: i64,
    priority: i32,
    provider: String,
    flow: String,
    lifetime_secs: Option<i64>,
    enabled: i16,
}

#[derive(Insertable)]
#[diesel(table_name = routes, treat_none_as_default_value = false)]
pub(crate) struct NewRouteRow<'a> {
    pub(crate) direction: &'static str,
    pub(crate) method: &'static str,
    pub(crate) currency: &'a str,
    pub(crate) min_amount: i64,
    pub(crate) max_amount: i64,
    pub(crate) priority: i32,
    pub(crate) provider: &'a str,
    pub(crate) flow: &'static str,
    pub(crate) lifetime_secs: Option<i64>,
    pub(crate) enabled: i16,
}

pub(crate) fn route_from_row(row: RouteRow) -> anyhow::Result<Route> {
    let direction = super::direction("routes.direction", &row.direction)?;
    Ok(Route {
        id: row.id,
        direction,
        method: super::method("routes.method", direction, &row.method)?,
        currency: super::currency("routes.currency", &row.currency)?,
        min_amount: row.min_amount,
        max_amount: row.max_amount,
        priority: row.priority,
        provider: row.provider,
        flow: parse("routes.flow", &row.flow, Flow::parse)?,
        lifetime_secs: row.lifetime_secs,
        enabled: flag("routes.enabled", row.enabled)?,
    })
}
