//! The `merchants`, `merchant_methods` and `routes` rows.

use std::collections::BTreeSet;

use diesel::prelude::*;
use domain::merchant::{Merchant, Secret};
use domain::route::{Flow, Route};

use super::{flag, parse};
use crate::schema::{merchants, routes};

#[derive(Queryable, Selectable)]
#[diesel(table_name = merchants)]
pub(crate) struct MerchantRow {
    pub(crate) id: String,
    name: String,
    deposit_secret: String,
    withdrawal_secret: String,
    enabled: i16,
}

#[derive(Insertable)]
#[diesel(table_name = merchants)]
pub(crate) struct NewMerchantRow<'a> {
    pub(crate) id: &'a str,
    pub(crate) name: &'a str,
    pub(crate) deposit_secret: &'a str,
    pub(crate) withdrawal_secret: &'a str,
    pub(crate) enabled: i16,
    pub(crate) created_at: i64,
}

/// A merchant from its row and its `(direction, method)` rows.
pub(crate) fn merchant_from_rows(
    row: MerchantRow,
    methods: &[(String, String)],
) -> anyhow::Result<Merchant> {
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
    Ok(Merchant {
        id: super::merchant_id("merchants.id", &row.id)?,
        name: row.name,
        deposit_secret: Secret::new(row.deposit_secret),
        withdrawal_secret: Secret::new(row.withdrawal_secret),
        access,
        enabled: flag("merchants.enabled", row.enabled)?,
    })
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
