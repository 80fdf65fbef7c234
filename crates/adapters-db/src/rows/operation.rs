//! The `operations` row.

use std::collections::BTreeMap;

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::AstPass;
use diesel::sql_types::{BigInt, Nullable, SmallInt, Text};
use domain::operation::{Action, Decline, DeclineCode, Operation, OperationUrls};
use domain::signature::Fingerprint;
use domain::{Amount, HttpUrl, MerchantOperationId, Timestamp, UserData, UserId};

use super::{bad, parse};
use crate::schema::operations;

/// An operation as written; `None` is written as NULL (one statement shape, cached once).
#[derive(Insertable)]
#[diesel(table_name = operations, treat_none_as_default_value = false)]
pub(crate) struct NewOperationRow<'a> {
    id: String,
    merchant_id: &'a str,
    direction: &'static str,
    method: &'static str,
    status: i16,
    amount: i64,
    currency: &'a str,
    user_id: &'a str,
    merchant_operation_id: Option<&'a str>,
    callback_url: Option<&'a str>,
    success_url: Option<&'a str>,
    fail_url: Option<&'a str>,
    processing_url: Option<&'a str>,
    requisites: Option<String>,
    user_data: Option<String>,
    action: Option<String>,
    error_code: Option<&'static str>,
    error_message: Option<&'a str>,
    route_id: i64,
    expires_at: Option<i64>,
    provider_state: Option<String>,
    due_at: Option<i64>,
    created_at: i64,
    updated_at: i64,
    fingerprint: Option<&'a str>,
}

fn json(value: &impl serde::Serialize) -> anyhow::Result<String> {
    Ok(serde_json::to_string(value)?)
}

/// The JSON text an action is stored as (also what `replace_action` compares).
pub(crate) fn action_json(action: &Action) -> anyhow::Result<String> {
    json(action)
}

impl<'a> NewOperationRow<'a> {
    pub(crate) fn new(
        op: &'a Operation,
        fingerprint: Option<&'a Fingerprint>,
    ) -> anyhow::Result<Self> {
        let entries = op.user_data.entries();
        Ok(Self {
            id: op.id.to_string(),
            merchant_id: op.merchant_id.as_str(),
            direction: op.direction.as_str(),
            method: op.method.as_str(),
            status: op.status.code(),
            amount: op.amount.minor(),
            currency: op.currency.as_str(),
            user_id: op.user_id.as_str(),
            merchant_operation_id: op.merchant_operation_id.as_ref().map(|m| m.as_str()),
            callback_url: op.urls.callback.as_ref().map(HttpUrl::as_str),
            success_url: op.urls.success.as_ref().map(HttpUrl::as_str),
            fail_url: op.urls.fail.as_ref().map(HttpUrl::as_str),
            processing_url: op.urls.processing.as_ref().map(HttpUrl::as_str),
            requisites: op.requisites.as_ref().map(json).transpose()?,
            user_data: (!entries.is_empty()).then(|| json(&entries)).transpose()?,
            action: op.action.as_ref().map(action_json).transpose()?,
            error_code: op.decline.as_ref().map(|d| d.code.as_str()),
            error_message: op.decline.as_ref().map(|d| d.message.as_str()),
            route_id: op.route_id,
            expires_at: op.expires_at.map(Timestamp::millis),
            provider_state: op.provider_state.as_ref().map(json).transpose()?,
            due_at: op.due_at.map(Timestamp::millis),
            created_at: op.created_at.millis(),
            updated_at: op.updated_at.millis(),
            fingerprint: fingerprint.map(Fingerprint::as_str),
        })
    }
}

impl<'a> NewOperationRow<'a> {
    /// The columns [`NewOperationRow::push_values`] writes, in its order.
    pub(crate) const COLUMNS: &'static str = "id, merchant_id, direction, method, status, amount, \
        currency, user_id, merchant_operation_id, callback_url, success_url, fail_url, \
        processing_url, requisites, user_data, action, error_code, error_message, route_id, \
        expires_at, provider_state, due_at, created_at, updated_at, fingerprint";

    /// The row's values as bind parameters, comma-separated, in [`NewOperationRow::COLUMNS`]
    /// order (for hand-written PostgreSQL statements).
    pub(crate) fn push_values<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_bind_param::<Text, _>(&self.id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&self.merchant_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&self.direction)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&self.method)?;
        out.push_sql(", ");
        out.push_bind_param::<SmallInt, _>(&self.status)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.amount)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&self.currency)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&self.user_id)?;
        for text in [
            &self.merchant_operation_id,
            &self.callback_url,
            &self.success_url,
            &self.fail_url,
            &self.processing_url,
        ] {
            out.push_sql(", ");
            out.push_bind_param::<Nullable<Text>, _>(text)?;
        }
        for json in [&self.requisites, &self.user_data, &self.action] {
            out.push_sql(", ");
            out.push_bind_param::<Nullable<Text>, _>(json)?;
        }
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&self.error_code)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&self.error_message)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.route_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<BigInt>, _>(&self.expires_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&self.provider_state)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<BigInt>, _>(&self.due_at)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.created_at)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.updated_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&self.fingerprint)?;
        Ok(())
    }
}

