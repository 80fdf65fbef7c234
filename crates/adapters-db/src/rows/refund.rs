//! The `refunds` row.

use diesel::prelude::*;
use domain::refund::Refund;
use domain::signature::Fingerprint;
use domain::{Amount, HttpUrl, MerchantRefundId, Timestamp};

use super::{bad, parse};
use crate::schema::refunds;

/// A new refund as written: processing, not leased.
#[derive(Insertable)]
#[diesel(table_name = refunds, treat_none_as_default_value = false)]
pub(crate) struct NewRefundRow<'a> {
    id: String,
    operation_id: String,
    merchant_id: &'a str,
    merchant_refund_id: Option<&'a str>,
    fingerprint: Option<&'a str>,
    fingerprint_key: Option<i32>,
    amount: i64,
    currency: &'a str,
    status: i16,
    error_code: Option<&'static str>,
    error_message: Option<&'a str>,
    callback_url: Option<&'a str>,
    provider: &'a str,
    acquirer_id: Option<&'a str>,
    check_at: Option<i64>,
    unknown_since: Option<i64>,
    lease_owner: Option<&'a str>,
    lease_until: Option<i64>,
    created_at: i64,
    updated_at: i64,
    fee: i64,
    fee_terms: Option<String>,
}

impl<'a> NewRefundRow<'a> {
    pub(crate) fn new(refund: &'a Refund, fingerprint: Option<&'a Fingerprint>) -> Self {
        let decline = refund.decline();
        Self {
            id: refund.id.to_string(),
            operation_id: refund.operation_id.to_string(),
            merchant_id: refund.merchant_id.as_str(),
            merchant_refund_id: refund.merchant_refund_id.as_ref().map(|m| m.as_str()),
            fingerprint: fingerprint.map(Fingerprint::as_str),
            fingerprint_key: fingerprint.map(Fingerprint::key_version),
            amount: refund.amount.minor(),
            currency: refund.currency.as_str(),
            status: super::status_code(refund.status()),
            error_code: decline.map(|d| d.code.as_str()),
            error_message: decline.map(|d| d.message.as_str()),
            callback_url: refund.callback_url.as_ref().map(HttpUrl::as_str),
            provider: &refund.provider,
            acquirer_id: refund.acquirer_id.as_deref(),
            check_at: refund.check_at.map(Timestamp::millis),
            unknown_since: refund.unknown_since.map(Timestamp::millis),
            lease_owner: None,
            lease_until: None,
            created_at: refund.created_at.millis(),
            updated_at: refund.updated_at.millis(),
            fee: refund.fee.amount,
            fee_terms: refund.fee.terms.as_ref().map(super::fee_terms_text),
        }
    }
}

/// The columns [`RefundRow`] reads, for hand-written statements (`RETURNING`).
pub(crate) const REFUND_COLUMNS: &str = "id, operation_id, merchant_id, merchant_refund_id, \
     fingerprint, fingerprint_key, amount, currency, status, error_code, error_message, \
     callback_url, provider, acquirer_id, check_at, unknown_since, created_at, updated_at, fee, \
     fee_terms";

/// A refund as read (its lease is the store's business, not the domain's).
#[derive(Queryable, Selectable, QueryableByName)]
#[diesel(table_name = refunds)]
pub(crate) struct RefundRow {
    id: String,
    operation_id: String,
    merchant_id: String,
    merchant_refund_id: Option<String>,
    fingerprint: Option<String>,
    fingerprint_key: Option<i32>,
    amount: i64,
    currency: String,
    status: i16,
    error_code: Option<String>,
    error_message: Option<String>,
    callback_url: Option<String>,
    provider: String,
    acquirer_id: Option<String>,
    check_at: Option<i64>,
    unknown_since: Option<i64>,
    created_at: i64,
    updated_at: i64,
    fee: i64,
    fee_terms: Option<String>,
}

/// The domain refund and its stored fingerprint.
pub(crate) fn refund_from_row(row: RefundRow) -> anyhow::Result<(Refund, Option<Fingerprint>)> {
    let refund = Refund {
        id: super::refund_id("refunds.id", &row.id)?,
        operation_id: super::operation_id("refunds.operation_id", &row.operation_id)?,
        merchant_id: super::merchant_id("refunds.merchant_id", &row.merchant_id)?,
        merchant_refund_id: row
            .merchant_refund_id
            .map(|m| parse("refunds.merchant_refund_id", &m, MerchantRefundId::parse))
            .transpose()?,
        amount: Amount::from_minor(row.amount)
            .map_err(|e| bad("refunds.amount", format!("{}: {e}", row.amount)))?,
        currency: super::currency("refunds.currency", &row.currency)?,
        state: super::state("refunds", row.status, row.error_code, row.error_message)?,
        callback_url: super::operation::url(row.callback_url),
        provider: row.provider,
        acquirer_id: row.acquirer_id,
        check_at: row.check_at.map(Timestamp::from_millis),
        unknown_since: row.unknown_since.map(Timestamp::from_millis),
        created_at: Timestamp::from_millis(row.created_at),
        updated_at: Timestamp::from_millis(row.updated_at),
        fee: super::fee("refunds", row.fee, row.fee_terms.as_deref())?,
    };
    let fingerprint = super::fingerprint("refunds", row.fingerprint, row.fingerprint_key)?;
    Ok((refund, fingerprint))
}
