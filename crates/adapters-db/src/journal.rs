//! What the operator console reads about each change, written in the change's own
//! transaction: the operation's events (`operation_events`) and the overview's per-minute
//! counters (`operation_counts`). Callback attempts are not repeated as events: the timeline
//! reads them from `callback_attempts`, written in the record's own statement.
//!
//! Units of work made of several statements call [`write_events`] and [`bump`]; PostgreSQL's
//! one-statement writers (`store::single`, the batches of `store::batched`, the
//! saved attempts of `store::attempts`) write them as parts of their statement, with the
//! texts and helpers here.
//!
//! Lock order: counters are written last in every unit of work, after its balance moves, and
//! in key order ([`bump`], and `ORDER BY` in the batch statements). Every writer then takes
//! operation rows, then balance rows, then counter rows, so concurrent writers never wait on
//! each other in a cycle. Each unit of work adds to one counter slot: on PostgreSQL its
//! connection's ([`PG_SLOT`]), so concurrent ones do not wait on one counter; on SQLite,
//! where one writer runs at a time, one of eight drawn at random.

use std::collections::BTreeMap;

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{BigInt, Nullable, SmallInt, Text};
use domain::attempt::{Attempt, Discrepancy};
use domain::console::EventDetail;
use domain::discrepancy::Resolution;
use domain::dispute::{Dispute, EvidenceState};
use domain::operation::Operation;
use domain::ports::{NewOperation, StoreError};
use domain::refund::Refund;
use domain::{OperationId, RefundId, Status, Timestamp};

use crate::binds::Binds;
use crate::conn::{DbConn, PG_SLOT};
use crate::work::TxError;

/// How many counter slots SQLite's writers draw from (`operation_counts.slot` 0 to 7 there).
const SQLITE_SLOTS: u8 = 8;

/// The minute since the epoch that `millis` falls in, floored (as the console counts).
pub(crate) fn minute_of(millis: i64) -> i64 {
    millis.div_euclid(60_000)
}

/// SQLite: the counter slot of one unit of work, drawn at random (one writer at a time there,
/// so none waits on another's counters whatever the slot).
fn sqlite_slot() -> i16 {
    i16::from(uuid::Uuid::new_v4().as_bytes()[0] % SQLITE_SLOTS)
}

/// The text an event's detail is stored as: its JSON.
pub(crate) fn detail_text(detail: &EventDetail) -> anyhow::Result<String> {
    Ok(serde_json::to_string(detail)?)
}

/// The detail of an operation stored with the status `code` (1, 2 or 3).
pub(crate) fn created_text(code: i16) -> anyhow::Result<String> {
    let status = u8::try_from(code).map_err(|_| anyhow::anyhow!("status {code} out of range"))?;
    detail_text(&EventDetail::Created { status })
}

/// One event about to be written.
#[derive(Debug, Clone)]
pub(crate) struct NewEvent {
    operation_id: String,
    refund_id: Option<String>,
    at: i64,
    detail: String,
}

impl NewEvent {
    fn new(
        operation_id: OperationId,
        refund_id: Option<RefundId>,
        at: Timestamp,
        detail: &EventDetail,
    ) -> anyhow::Result<NewEvent> {
        Ok(NewEvent {
            operation_id: operation_id.to_string(),
            refund_id: refund_id.map(|r| r.to_string()),
            at: at.millis(),
            detail: detail_text(detail)?,
        })
    }

    /// `op` was stored with its status, at its creation.
    pub(crate) fn created(op: &Operation) -> anyhow::Result<NewEvent> {
        let detail = EventDetail::Created {
            status: op.status().number(),
        };
        NewEvent::new(op.id(), None, op.created_at(), &detail)
    }

