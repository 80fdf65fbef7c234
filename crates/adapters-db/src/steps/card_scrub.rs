//! The `card_scrub` data step (migration `2026-12-03-000000_card_scrub`): the user data of
//! every stored operation and the requisites of every stored deposit get the rules new
//! requests get ([`sanitize_user_data`], [`sanitize_requisites`]): card numbers inside their
//! keys and strings masked, card security codes dropped. Payout requisites are structured
//! (their card number was masked when stored): only the names in them are free text, and get
//! their card numbers masked ([`sanitize_payout_requisites`]); the phone stays as it is.
//!
//! A batch rewrites only the rows the rules change, each with an update guarded by the text
//! it read; masked text no longer holds a card number, so doing a batch again changes
//! nothing.
//!
//! On SQLite the step runs with `secure_delete` on, and once the last batch is done, if any
//! row was changed, it rewrites the database files (a `TRUNCATE` checkpoint, `VACUUM`, a
//! checkpoint again) so that no earlier copy of a cleaned value is left in free space or in
//! the WAL. Should that fail (another process keeps the files busy), the step stays pending
//! and the next `migrate` tries again. On PostgreSQL, old row versions stay in the table's
//! files until vacuumed and reused, and in the write-ahead log until it is recycled (see
//! docs/operations.md).

use std::collections::BTreeMap;

use anyhow::Context;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use domain::ports::StoreError;
use domain::{sanitize_payout_requisites, sanitize_requisites, sanitize_user_data, KeptObject};

use super::{advance, finish, progress};
use crate::conn::DbConn;
use crate::database::Database;
use crate::rows::bad;
use crate::schema::operations;
use crate::secrets::{checkpoint, secure_delete};
use crate::work::{corrupt, retry, write_tx, TxError};

/// The step's name in `data_steps`.
pub(crate) const STEP: &str = "card_scrub";

/// Operations read per batch (and transaction).
const BATCH: i64 = 500;

/// What one batch did.
struct Batch {
    changed: i64,
    /// It read the last rows: the step has been through the whole table.
    last: bool,
}

/// Does the step from where it stands; marks it done unless the SQLite files could not be
/// rewritten.
pub(crate) fn run(db: &Database, conn: &mut DbConn) -> anyhow::Result<()> {
    tracing::info!(step = STEP, "removing card data from stored operations");
    let restore = match conn {
        DbConn::Sqlite(lite) => Some(secure_delete(lite, true)?),
        DbConn::Pg(_) => None,
    };
    let scrubbed = scrub(db, conn);
    if let (DbConn::Sqlite(lite), Some(before)) = (&mut *conn, restore) {
        if let Err(error) = lite.batch_execute(&format!("PRAGMA secure_delete = {before}")) {
            tracing::warn!(%error, "cannot restore PRAGMA secure_delete");
        }
    }
    let changed = scrubbed?;
    tracing::info!(
        step = STEP,
        rows.changed = changed,
        "card data removed from stored operations"
    );
    if let DbConn::Sqlite(lite) = conn {
        if changed > 0 {
            let _writer = db.sqlite_writer();
            if let Err(error) = rewrite_files(lite) {
                tracing::warn!(
                    step = STEP,
                    error = format!("{error:#}"),
                    "the SQLite files may still hold earlier copies of the cleaned values; \
                     the next start tries again (stop the other processes on this database)"
                );
                return Ok(());
            }
        }
    }
    finish(conn, STEP).context("cannot mark the card scrub done")?;
    Ok(())
}

/// Goes through every remaining batch; how many rows the step has changed in all its runs.
fn scrub(db: &Database, conn: &mut DbConn) -> anyhow::Result<i64> {
    loop {
        let batch = {
            let _writer = db.sqlite_writer();
            retry(|| write_tx(&mut *conn, scrub_batch))?
        };
        if batch.last {
            let (_, changed) = retry(|| progress(&mut *conn, STEP))?;
            return Ok(changed);
        }
        tracing::debug!(step = STEP, rows.changed = batch.changed, "batch done");
    }
}