/// Many new operations as one PostgreSQL statement: one array parameter per column, unnested
/// into rows. The text never changes with the number of rows, so it is prepared once per
/// connection. Rows whose id or merchantOperationId is taken are skipped (`ON CONFLICT DO
/// NOTHING`); the statement returns the ids it inserted.
pub(crate) struct InsertMany<'a> {
    id: Vec<&'a str>,
    merchant_id: Vec<&'a str>,
    direction: Vec<&'static str>,
    method: Vec<&'static str>,
    status: Vec<i16>,
    amount: Vec<i64>,
    currency: Vec<&'a str>,
    user_id: Vec<&'a str>,
    merchant_operation_id: Vec<Option<&'a str>>,
    callback_url: Vec<Option<&'a str>>,
    success_url: Vec<Option<&'a str>>,
    fail_url: Vec<Option<&'a str>>,
    processing_url: Vec<Option<&'a str>>,
    requisites: Vec<Option<&'a str>>,
    user_data: Vec<Option<&'a str>>,
    action: Vec<Option<&'a str>>,
    error_code: Vec<Option<&'static str>>,
    error_message: Vec<Option<&'a str>>,
    route_id: Vec<i64>,
    expires_at: Vec<Option<i64>>,
    provider_state: Vec<Option<&'a str>>,
    due_at: Vec<Option<i64>>,
    created_at: Vec<i64>,
    updated_at: Vec<i64>,
    fingerprint: Vec<Option<&'a str>>,
}

impl<'a> InsertMany<'a> {
    pub(crate) fn new(rows: &'a [NewOperationRow<'a>]) -> Self {
        Self {
            id: rows.iter().map(|r| r.id.as_str()).collect(),
            merchant_id: rows.iter().map(|r| r.merchant_id).collect(),
            direction: rows.iter().map(|r| r.direction).collect(),
            method: rows.iter().map(|r| r.method).collect(),
            status: rows.iter().map(|r| r.status).collect(),
            amount: rows.iter().map(|r| r.amount).collect(),
            currency: rows.iter().map(|r| r.currency).collect(),
            user_id: rows.iter().map(|r| r.user_id).collect(),
            merchant_operation_id: rows.iter().map(|r| r.merchant_operation_id).collect(),
            callback_url: rows.iter().map(|r| r.callback_url).collect(),
            success_url: rows.iter().map(|r| r.success_url).collect(),
            fail_url: rows.iter().map(|r| r.fail_url).collect(),
            processing_url: rows.iter().map(|r| r.processing_url).collect(),
            requisites: rows.iter().map(|r| r.requisites.as_deref()).collect(),
            user_data: rows.iter().map(|r| r.user_data.as_deref()).collect(),
            action: rows.iter().map(|r| r.action.as_deref()).collect(),
            error_code: rows.iter().map(|r| r.error_code).collect(),
            error_message: rows.iter().map(|r| r.error_message).collect(),
            route_id: rows.iter().map(|r| r.route_id).collect(),
            expires_at: rows.iter().map(|r| r.expires_at).collect(),
            provider_state: rows.iter().map(|r| r.provider_state.as_deref()).collect(),
            due_at: rows.iter().map(|r| r.due_at).collect(),
            created_at: rows.iter().map(|r| r.created_at).collect(),
            updated_at: rows.iter().map(|r| r.updated_at).collect(),
            fingerprint: rows.iter().map(|r| r.fingerprint).collect(),
        }
    }
}

/// The statement's text is the same for any number of rows.
pub(crate) struct InsertManyId;

