//! What the overview and an operation's page read: the operation's events, the per-minute
//! counters, the health figures, and the callbacks an operator may act on.

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, SmallInt, Text};
use domain::callback::CallbackAttempt;
use domain::console::{EventDetail, Health, MinuteCount, OperationEvent};
use domain::ports::{CallbackStatus, StoreError};
use domain::{OperationId, Timestamp};

use crate::conn::DbConn;
use crate::journal::minute_of;
use crate::outbox::{keys_of_operation, StatusRow};
use crate::rows::{self, bad};
use crate::schema::{callback_attempts, callback_outbox, operation_events};
use crate::story::DeliveryRow;
use crate::work::{corrupt, decode_all, TxError};

use super::audit::last_ledger_check;

/// An event as stored.
#[derive(Queryable, Selectable)]
#[diesel(table_name = operation_events)]
struct EventRow {
    id: i64,
    operation_id: String,
    refund_id: Option<String>,
    at: i64,
    detail: String,
}

impl EventRow {
    fn into_event(self) -> anyhow::Result<OperationEvent> {
        let detail: EventDetail = serde_json::from_str(&self.detail)
            .map_err(|e| bad("operation_events.detail", format!("{:?}: {e}", self.detail)))?;
        Ok(OperationEvent {
            id: self.id,
            operation_id: rows::operation_id("operation_events.operation_id", &self.operation_id)?,
            refund_id: self
                .refund_id
                .map(|r| rows::refund_id("operation_events.refund_id", &r))
                .transpose()?,
            at: Timestamp::from_millis(self.at),
            detail,
        })
    }
}

/// A logged callback attempt as a line of the timeline.
fn callback_event(attempt: CallbackAttempt) -> OperationEvent {
    OperationEvent {
        id: 0,
        operation_id: attempt.operation_id,
        refund_id: attempt.refund_id,
        at: attempt.at,
        detail: EventDetail::Callback {
            refund_id: attempt.refund_id.map(|r| r.to_string()),
            dispute_id: attempt.dispute.map(|d| d.dispute_id.to_string()),
            attempt: attempt.attempt,
            http_status: attempt.http_status,
            latency_ms: attempt.duration_ms,
            error: attempt.error,
        },
    }
}

/// The timeline of operation `id` and of its refunds: the events written with each change,
/// in the order they were written, and each callback attempt (from `callback_attempts`)
/// placed before the first of them that happened later. Each line's `id` is its place,
/// counted from one. Callback events written before attempts were read from their log are
/// left out: the log holds every attempt.
pub(super) fn events(
    conn: &mut DbConn,
    id: OperationId,
) -> Result<Vec<OperationEvent>, TxError<StoreError>> {
    let found: Vec<EventRow> = operation_events::table
        .filter(operation_events::operation_id.eq(id.to_string()))
        .order(operation_events::id.asc())
        .select(EventRow::as_select())
        .load(conn)?;
    let written = found
        .into_iter()
        .map(EventRow::into_event)
        .filter(|e| {
            !matches!(
                e,
                Ok(OperationEvent {
                    detail: EventDetail::Callback { .. },
                    ..
                })
            )
        })
        .collect::<anyhow::Result<Vec<_>>>()
        .map_err(corrupt)?;
    // A refund's callback is keyed by the refund's id, the operation's own by its id.
    let owners = keys_of_operation(conn, id)?;
    let keys: Vec<&str> = owners.iter().map(|o| o.key.as_str()).collect();
    let logged: Vec<DeliveryRow> = callback_attempts::table
        .filter(callback_attempts::callback_id.eq_any(&keys))
        .order((
            callback_attempts::at.asc(),
            callback_attempts::callback_id.asc(),
            callback_attempts::attempt.asc(),
        ))
        .select(DeliveryRow::as_select())
        .load(conn)?;
    let attempts = decode_all(logged, |row| {
        let owner = owners
            .iter()
            .find(|o| o.key == row.callback_id)
            .ok_or_else(|| bad("callback_attempts.callback_id", &row.callback_id))?;
        let (refund, dispute) = (owner.refund_id, owner.dispute);
        Ok(callback_event(row.into_attempt(id, refund, dispute)?))
    })?;
    Ok(merged(written, attempts))
}

