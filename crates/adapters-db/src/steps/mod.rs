//! Data steps: work on stored rows that a migration cannot do in SQL, so it records the work
//! in `data_steps` and [`Database::migrate`] does it right after applying the migrations.
//!
//! A step goes through its rows in key order, in batches; each batch is one write
//! transaction (taken in turn with this process's other SQLite writers) that also records
//! the key of its last row and how many rows it changed, so a step cut short (a crash, a
//! lost connection) goes on from there. Once the last batch is done the step is marked done
//! and never runs again. Every step is idempotent: a row it already did reads as done.
//!
//! On PostgreSQL, `migrate` holds its advisory lock meanwhile, so of several gateways
//! starting at once one does the work and the others find it done.

mod card_scrub;

use anyhow::{bail, Context};
use diesel::prelude::*;
use domain::ports::StoreError;

use crate::conn::DbConn;
use crate::database::Database;
use crate::schema::data_steps;
use crate::work::TxError;

/// Does every pending data step, in name order.
pub(crate) fn run_pending(db: &Database, conn: &mut DbConn) -> anyhow::Result<()> {
    let pending: Vec<String> = data_steps::table
        .filter(data_steps::done_at.is_null())
        .select(data_steps::name)
        .order(data_steps::name)
        .load(conn)
        .context("cannot read the pending data steps")?;
    for step in pending {
        match step.as_str() {
            card_scrub::STEP => card_scrub::run(db, conn),
            other => bail!(
                "the database has a data step this gateway does not know ({other}): a newer \
                 gateway has upgraded it; run that version (or a later one) in every process"
            ),
        }
        .with_context(|| format!("data step {step} failed"))?;
    }
    Ok(())
}

/// Where a step stands: the key of the last row it did, and how many rows it changed.
pub(crate) fn progress(
    conn: &mut DbConn,
    step: &str,
) -> Result<(Option<String>, i64), TxError<StoreError>> {
    Ok(data_steps::table
        .find(step)
        .select((data_steps::progress, data_steps::rows_changed))
        .first(conn)?)
}

/// Records that `step` did every row up to `last`, changing `changed` more of them.
pub(crate) fn advance(
    conn: &mut DbConn,
    step: &str,
    last: &str,
    changed: i64,
) -> Result<(), TxError<StoreError>> {
    diesel::update(data_steps::table.find(step))
        .set((
            data_steps::progress.eq(last),
            data_steps::rows_changed.eq(data_steps::rows_changed + changed),
        ))
        .execute(conn)?;
    Ok(())
}

/// Marks `step` done now.
pub(crate) fn finish(conn: &mut DbConn, step: &str) -> QueryResult<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    diesel::update(data_steps::table.find(step))
        .set(data_steps::done_at.eq(now))
        .execute(conn)?;
    Ok(())
}
