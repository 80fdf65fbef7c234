//! Process reports: the [`ProcessRegistry`] port. Each serving process writes its row and its
//! circuits every few seconds; operators read the processes seen lately.

use async_trait::async_trait;
use diesel::prelude::*;
use domain::ports::{ProcessRegistry, ProcessReport, StoreError};
use domain::Timestamp;

use crate::conn::DbConn;
use crate::database::Database;
use crate::rows::{grouped, CircuitRow, ProcessRow};
use crate::schema::{gateway_processes, process_circuits};
use crate::work::{decode_all, TxError};

/// A process not seen for this long is deleted, with its circuits, by the next report.
const FORGET_AFTER_MILLIS: i64 = 60 * 60 * 1000;

/// Writes the process row (inserted or updated), replaces its circuit rows and forgets the
/// processes not seen for [`FORGET_AFTER_MILLIS`] before this report.
fn write_report<E: From<StoreError>>(
    conn: &mut DbConn,
    report: &ProcessReport,
) -> Result<(), TxError<E>> {
    let row = ProcessRow::new(report);
    // Only the process itself writes its row, so update-or-insert cannot race on the key.
    let updated = diesel::update(gateway_processes::table.find(&row.id))
        .set((
            gateway_processes::version.eq(&row.version),
            gateway_processes::started_at.eq(row.started_at),
            gateway_processes::seen_at.eq(row.seen_at),
        ))
        .execute(conn)?;
    if updated == 0 {
        diesel::insert_into(gateway_processes::table)
            .values(&row)
            .execute(conn)?;
    }
    diesel::delete(process_circuits::table.filter(process_circuits::process_id.eq(&row.id)))
        .execute(conn)?;
    for circuit in &report.circuits {
        diesel::insert_into(process_circuits::table)
            .values(CircuitRow::new(&row.id, circuit))
            .execute(conn)?;
    }
    forget_before(conn, report.seen_at.plus_millis(-FORGET_AFTER_MILLIS))
}

/// Deletes the processes last seen before `before`, and their circuits.
fn forget_before<E: From<StoreError>>(
    conn: &mut DbConn,
    before: Timestamp,
) -> Result<(), TxError<E>> {
    let stale = gateway_processes::seen_at.lt(before.millis());
    let stale_ids: Vec<String> = gateway_processes::table
        .filter(stale)
        .select(gateway_processes::id)
        .load(conn)?;
    if stale_ids.is_empty() {
        return Ok(());
    }
    diesel::delete(process_circuits::table.filter(process_circuits::process_id.eq_any(&stale_ids)))
        .execute(conn)?;
    let forgotten =
        diesel::delete(gateway_processes::table.filter(gateway_processes::id.eq_any(&stale_ids)))
            .execute(conn)?;
    tracing::debug!(forgotten, "forgot processes that stopped reporting");
    Ok(())
}

/// The processes seen at or after `since`, by id, each with its circuits by provider.
fn read_processes<E: From<StoreError>>(
    conn: &mut DbConn,
    since: Timestamp,
) -> Result<Vec<ProcessReport>, TxError<E>> {
    let rows: Vec<ProcessRow> = gateway_processes::table
        .filter(gateway_processes::seen_at.ge(since.millis()))
        .order(gateway_processes::id.asc())
        .select(ProcessRow::as_select())
        .load(conn)?;
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
    // A report replaces its circuits in one transaction: this sees the old set or the new.
    let circuits: Vec<CircuitRow> = process_circuits::table
        .filter(process_circuits::process_id.eq_any(&ids))
        .select(CircuitRow::as_select())
        .load(conn)?;
    let mut by_process = grouped(circuits, |circuit| circuit.process_id.clone());
    decode_all(rows, |row| {
        let circuits = by_process.remove(&row.id).unwrap_or_default();
        row.into_report(circuits)
    })
}

impl Database {
    /// Deletes the process `id` and its circuits (a process stopping cleanly); `true` if it
    /// was there.
    pub async fn forget_process(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_string();
        self.write(move |conn| {
            diesel::delete(process_circuits::table.filter(process_circuits::process_id.eq(&id)))
                .execute(conn)?;
            let deleted = diesel::delete(gateway_processes::table.find(&id)).execute(conn)?;
            Ok::<_, TxError<StoreError>>(deleted == 1)
        })
        .await
    }
}

#[async_trait]
impl ProcessRegistry for Database {
    /// Upserts the process row, replaces its circuit rows and deletes the processes (and
    /// their circuits) not seen for an hour before `report.seen_at`, in one transaction.
    async fn report(&self, report: &ProcessReport) -> Result<(), StoreError> {
        let report = report.clone();
        self.write(move |conn| write_report::<StoreError>(conn, &report))
            .await
    }

    async fn processes(&self, since: Timestamp) -> Result<Vec<ProcessReport>, StoreError> {
        self.read(move |conn| read_processes::<StoreError>(conn, since))
            .await
    }
}