/// `written` in its order, with each of `attempts` (in time order) placed before the first
/// written line that happened later; then every line numbered from 1.
fn merged(written: Vec<OperationEvent>, attempts: Vec<OperationEvent>) -> Vec<OperationEvent> {
    let mut timeline = Vec::with_capacity(written.len() + attempts.len());
    let mut attempts = attempts.into_iter().peekable();
    for event in written {
        while let Some(attempt) = attempts.next_if(|a| a.at < event.at) {
            timeline.push(attempt);
        }
        timeline.push(event);
    }
    timeline.extend(attempts);
    for (place, event) in timeline.iter_mut().enumerate() {
        event.id = i64::try_from(place).unwrap_or(i64::MAX - 1) + 1;
    }
    timeline
}

/// One counter summed over its slots.
#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = BigInt)]
    minute: i64,
    #[diesel(sql_type = Text)]
    direction: String,
    #[diesel(sql_type = Text)]
    method: String,
    #[diesel(sql_type = SmallInt)]
    status: i16,
    #[diesel(sql_type = Text)]
    currency: String,
    #[diesel(sql_type = BigInt)]
    count: i64,
    #[diesel(sql_type = BigInt)]
    amount: i64,
}

impl CountRow {
    fn into_count(self) -> anyhow::Result<MinuteCount> {
        let direction = rows::direction("operation_counts.direction", &self.direction)?;
        Ok(MinuteCount {
            minute: self.minute,
            direction,
            method: rows::method("operation_counts.method", direction, &self.method)?,
            status: rows::status("operation_counts.status", self.status)?,
            currency: rows::currency("operation_counts.currency", &self.currency)?,
            count: self.count,
            amount: self.amount,
        })
    }
}

/// The counters of minutes `[{p}1, {p}2)`, summed over their slots; counters that sum to no
/// operation are left out.
const MINUTE_COUNTS: &str = "\
SELECT minute, direction, method, status, currency,
       CAST(SUM(count) AS BIGINT) AS count, CAST(SUM(amount) AS BIGINT) AS amount
FROM operation_counts
WHERE minute >= {p}1 AND minute < {p}2
GROUP BY minute, direction, method, status, currency
HAVING SUM(count) <> 0
ORDER BY minute, direction, method, status, currency";

/// `sql` with `{p}` replaced by the placeholder prefix of `conn`'s backend.
pub(super) fn dialect(conn: &DbConn, sql: &str) -> String {
    let placeholder = match conn {
        DbConn::Pg(_) => "$",
        DbConn::Sqlite(_) => "?",
    };
    sql.replace("{p}", placeholder)
}

/// The minutes that may hold operations created in `[from, to)`: from the one `from` falls in
/// to the one before `to` if `to` starts a minute, else the one `to` falls in.
fn minutes(from: Timestamp, to: Timestamp) -> (i64, i64) {
    let end = minute_of(to.millis()) + i64::from(to.millis().rem_euclid(60_000) != 0);
    (minute_of(from.millis()), end)
}

/// The per-minute counters of operations created in `[from, to)` (see [`minutes`]).
pub(super) fn minute_counts(
    conn: &mut DbConn,
    from: Timestamp,
    to: Timestamp,
) -> Result<Vec<MinuteCount>, TxError<StoreError>> {
    let (first, end) = minutes(from, to);
    let found: Vec<CountRow> = diesel::sql_query(dialect(conn, MINUTE_COUNTS))
        .bind::<BigInt, _>(first)
        .bind::<BigInt, _>(end)
        .load(conn)?;
    decode_all(found, CountRow::into_count)
}