    /// `op` went from `from` to its status (or to its waiting step, `action`), at its
    /// `updated_at`.
    pub(crate) fn status(
        op: &Operation,
        from: Status,
        action: Option<String>,
    ) -> anyhow::Result<NewEvent> {
        let detail = EventDetail::Status {
            from: from.number(),
            to: op.status().number(),
            error_code: op.decline().map(|d| d.code.as_str().to_string()),
            action,
        };
        NewEvent::new(op.id(), None, op.updated_at(), &detail)
    }

    /// A processing operation's waiting step changed to one of `kind` at `at`.
    pub(crate) fn step(
        id: OperationId,
        kind: Option<&str>,
        at: Timestamp,
    ) -> anyhow::Result<NewEvent> {
        let processing = Status::Processing.number();
        let detail = EventDetail::Status {
            from: processing,
            to: processing,
            error_code: None,
            action: kind.map(str::to_string),
        };
        NewEvent::new(id, None, at, &detail)
    }

    /// `attempt` was recorded, or its state changed to the one it has, at its `updated_at`.
    pub(crate) fn attempt(attempt: &Attempt) -> anyhow::Result<NewEvent> {
        let detail = EventDetail::Attempt {
            number: attempt.number,
            provider: attempt.provider.clone(),
            state: attempt.state.as_str().to_string(),
        };
        NewEvent::new(attempt.operation_id, None, attempt.updated_at, &detail)
    }

    /// `refund` was stored, or became final, at `at`: an event of its deposit.
    pub(crate) fn refund(refund: &Refund, at: Timestamp) -> anyhow::Result<NewEvent> {
        let detail = EventDetail::Refund {
            refund_id: refund.id.to_string(),
            status: refund.status().number(),
            amount: refund.amount.minor(),
        };
        NewEvent::new(refund.operation_id, Some(refund.id), at, &detail)
    }

    /// `dispute` was opened or changed to what it is now (its evidence to `evidence`, when
    /// that changed), at `at`: an event of its deposit.
    pub(crate) fn dispute(
        dispute: &Dispute,
        evidence: Option<EvidenceState>,
        at: Timestamp,
    ) -> anyhow::Result<NewEvent> {
        let detail = EventDetail::Dispute {
            dispute_id: dispute.id.to_string(),
            dispute_kind: dispute.kind.as_str().to_string(),
            status: dispute.status.as_str().to_string(),
            amount: dispute.amount.minor(),
            evidence: evidence.map(|e| e.as_str().to_string()),
        };
        NewEvent::new(dispute.operation_id, None, at, &detail)
    }

    /// A provider reported what `discrepancy` says.
    pub(crate) fn discrepancy(discrepancy: &Discrepancy) -> anyhow::Result<NewEvent> {
        let detail = EventDetail::Discrepancy {
            provider: discrepancy.provider.clone(),
            note: format!("reported {}", discrepancy.reported),
        };
        NewEvent::new(discrepancy.operation_id, None, discrepancy.at, &detail)
    }

    /// Discrepancy `id` of `operation` was resolved as `resolution` says.
    pub(crate) fn discrepancy_resolved(
        operation: OperationId,
        id: i64,
        resolution: &Resolution,
    ) -> anyhow::Result<NewEvent> {
        let detail = EventDetail::DiscrepancyResolved {
            discrepancy: id,
            actor: resolution.actor.as_str().to_string(),
            note: resolution.note.as_str().to_string(),
            ledger_entry: resolution.ledger_entry,
        };
        NewEvent::new(operation, None, resolution.at, &detail)
    }

    /// The operation's id, for statements that bind the event themselves.
    pub(crate) fn operation_id(&self) -> &str {
        &self.operation_id
    }

    /// When it happened (milliseconds), for statements that bind the event themselves.
    pub(crate) fn at(&self) -> &i64 {
        &self.at
    }

    /// The stored detail, for statements that bind the event themselves.
    pub(crate) fn detail(&self) -> &str {
        &self.detail
    }
}