impl diesel::query_builder::QueryId for InsertMany<'_> {
    type QueryId = InsertManyId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl InsertMany<'_> {
    /// The column arrays as bind parameters, comma-separated, in [`NewOperationRow::COLUMNS`]
    /// order.
    fn push_arrays<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        use diesel::sql_types::Array;
        out.push_bind_param::<Array<Text>, _>(&self.id)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.merchant_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.direction)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.method)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<SmallInt>, _>(&self.status)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<BigInt>, _>(&self.amount)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.currency)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.user_id)?;
        for texts in [
            &self.merchant_operation_id,
            &self.callback_url,
            &self.success_url,
            &self.fail_url,
            &self.processing_url,
            &self.requisites,
            &self.user_data,
            &self.action,
        ] {
            out.push_sql(", ");
            out.push_bind_param::<Array<Nullable<Text>>, _>(texts)?;
        }
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.error_code)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.error_message)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<BigInt>, _>(&self.route_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<BigInt>>, _>(&self.expires_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.provider_state)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<BigInt>>, _>(&self.due_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<BigInt>, _>(&self.created_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<BigInt>, _>(&self.updated_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.fingerprint)?;
        Ok(())
    }
}

impl diesel::query_builder::QueryFragment<Pg> for InsertMany<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("INSERT INTO operations (");
        out.push_sql(NewOperationRow::COLUMNS);
        out.push_sql(") SELECT * FROM unnest(");
        self.push_arrays(out.reborrow())?;
        out.push_sql(") ON CONFLICT DO NOTHING RETURNING id");
        Ok(())
    }
}

/// Many payouts with their holds as one PostgreSQL statement: for each merchant and currency
/// the batch's holds are summed and taken with one conditional update (the balance rows are
/// locked in key order first); the operations and ledger entries of the merchants whose
/// update found the money are inserted. Returns the ids written; a merchant that was short
/// for the whole batch writes nothing, and its rows are retried one by one. A taken
/// merchantOperationId fails the whole statement (no `ON CONFLICT` here: a hold must not be
/// taken for a row that is not written).
///
/// Each move must belong to its row's operation, merchant and currency.
pub(crate) struct HoldMany<'a> {
    ops: InsertMany<'a>,
    kind: Vec<&'static str>,
    available: Vec<i64>,
    held: Vec<i64>,
    at: Vec<i64>,
}

impl<'a> HoldMany<'a> {
    pub(crate) fn new(
        rows: &'a [NewOperationRow<'a>],
        moves: &[&domain::ledger::BalanceMove],
    ) -> Self {
        Self {
            ops: InsertMany::new(rows),
            kind: moves.iter().map(|m| m.kind.as_str()).collect(),
            available: moves.iter().map(|m| m.available).collect(),
            held: moves.iter().map(|m| m.held).collect(),
            at: moves.iter().map(|m| m.at.millis()).collect(),
        }
    }
}

/// [`NewOperationRow::COLUMNS`] of the `req` rows in [`HoldMany`].
const REQ_COLUMNS: &str = "r.id, r.merchant_id, r.direction, r.method, r.status, r.amount, \
    r.currency, r.user_id, r.merchant_operation_id, r.callback_url, r.success_url, r.fail_url, \
    r.processing_url, r.requisites, r.user_data, r.action, r.error_code, r.error_message, \
    r.route_id, r.expires_at, r.provider_state, r.due_at, r.created_at, r.updated_at, \
    r.fingerprint";

/// The statement's text is the same for any number of rows.
pub(crate) struct HoldManyId;

impl diesel::query_builder::QueryId for HoldMany<'_> {
    type QueryId = HoldManyId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl diesel::query_builder::QueryFragment<Pg> for HoldMany<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        use diesel::sql_types::Array;
        out.push_sql("WITH req AS (SELECT * FROM unnest(");
        self.ops.push_arrays(out.reborrow())?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.kind)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<BigInt>, _>(&self.available)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<BigInt>, _>(&self.held)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<BigInt>, _>(&self.at)?;
        out.push_sql(") AS r (");
        out.push_sql(NewOperationRow::COLUMNS);
        out.push_sql(
            ", kind, da, dh, at)), \
             need AS (SELECT merchant_id, currency, CAST(sum(da) AS BIGINT) AS da, \
                 CAST(sum(dh) AS BIGINT) AS dh FROM req GROUP BY merchant_id, currency), \
             locked AS (SELECT b.merchant_id FROM balances b JOIN need n \
                 ON b.merchant_id = n.merchant_id AND b.currency = n.currency \
                 ORDER BY b.merchant_id, b.currency FOR UPDATE OF b), \
             hold AS (UPDATE balances b SET available = b.available + n.da, \
                 held = b.held + n.dh FROM need n \
                 WHERE b.merchant_id = n.merchant_id AND b.currency = n.currency \
                 AND b.available + n.da >= 0 AND b.held + n.dh >= 0 \
                 AND (SELECT count(*) FROM locked) >= 0 \
                 RETURNING b.merchant_id, b.currency), \
             op AS (INSERT INTO operations (",
        );
        out.push_sql(NewOperationRow::COLUMNS);
        out.push_sql(") SELECT ");
        out.push_sql(REQ_COLUMNS);
        out.push_sql(
            " FROM req r JOIN hold h ON h.merchant_id = r.merchant_id AND h.currency = r.currency \
             RETURNING id) \
             INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, \
                 operation_id, created_at) \
             SELECT r.merchant_id, r.currency, r.kind, r.da, r.dh, r.id, r.at \
             FROM req r JOIN op ON op.id = r.id RETURNING operation_id",
        );
        Ok(())
    }
}

