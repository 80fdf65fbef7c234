//! The `operations` row.

use std::collections::BTreeMap;

use diesel::prelude::*;
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

fn url(column: &str, text: Option<String>) -> anyhow::Result<Option<HttpUrl>> {
    text.map(|t| parse(column, &t, HttpUrl::parse)).transpose()
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
    let user_data =
        UserData::parse(&entries).map_err(|e| bad("operations.user_data", format!("{:?}", e.0)))?;
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
        user_id: parse("operations.user_id", &row.user_id, UserId::parse)?,
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
            callback: url("operations.callback_url", row.callback_url)?,
            success: url("operations.success_url", row.success_url)?,
            fail: url("operations.fail_url", row.fail_url)?,
            processing: url("operations.processing_url", row.processing_url)?,
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
