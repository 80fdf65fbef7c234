//! Recorded discrepancies as the operator reads and resolves them (`OperatorStore`'s
//! discrepancy methods). A resolution is written once, guarded by `resolved_at IS NULL`, with
//! its event on the operation's timeline in the same transaction. One code path on both
//! backends, except where PostgreSQL returns the rows it updated.

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use domain::console::Actor;
use domain::discrepancy::{RecordedDiscrepancy, Resolution, ResolutionNote, Resolved};
use domain::ports::StoreError;
use domain::{OperationId, Timestamp};

use crate::conn::DbConn;
use crate::database::Database;
use crate::journal::{write_events, NewEvent};
use crate::rows;
use crate::schema::provider_discrepancies;
use crate::work::{corrupt, decode_all, TxError};

/// Open discrepancies, as a literal so the planner uses `provider_discrepancies_open`.
const OPEN: &str = "resolved_at IS NULL";

/// A discrepancy as stored.
#[derive(Queryable, Selectable)]
#[diesel(table_name = provider_discrepancies)]
struct DiscrepancyRow {
    id: i64,
    operation_id: String,
    provider: String,
    reported: String,
    at: i64,
    resolved_at: Option<i64>,
    resolved_by: Option<String>,
    resolution_note: Option<String>,
    resolution_entry: Option<i64>,
}

impl DiscrepancyRow {
    fn into_discrepancy(self) -> anyhow::Result<RecordedDiscrepancy> {
        let resolution = match (self.resolved_at, self.resolved_by, self.resolution_note) {
            (None, None, None) => None,
            (Some(at), Some(by), Some(note)) => Some(Resolution {
                at: Timestamp::from_millis(at),
                actor: Actor::from_stored(&by),
                note: ResolutionNote::from_stored(&note),
                ledger_entry: self.resolution_entry,
            }),
            _ => {
                return Err(rows::bad(
                    "provider_discrepancies.resolved_at",
                    "a partial resolution",
                ))
            }
        };
        Ok(RecordedDiscrepancy {
            id: self.id,
            operation_id: rows::operation_id(
                "provider_discrepancies.operation_id",
                &self.operation_id,
            )?,
            provider: self.provider,
            reported: self.reported,
            at: Timestamp::from_millis(self.at),
            resolution,
        })
    }
}

fn decode(found: Vec<DiscrepancyRow>) -> Result<Vec<RecordedDiscrepancy>, TxError<StoreError>> {
    decode_all(found, DiscrepancyRow::into_discrepancy)
}

/// The event an operation's timeline shows for `resolution` of discrepancy `id`.
fn resolved_event(
    operation: OperationId,
    id: i64,
    resolution: &Resolution,
) -> anyhow::Result<NewEvent> {
    NewEvent::discrepancy_resolved(operation, id, resolution)
}

/// Resolves discrepancy `id` unless it is resolved already, inside the caller's transaction.
fn resolve_one(
    conn: &mut DbConn,
    id: i64,
    resolution: &Resolution,
) -> Result<Resolved, TxError<StoreError>> {
    use crate::schema::provider_discrepancies::dsl as d;
    let changed = diesel::update(d::provider_discrepancies.find(id).filter(sql::<Bool>(OPEN)))
        .set((
            d::resolved_at.eq(Some(resolution.at.millis())),
            d::resolved_by.eq(Some(resolution.actor.as_str())),
            d::resolution_note.eq(Some(resolution.note.as_str())),
            d::resolution_entry.eq(resolution.ledger_entry),
        ))
        .execute(conn)?;
    let found: Option<DiscrepancyRow> = d::provider_discrepancies
        .find(id)
        .select(DiscrepancyRow::as_select())
        .first(conn)
        .optional()?;
    let Some(found) = found else {
        return Ok(Resolved::NotFound);
    };
    let found = found.into_discrepancy().map_err(corrupt)?;
    if changed == 0 {
        return Ok(Resolved::Already(found));
    }
    let event = resolved_event(found.operation_id, id, resolution).map_err(corrupt)?;
    write_events(conn, std::slice::from_ref(&event))?;
    Ok(Resolved::Now(found))
}

/// Resolves every open discrepancy of `operation` with `resolution` (a manual entry's), with
/// their events, inside the caller's transaction; their ids, ascending.
pub(crate) fn resolve_open_of<E: From<StoreError>>(
    conn: &mut DbConn,
    operation: OperationId,
    resolution: &Resolution,
) -> Result<Vec<i64>, TxError<E>> {
    use crate::schema::provider_discrepancies::dsl as d;
    let open = d::provider_discrepancies
        .filter(d::operation_id.eq(operation.to_string()))
        .filter(sql::<Bool>(OPEN));
    let values = (
        d::resolved_at.eq(Some(resolution.at.millis())),
        d::resolved_by.eq(Some(resolution.actor.as_str())),
        d::resolution_note.eq(Some(resolution.note.as_str())),
        d::resolution_entry.eq(resolution.ledger_entry),
    );
    let mut ids: Vec<i64> = match conn {
        // The rows this statement resolved, not those another resolved meanwhile.
        DbConn::Pg(pg) => diesel::update(open)
            .set(values)
            .returning(d::id)
            .get_results(pg)?,
        // One writer at a time: what is open now is what the update resolves.
        DbConn::Sqlite(_) => {
            let ids: Vec<i64> = open.select(d::id).load(conn)?;
            diesel::update(d::provider_discrepancies.filter(d::id.eq_any(&ids)))
                .set(values)
                .execute(conn)?;
            ids
        }
    };
    ids.sort_unstable();
    let events = ids
        .iter()
        .map(|id| resolved_event(operation, *id, resolution))
        .collect::<anyhow::Result<Vec<_>>>()
        .map_err(|e| corrupt::<E>(e))?;
    write_events(conn, &events)?;
    Ok(ids)
}

impl Database {
    /// See [`OperatorStore::discrepancies`](domain::ports::OperatorStore::discrepancies).
    pub(crate) async fn read_discrepancies(
        &self,
        open_only: bool,
        limit: u32,
    ) -> Result<Vec<RecordedDiscrepancy>, StoreError> {
        self.read(move |conn| {
            let mut query = provider_discrepancies::table.into_boxed();
            if open_only {
                query = query.filter(sql::<Bool>(OPEN));
            }
            let found: Vec<DiscrepancyRow> = query
                .order(provider_discrepancies::id.desc())
                .limit(i64::from(limit))
                .select(DiscrepancyRow::as_select())
                .load(conn)?;
            decode(found)
        })
        .await
    }

    /// See [`OperatorStore::operation_discrepancies`](domain::ports::OperatorStore::operation_discrepancies).
    pub(crate) async fn read_operation_discrepancies(
        &self,
        id: OperationId,
    ) -> Result<Vec<RecordedDiscrepancy>, StoreError> {
        self.read(move |conn| {
            let found: Vec<DiscrepancyRow> = provider_discrepancies::table
                .filter(provider_discrepancies::operation_id.eq(id.to_string()))
                .order(provider_discrepancies::id.asc())
                .select(DiscrepancyRow::as_select())
                .load(conn)?;
            decode(found)
        })
        .await
    }

    /// See [`OperatorStore::resolve_discrepancy`](domain::ports::OperatorStore::resolve_discrepancy).
    pub(crate) async fn write_resolution(
        &self,
        id: i64,
        resolution: &Resolution,
    ) -> Result<Resolved, StoreError> {
        let resolution = resolution.clone();
        self.write(move |conn| resolve_one(conn, id, &resolution))
            .await
    }
}