/// The events of a new operation: its creation, then each of its first attempts.
pub(crate) fn created_events(new: &NewOperation) -> anyhow::Result<Vec<NewEvent>> {
    std::iter::once(NewEvent::created(&new.operation))
        .chain(new.attempts.iter().map(NewEvent::attempt))
        .collect()
}

type Backend = <DbConn as Connection>::Backend;

/// A row of a multi-row insert: its values as bind parameters, comma-separated.
trait Values {
    fn push<'b>(&'b self, out: &mut AstPass<'_, 'b, Backend>) -> QueryResult<()>;
}

/// `head`, then `rows` as `(...), (...)`, then `tail`. Its text depends only on the number of
/// rows, so each backend prepares it once per connection and row count (diesel caches it by
/// its text, which it does not do for `sql_query`).
struct InsertRows<'a, R> {
    head: &'static str,
    rows: &'a [R],
    tail: &'static str,
}

impl<R> QueryId for InsertRows<'_, R> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<R: Values> QueryFragment<Backend> for InsertRows<'_, R> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Backend>) -> QueryResult<()> {
        out.push_sql(self.head);
        for (i, row) in self.rows.iter().enumerate() {
            out.push_sql(if i == 0 { "(" } else { ", (" });
            row.push(&mut out)?;
            out.push_sql(")");
        }
        out.push_sql(self.tail);
        Ok(())
    }
}

impl<R> RunQueryDsl<DbConn> for InsertRows<'_, R> {}

impl Values for NewEvent {
    fn push<'b>(&'b self, out: &mut AstPass<'_, 'b, Backend>) -> QueryResult<()> {
        Binds::new(out)
            .bind::<Text, _>(&self.operation_id)?
            .bind::<Nullable<Text>, _>(&self.refund_id)?
            .bind::<BigInt, _>(&self.at)?
            .bind::<Text, _>(&self.detail)?;
        Ok(())
    }
}

/// Writes `events`, in order, inside the caller's transaction (one statement).
pub(crate) fn write_events<E: From<StoreError>>(
    conn: &mut DbConn,
    events: &[NewEvent],
) -> Result<(), TxError<E>> {
    if events.is_empty() {
        return Ok(());
    }
    InsertRows {
        head: "INSERT INTO operation_events (operation_id, refund_id, at, detail) VALUES ",
        rows: events,
        tail: "",
    }
    .execute(conn)?;
    Ok(())
}

/// A counter: operations created in `minute` that now have this direction, method, status
/// and currency. Ordered as the counters are locked.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct CountKey {
    minute: i64,
    direction: &'static str,
    method: &'static str,
    status: i16,
    currency: String,
}

impl CountKey {
    fn of(op: &Operation, status: Status) -> CountKey {
        CountKey {
            minute: minute_of(op.created_at().millis()),
            direction: op.direction().as_str(),
            method: op.method().as_str(),
            status: crate::rows::status_code(status),
            currency: op.currency().as_str().to_string(),
        }
    }
}

/// What one change adds to its counters: (counter, count, amount).
pub(crate) type Counts = Vec<(CountKey, i64, i64)>;

/// A new operation: one more at its status.
pub(crate) fn created(op: &Operation) -> Counts {
    vec![(CountKey::of(op, op.status()), 1, op.amount().minor())]
}

/// A status change of `op` from `from`: one less there, one more at its status now, both in
/// the minute it was created.
pub(crate) fn changed(op: &Operation, from: Status) -> Counts {
    let amount = op.amount().minor();
    vec![
        (CountKey::of(op, from), -1, -amount),
        (CountKey::of(op, op.status()), 1, amount),
    ]
}

/// PostgreSQL and SQLite alike: what makes an `INSERT INTO operation_counts` add to the
/// counters that exist.
pub(crate) const ADD_TO_COUNTS: &str =
    " ON CONFLICT (minute, direction, method, status, currency, slot) \
     DO UPDATE SET count = operation_counts.count + excluded.count, \
     amount = operation_counts.amount + excluded.amount";