/// One operation's stored free-form data: id, whether it is a deposit, user data, requisites.
/// (The direction is read as a comparison: its column's type differs between versions of the
/// schema, and a PostgreSQL connection's prepared statement must keep its result type.)
type Stored = (String, bool, Option<String>, Option<String>);

/// Cleans the next batch of operations after the step's progress, in the caller's transaction.
fn scrub_batch(conn: &mut DbConn) -> Result<Batch, TxError<StoreError>> {
    let (after, _) = progress(conn, STEP)?;
    let mut query = operations::table
        .select((
            operations::id,
            operations::direction.eq("deposit"),
            operations::user_data,
            operations::requisites,
        ))
        .filter(
            operations::user_data
                .is_not_null()
                .or(operations::requisites.is_not_null()),
        )
        .order(operations::id)
        .limit(BATCH)
        .into_boxed();
    if let Some(after) = after {
        query = query.filter(operations::id.gt(after));
    }
    let rows: Vec<Stored> = query.load(conn)?;
    let mut changed = 0;
    for (id, deposit, user_data, requisites) in &rows {
        let clean_user_data = user_data
            .as_deref()
            .map(clean_user_data)
            .transpose()
            .map_err(corrupt)?
            .flatten();
        let clean_requisites = match requisites {
            Some(text) => clean_requisites(text, *deposit).map_err(corrupt)?,
            None => None,
        };
        if let (Some(old), Some(new)) = (user_data, &clean_user_data) {
            let written = diesel::update(
                operations::table
                    .find(id)
                    .filter(operations::user_data.eq(old)),
            )
            .set(operations::user_data.eq(new.as_deref()))
            .execute(conn)?;
            guarded(written)?;
        }
        if let (Some(old), Some(new)) = (requisites, &clean_requisites) {
            let written = diesel::update(
                operations::table
                    .find(id)
                    .filter(operations::requisites.eq(old)),
            )
            .set(operations::requisites.eq(new))
            .execute(conn)?;
            guarded(written)?;
        }
        if clean_user_data.is_some() || clean_requisites.is_some() {
            changed += 1;
        }
    }
    if let Some((last, ..)) = rows.last() {
        advance(conn, STEP, last, changed)?;
    }
    Ok(Batch {
        changed,
        last: rows.len() < BATCH as usize,
    })
}

/// A guarded update must find its row as it was read.
fn guarded(written: usize) -> Result<(), TxError<StoreError>> {
    if written == 1 {
        Ok(())
    } else {
        Err(TxError::Retry("an operation changed during the card scrub"))
    }
}

/// The user data text to store instead of `text` (`Some(None)`: none at all), or `None` when
/// it holds no card data.
fn clean_user_data(text: &str) -> anyhow::Result<Option<Option<String>>> {
    let entries: BTreeMap<String, String> =
        serde_json::from_str(text).map_err(|e| bad("operations.user_data", e))?;
    let clean = sanitize_user_data(&entries);
    if clean == entries {
        return Ok(None);
    }
    let text = (!clean.is_empty())
        .then(|| serde_json::to_string(&clean))
        .transpose()?;
    Ok(Some(text))
}

/// The requisites text to store instead of a deposit's or a payout's `text`, or `None` when
/// it holds no card data.
fn clean_requisites(text: &str, deposit: bool) -> anyhow::Result<Option<String>> {
    let kept: KeptObject =
        serde_json::from_str(text).map_err(|e| bad("operations.requisites", e))?;
    let clean = if deposit {
        sanitize_requisites(&kept)
    } else {
        sanitize_payout_requisites(&kept)
    };
    if clean == kept {
        return Ok(None);
    }
    Ok(Some(serde_json::to_string(&clean)?))
}

/// Leaves no copy of a replaced value in the SQLite files: the WAL emptied, the database
/// rebuilt without free space, the WAL emptied again. Outside any transaction.
fn rewrite_files(lite: &mut SqliteConnection) -> anyhow::Result<()> {
    checkpoint(lite)?;
    lite.batch_execute("VACUUM").context("VACUUM failed")?;
    checkpoint(lite)
}
