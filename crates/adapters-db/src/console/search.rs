//! The operations search: every filter of the console, newest first (`created_at`, then `id`,
//! both descending), paged by a keyset cursor, never an offset.
//!
//! Ids are stored as hyphenated lower-case UUIDs, so comparing their texts orders them as
//! `OperationId`s are ordered (the UUID's bytes, most significant first): the cursor's id is
//! compared as text, in the same form. The indexes of the console's migration serve each
//! filter with this order.

use std::collections::HashMap;

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use domain::console::{Cursor, Listed, OperationFilter};
use domain::ports::StoreError;
use domain::{Direction, OperationId, Status};

use crate::conn::DbConn;
use crate::rows::{self, operation_from_row, OperationRow};
use crate::schema::{operations, refunds};
use crate::work::{decode_all, TxError};

type Backend = <DbConn as Connection>::Backend;
type Query<'a> = operations::BoxedQuery<'a, Backend>;

/// The filter's fields that name one value each.
fn exact_filters<'a>(mut query: Query<'a>, filter: &OperationFilter) -> Query<'a> {
    use crate::schema::operations::dsl as o;
    if let Some(direction) = filter.direction {
        query = query.filter(o::direction.eq(direction.as_str()));
    }
    if let Some(method) = filter.method {
        query = query.filter(o::method.eq(method.as_str()));
    }
    if let Some(status) = filter.status {
        query = query.filter(o::status.eq(rows::status_code(status)));
    }
    if let Some(merchant) = &filter.merchant {
        query = query.filter(o::merchant_id.eq(merchant.as_str().to_string()));
    }
    if let Some(provider) = &filter.provider {
        query = query.filter(o::provider.eq(provider.clone()));
    }
    query
}

/// The filter's creation range (half-open) and its exact search: an operation whose id or
/// merchantOperationId is the text. A text that is a UUID in any case or form is compared
/// with ids in their stored form.
fn range_and_search<'a>(mut query: Query<'a>, filter: &OperationFilter) -> Query<'a> {
    use crate::schema::operations::dsl as o;
    if let Some(from) = filter.created_from {
        query = query.filter(o::created_at.ge(from.millis()));
    }
    if let Some(to) = filter.created_to {
        query = query.filter(o::created_at.lt(to.millis()));
    }
    if let Some(text) = &filter.search {
        let as_id =
            OperationId::parse(text.trim()).map_or_else(|_| text.clone(), |id| id.to_string());
        query = query.filter(
            o::id
                .eq(as_id)
                .or(o::merchant_operation_id.eq(text.clone())),
        );
    }
    query
}

/// Rows after `cursor` in the order `created_at DESC, id DESC`. The redundant
/// `created_at <= c` bounds the index range the OR alone would not.
fn after<'a>(query: Query<'a>, cursor: &Cursor) -> Query<'a> {
    use crate::schema::operations::dsl as o;
    let (at, id) = (cursor.created_at.millis(), cursor.id.to_string());
    query.filter(o::created_at.le(at)).filter(
        o::created_at
            .lt(at)
            .or(o::created_at.eq(at).and(o::id.lt(id))),
    )
}

/// Up to `limit` operations matching `filter` after `cursor`, newest first, with how much of
/// each is refunded.
pub(super) fn search(
    conn: &mut DbConn,
    filter: &OperationFilter,
    cursor: Option<&Cursor>,
    limit: u32,
) -> Result<Vec<Listed>, TxError<StoreError>> {
    use crate::schema::operations::dsl as o;
    let mut query = range_and_search(exact_filters(o::operations.into_boxed(), filter), filter);
    if let Some(cursor) = cursor {
        query = after(query, cursor);
    }
    let found: Vec<OperationRow> = query
        .order((o::created_at.desc(), o::id.desc()))
        .limit(i64::from(limit))
        .select(OperationRow::as_select())
        .load(conn)?;
    let operations = decode_all(found, |row| operation_from_row(row).map(|(op, _)| op))?;
    let deposits: Vec<String> = operations
        .iter()
        .filter(|op| op.direction() == Direction::Deposit)
        .map(|op| op.id().to_string())
        .collect();
    let mut refunded = refunded(conn, &deposits)?;
    Ok(operations
        .into_iter()
        .map(|operation| Listed {
            refunded: refunded.remove(&operation.id().to_string()).unwrap_or(0),
            operation,
        })
        .collect())
}

/// How much of each of `deposits` is refunded, in one grouped query: the sum of its approved
/// refunds, as the API's `refundedAmount` (`domain::refund::refunded_minor`) counts it.
/// Deposits without one are absent.
fn refunded(
    conn: &mut DbConn,
    deposits: &[String],
) -> Result<HashMap<String, i64>, TxError<StoreError>> {
    if deposits.is_empty() {
        return Ok(HashMap::new());
    }
    let sums: Vec<(String, i64)> = refunds::table
        .filter(refunds::operation_id.eq_any(deposits))
        .filter(refunds::status.eq(rows::status_code(Status::Approved)))
        .group_by(refunds::operation_id)
        .select((
            refunds::operation_id,
            sql::<BigInt>("CAST(SUM(amount) AS BIGINT)"),
        ))
        .load(conn)?;
    Ok(sums.into_iter().collect())
}