/// The columns of `operation_counts`, in the order the statements here write them.
pub(crate) const COUNT_COLUMNS: &str =
    "minute, direction, method, status, currency, slot, count, amount";

/// One counter's addition, on the slot of its unit of work: drawn on SQLite (`Some`), the
/// connection's on PostgreSQL ([`PG_SLOT`], `None`).
struct Addition {
    key: CountKey,
    slot: Option<i16>,
    count: i64,
    amount: i64,
}

impl Values for Addition {
    fn push<'b>(&'b self, out: &mut AstPass<'_, 'b, Backend>) -> QueryResult<()> {
        let key = &self.key;
        let mut binds = Binds::new(out);
        binds
            .bind::<BigInt, _>(&key.minute)?
            .bind::<Text, _>(&key.direction)?
            .bind::<Text, _>(&key.method)?
            .bind::<SmallInt, _>(&key.status)?
            .bind::<Text, _>(&key.currency)?;
        match &self.slot {
            Some(slot) => binds.bind::<SmallInt, _>(slot)?,
            None => binds.sql(PG_SLOT),
        };
        binds
            .bind::<BigInt, _>(&self.count)?
            .bind::<BigInt, _>(&self.amount)?;
        Ok(())
    }
}

/// Adds `counts` to their counters inside the caller's transaction, in one statement, on
/// the unit of work's slot (the connection's on PostgreSQL, drawn on SQLite), counters in
/// key order. Call it after the unit of work's balance
/// moves (see the module docs).
pub(crate) fn bump<E: From<StoreError>>(
    conn: &mut DbConn,
    counts: Counts,
) -> Result<(), TxError<E>> {
    let mut merged: BTreeMap<CountKey, (i64, i64)> = BTreeMap::new();
    for (key, count, amount) in counts {
        let sum = merged.entry(key).or_insert((0, 0));
        sum.0 += count;
        sum.1 += amount;
    }
    merged.retain(|_, sum| *sum != (0, 0));
    if merged.is_empty() {
        return Ok(());
    }
    let slot = match conn {
        DbConn::Pg(_) => None,
        DbConn::Sqlite(_) => Some(sqlite_slot()),
    };
    let additions: Vec<Addition> = merged
        .into_iter()
        .map(|(key, (count, amount))| Addition {
            key,
            slot,
            count,
            amount,
        })
        .collect();
    InsertRows {
        head: "INSERT INTO operation_counts (minute, direction, method, status, currency, \
               slot, count, amount) VALUES ",
        rows: &additions,
        tail: ADD_TO_COUNTS,
    }
    .execute(conn)?;
    Ok(())
}

/// PostgreSQL: the parts of a statement that writes many new operations which write their
/// `created` events and counters, after a CTE `req` (the requested rows, with `minute` and
/// `detail` columns beside the operation's) and a CTE `op` (the ids inserted), on the
/// connection's counter slot ([`PG_SLOT`]).
pub(crate) fn push_created(out: &mut AstPass<'_, '_, Pg>) {
    out.push_sql(
        ", ev AS (INSERT INTO operation_events (operation_id, at, detail) \
             SELECT r.id, r.created_at, r.detail FROM req r JOIN op ON op.id = r.id), \
         cnt AS (INSERT INTO operation_counts (",
    );
    out.push_sql(COUNT_COLUMNS);
    out.push_sql(") SELECT r.minute, r.direction, r.method, r.status, r.currency, ");
    out.push_sql(PG_SLOT);
    out.push_sql(
        ", COUNT(*), CAST(SUM(r.amount) AS BIGINT) FROM req r JOIN op ON op.id = r.id \
         GROUP BY r.minute, r.direction, r.method, r.status, r.currency \
         ORDER BY r.minute, r.direction COLLATE \"C\", r.method COLLATE \"C\", r.status, \
             r.currency COLLATE \"C\"",
    );
    out.push_sql(ADD_TO_COUNTS);
    out.push_sql(")");
}