impl diesel::query_builder::Query for HoldMany<'_> {
    type SqlType = Nullable<Text>;
}

impl RunQueryDsl<diesel::pg::PgConnection> for HoldMany<'_> {}

impl diesel::query_builder::Query for InsertMany<'_> {
    type SqlType = Text;
}

impl RunQueryDsl<diesel::pg::PgConnection> for InsertMany<'_> {}

/// An operation as read.
#[derive(Queryable, Selectable)]
#[diesel(table_name = operations)]
pub(crate) struct OperationRow {
    id: String,
    merchant_id: String,
    direction: String,
    method: String,
    status: i16,
    amount: i64,
    currency: String,
    user_id: String,
    merchant_operation_id: Option<String>,
    callback_url: Option<String>,
    success_url: Option<String>,
    fail_url: Option<String>,
    processing_url: Option<String>,
    requisites: Option<String>,
    user_data: Option<String>,
    action: Option<String>,
    error_code: Option<String>,
    error_message: Option<String>,
    route_id: i64,
    expires_at: Option<i64>,
    provider_state: Option<String>,
    due_at: Option<i64>,
    created_at: i64,
    updated_at: i64,
    fingerprint: Option<String>,
}

/// A stored URL, as it was accepted (the rules of the day apply to requests, not to rows).
fn url(text: Option<String>) -> Option<HttpUrl> {
    text.map(HttpUrl::from_stored)
}

fn from_json<T: serde::de::DeserializeOwned>(
    column: &str,
    text: Option<String>,
) -> anyhow::Result<Option<T>> {
    text.map(|t| serde_json::from_str(&t).map_err(|e| bad(column, e)))
        .transpose()
}

/// The domain operation and its stored fingerprint.
pub(crate) fn operation_from_row(
    row: OperationRow,
) -> anyhow::Result<(Operation, Option<Fingerprint>)> {
    let direction = super::direction("operations.direction", &row.direction)?;
    let entries: BTreeMap<String, String> =
        from_json("operations.user_data", row.user_data)?.unwrap_or_default();
    let user_data = UserData::from_stored(&entries)
        .map_err(|e| bad("operations.user_data", format!("{:?}", e.0)))?;
    let decline = match (row.error_code, row.error_message) {
        (None, None) => None,
        (Some(code), Some(message)) => Some(Decline {
            code: DeclineCode::parse(&code)
                .ok_or_else(|| bad("operations.error_code", format!("{code:?}: unknown code")))?,
            message,
        }),
        _ => {
            return Err(bad(
                "operations.error_code",
                "error code and message must come together",
            ))
        }
    };
    let operation = Operation {
        id: super::operation_id("operations.id", &row.id)?,
        merchant_id: super::merchant_id("operations.merchant_id", &row.merchant_id)?,
        direction,
        method: super::method("operations.method", direction, &row.method)?,
        status: super::status("operations.status", row.status)?,
        amount: Amount::from_minor(row.amount)
            .map_err(|e| bad("operations.amount", format!("{}: {e}", row.amount)))?,
        currency: super::currency("operations.currency", &row.currency)?,
        user_id: UserId::from_stored(row.user_id),
        merchant_operation_id: row
            .merchant_operation_id
            .map(|m| {
                parse(
                    "operations.merchant_operation_id",
                    &m,
                    MerchantOperationId::parse,
                )
            })
            .transpose()?,
        urls: OperationUrls {
            callback: url(row.callback_url),
            success: url(row.success_url),
            fail: url(row.fail_url),
            processing: url(row.processing_url),
        },
        requisites: from_json("operations.requisites", row.requisites)?,
        user_data,
        action: from_json("operations.action", row.action)?,
        decline,
        route_id: row.route_id,
        expires_at: row.expires_at.map(Timestamp::from_millis),
        provider_state: from_json("operations.provider_state", row.provider_state)?,
        due_at: row.due_at.map(Timestamp::from_millis),
        created_at: Timestamp::from_millis(row.created_at),
        updated_at: Timestamp::from_millis(row.updated_at),
    };
    Ok((operation, row.fingerprint.map(Fingerprint::from_stored)))
}
