//! The audit log and the runs of the ledger check.

use diesel::prelude::*;
use domain::console::{Actor, AuditEntry, AuditRecord, LedgerCheck};
use domain::ports::StoreError;
use domain::Timestamp;

use crate::conn::DbConn;
use crate::schema::{audit_log, ledger_checks};
use crate::work::TxError;

/// An audit entry as stored.
#[derive(Queryable, Selectable)]
#[diesel(table_name = audit_log)]
struct AuditRow {
    id: i64,
    actor: String,
    action: String,
    target: String,
    before_value: Option<String>,
    after_value: Option<String>,
    at: i64,
}

impl AuditRow {
    fn into_record(self) -> AuditRecord {
        AuditRecord {
            id: self.id,
            entry: AuditEntry {
                actor: Actor::from_stored(&self.actor),
                action: self.action,
                target: self.target,
                before: self.before_value,
                after: self.after_value,
                at: Timestamp::from_millis(self.at),
            },
        }
    }
}

/// Appends `entry` to the audit log.
pub(super) fn audit(conn: &mut DbConn, entry: &AuditEntry) -> Result<(), TxError<StoreError>> {
    diesel::insert_into(audit_log::table)
        .values((
            audit_log::actor.eq(entry.actor.as_str()),
            audit_log::action.eq(&entry.action),
            audit_log::target.eq(&entry.target),
            audit_log::before_value.eq(&entry.before),
            audit_log::after_value.eq(&entry.after),
            audit_log::at.eq(entry.at.millis()),
        ))
        .execute(conn)?;
    Ok(())
}

/// Up to `limit` entries, newest (largest id) first, older than entry `before` if given.
pub(super) fn audit_log(
    conn: &mut DbConn,
    before: Option<i64>,
    limit: u32,
) -> Result<Vec<AuditRecord>, TxError<StoreError>> {
    let mut query = audit_log::table.into_boxed();
    if let Some(before) = before {
        query = query.filter(audit_log::id.lt(before));
    }
    let rows: Vec<AuditRow> = query
        .order(audit_log::id.desc())
        .limit(i64::from(limit))
        .select(AuditRow::as_select())
        .load(conn)?;
    Ok(rows.into_iter().map(AuditRow::into_record).collect())
}

/// Records a run of the ledger check.
pub(super) fn record_ledger_check(
    conn: &mut DbConn,
    check: &LedgerCheck,
) -> Result<(), TxError<StoreError>> {
    diesel::insert_into(ledger_checks::table)
        .values((
            ledger_checks::at.eq(check.at.millis()),
            ledger_checks::actor.eq(check.actor.as_str()),
            ledger_checks::mismatches.eq(check.mismatches),
        ))
        .execute(conn)?;
    Ok(())
}

/// The latest run of the ledger check (by its time, then as recorded), if there was one.
pub(super) fn last_ledger_check(
    conn: &mut DbConn,
) -> Result<Option<LedgerCheck>, TxError<StoreError>> {
    let found: Option<(i64, String, i64)> = ledger_checks::table
        .order((ledger_checks::at.desc(), ledger_checks::id.desc()))
        .select((
            ledger_checks::at,
            ledger_checks::actor,
            ledger_checks::mismatches,
        ))
        .first(conn)
        .optional()?;
    Ok(found.map(|(at, actor, mismatches)| LedgerCheck {
        at: Timestamp::from_millis(at),
        actor: Actor::from_stored(&actor),
        mismatches,
    }))
}