/// The health counts, in one statement (one snapshot). The literal states and the literal
/// `resolved_at IS NULL` let the planner use the outbox's and the discrepancies' partial
/// indexes.
///
/// Binds: 1 stuck before.
const HEALTH: &str = "\
SELECT (SELECT COUNT(*) FROM callback_outbox WHERE state = 'pending') AS callbacks_pending,
       (SELECT COUNT(*) FROM callback_outbox WHERE state = 'held') AS callbacks_held,
       (SELECT COUNT(*) FROM callback_outbox WHERE state = 'failed') AS callbacks_failed,
       (SELECT COUNT(*) FROM operations WHERE status = 3 AND created_at < {p}1)
           AS stuck_processing,
       (SELECT COUNT(*) FROM provider_discrepancies WHERE resolved_at IS NULL)
           AS open_discrepancies";

#[derive(QueryableByName)]
struct HealthRow {
    #[diesel(sql_type = BigInt)]
    callbacks_pending: i64,
    #[diesel(sql_type = BigInt)]
    callbacks_held: i64,
    #[diesel(sql_type = BigInt)]
    callbacks_failed: i64,
    #[diesel(sql_type = BigInt)]
    stuck_processing: i64,
    #[diesel(sql_type = BigInt)]
    open_discrepancies: i64,
}

/// Callbacks pending, held and failed, operations processing since before `stuck_before`,
/// open discrepancies and the last ledger check.
pub(super) fn health(
    conn: &mut DbConn,
    stuck_before: Timestamp,
) -> Result<Health, TxError<StoreError>> {
    let counts: HealthRow = diesel::sql_query(dialect(conn, HEALTH))
        .bind::<BigInt, _>(stuck_before.millis())
        .get_result(conn)?;
    Ok(Health {
        callbacks_pending: counts.callbacks_pending,
        callbacks_held: counts.callbacks_held,
        callbacks_failed: counts.callbacks_failed,
        stuck_processing: counts.stuck_processing,
        open_discrepancies: counts.open_discrepancies,
        last_check: last_ledger_check(conn)?,
    })
}

/// Up to `limit` pending, held and failed callbacks, operations' and refunds', newest first.
pub(super) fn open_callbacks(
    conn: &mut DbConn,
    limit: u32,
) -> Result<Vec<CallbackStatus>, TxError<StoreError>> {
    use crate::schema::callback_outbox::dsl::*;
    let found: Vec<StatusRow> = callback_outbox
        .filter(sql::<Bool>("state IN ('pending', 'held', 'failed')"))
        .order((created_at.desc(), id.desc()))
        .limit(i64::from(limit))
        .select(StatusRow::as_select())
        .load(conn)?;
    decode_all(found, StatusRow::into_status)
}

/// Makes the pending callback keyed `key` (an operation's id for its own, a refund's id for
/// a refund's, as `CallbackOutbox::retry` finds it) due at `now`; nothing else of it changes.
/// Whether there was one.
pub(super) fn send_now(
    conn: &mut DbConn,
    key: uuid::Uuid,
    now: Timestamp,
) -> Result<bool, TxError<StoreError>> {
    let changed = diesel::update(
        callback_outbox::table
            .filter(callback_outbox::id.eq(key.hyphenated().to_string()))
            .filter(callback_outbox::state.eq("pending")),
    )
    .set(callback_outbox::next_attempt_at.eq(Some(now.millis())))
    .execute(conn)?;
    Ok(changed == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minutes_of_a_range_are_those_its_operations_may_be_created_in() {
        let at = |millis| Timestamp::from_millis(millis);
        // Whole minutes: exactly those.
        assert_eq!(minutes(at(120_000), at(240_000)), (2, 4));
        // A range ending within a minute includes that minute.
        assert_eq!(minutes(at(120_001), at(180_001)), (2, 4));
        // Before the epoch, minutes are floored.
        assert_eq!(minutes(at(-1), at(0)), (-1, 0));
        assert_eq!(minutes(at(-60_001), at(-59_999)), (-2, 0));
    }
}
