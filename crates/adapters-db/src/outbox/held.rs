//! Held callbacks: a claimed callback whose merchant is disabled waits in state `held`, its
//! attempts, failures and due time as they were, until the merchant is enabled again.
//!
//! The hold and the enable are ordered on the merchant's row. On PostgreSQL the hold reads
//! `enabled` under `FOR SHARE` and writes in the same transaction; the enable updates the row
//! (which waits for that share lock, and which a later hold waits for) and releases the
//! merchant's held callbacks in its own transaction. Either the hold commits first and the
//! enable's release, a later statement, sees the held row; or the enable commits first and
//! the hold reads the merchant enabled and holds nothing. On SQLite writes are serialised.
//! The worker's sweep ([`release_enabled`]) is a safety net on top of that.

use diesel::dsl::{exists, sql};
use diesel::prelude::*;
use diesel::sql_types::Bool;
use domain::ports::{HoldOutcome, StoreError};
use domain::Timestamp;

use crate::conn::DbConn;
use crate::schema::{callback_outbox, merchants};
use crate::work::{corrupt, TxError};

/// The backend of a [`DbConn`], either database.
type Backend = <DbConn as Connection>::Backend;

/// Held rows, as a literal: the planner then uses the partial index `callback_outbox_held`
/// (a bound parameter would hide the state from PostgreSQL's generic plans).
const HELD: &str = "state = 'held'";

/// Puts the pending callback `key`, leased by `owner`, on hold at `at`, if its merchant is
/// still disabled as read here (on PostgreSQL under `FOR SHARE`, see the module docs).
pub(super) fn hold(
    conn: &mut DbConn,
    key: &str,
    merchant: &str,
    owner: &str,
    at: Timestamp,
) -> Result<HoldOutcome, TxError<StoreError>> {
    let query = merchants::table.find(merchant).select(merchants::enabled);
    let enabled: Option<i16> = match conn {
        DbConn::Pg(pg) => query.for_share().first(pg).optional()?,
        DbConn::Sqlite(_) => query.first(conn).optional()?,
    };
    match enabled {
        None => {
            return Err(corrupt(anyhow::anyhow!(
                "callback {key} names merchant {merchant}, which is not stored"
            )))
        }
        Some(0) => {}
        Some(_) => return Ok(HoldOutcome::MerchantEnabled),
    }
    let changed = diesel::update(
        callback_outbox::table
            .filter(callback_outbox::id.eq(key))
            .filter(callback_outbox::lease_owner.eq(owner))
            .filter(callback_outbox::state.eq("pending")),
    )
    .set((
        callback_outbox::state.eq("held"),
        callback_outbox::lease_owner.eq(None::<String>),
        callback_outbox::lease_until.eq(None::<i64>),
        callback_outbox::updated_at.eq(at.millis()),
    ))
    .execute(conn)?;
    Ok(if changed == 1 {
        HoldOutcome::Held
    } else {
        HoldOutcome::NotLeased
    })
}

/// Whether any callback is held (an index probe of the empty `callback_outbox_held`, usually).
pub(super) fn any_held(conn: &mut DbConn) -> Result<bool, TxError<StoreError>> {
    Ok(
        diesel::select(exists(callback_outbox::table.filter(sql::<Bool>(HELD))))
            .get_result(conn)?,
    )
}

/// Every held callback whose merchant is enabled back to pending at `at`, due times kept.
pub(super) fn release_enabled(
    conn: &mut DbConn,
    at: Timestamp,
) -> Result<u64, TxError<StoreError>> {
    let enabled = merchants::table
        .filter(merchants::enabled.eq(1_i16))
        .select(merchants::id);
    release(
        conn,
        Box::new(callback_outbox::merchant_id.eq_any(enabled)),
        at,
    )
}

/// Merchant `merchant`'s held callbacks back to pending at `at`, due times kept, inside the
/// caller's transaction (the enable's, after its update of the merchant's row).
pub(crate) fn release_merchant<E>(
    conn: &mut DbConn,
    merchant: &str,
    at: Timestamp,
) -> Result<u64, TxError<E>> {
    release(
        conn,
        Box::new(callback_outbox::merchant_id.eq(merchant)),
        at,
    )
}

/// A condition on a callback's row (which merchants' callbacks to release).
type Whose<'a> = Box<dyn BoxableExpression<callback_outbox::table, Backend, SqlType = Bool> + 'a>;

/// The held callbacks `whose` picks back to pending at `at`, due times kept.
fn release<E>(conn: &mut DbConn, whose: Whose<'_>, at: Timestamp) -> Result<u64, TxError<E>> {
    let released = diesel::update(
        callback_outbox::table
            .filter(sql::<Bool>(HELD))
            .filter(whose),
    )
    .set((
        callback_outbox::state.eq("pending"),
        callback_outbox::updated_at.eq(at.millis()),
    ))
    .execute(conn)?;
    Ok(u64::try_from(released).unwrap_or(0))
}
