//! What the operator reads about one operation beyond its row and attempts: its ledger
//! entries and its callback with each delivery attempt (`OperatorStore::operation_ledger`,
//! `OperatorStore::operation_callbacks`). Reads only; one code path on both backends.

use diesel::prelude::*;
use domain::ledger::EntryKind;
use domain::ports::{CallbackAttempt, StoreError};
use domain::story::{CallbackDelivery, LedgerEntry};
use domain::{OperationId, Timestamp};

use crate::conn::DbConn;
use crate::database::Database;
use crate::outbox::{count, state_from};
use crate::rows::{self, bad};
use crate::schema::{callback_attempts, callback_outbox, ledger};
use crate::work::{corrupt, TxError};

/// A ledger entry as stored.
#[derive(Queryable, Selectable)]
#[diesel(table_name = ledger)]
struct LedgerRow {
    id: i64,
    currency: String,
    kind: String,
    available_delta: i64,
    held_delta: i64,
    created_at: i64,
}

impl LedgerRow {
    fn into_entry(self) -> anyhow::Result<LedgerEntry> {
        let kind = EntryKind::parse(&self.kind)
            .ok_or_else(|| bad("ledger.kind", format!("{:?}", self.kind)))?;
        Ok(LedgerEntry {
            id: self.id,
            kind,
            currency: rows::currency("ledger.currency", &self.currency)?,
            available: self.available_delta,
            held: self.held_delta,
            at: Timestamp::from_millis(self.created_at),
        })
    }
}

/// An operation's callback row as stored.
#[derive(Queryable, Selectable)]
#[diesel(table_name = callback_outbox)]
struct OutboxRow {
    url: String,
    state: String,
    attempts: i32,
    next_attempt_at: Option<i64>,
    last_error: Option<String>,
    created_at: i64,
    updated_at: i64,
}

/// One recorded delivery attempt as stored.
#[derive(Queryable, Selectable)]
#[diesel(table_name = callback_attempts)]
struct DeliveryRow {
    attempt: i32,
    at: i64,
    duration_ms: i64,
    http_status: Option<i32>,
    error: Option<String>,
}

impl DeliveryRow {
    fn into_attempt(self, operation_id: OperationId) -> anyhow::Result<CallbackAttempt> {
        let http_status = self
            .http_status
            .map(|s| u16::try_from(s).map_err(|_| bad("callback_attempts.http_status", s)))
            .transpose()?;
        Ok(CallbackAttempt {
            operation_id,
            attempt: count("callback_attempts.attempt", self.attempt)?,
            at: Timestamp::from_millis(self.at),
            duration_ms: self.duration_ms,
            http_status,
            error: self.error,
        })
    }
}

impl OutboxRow {
    fn into_delivery(
        self,
        operation_id: OperationId,
        tries: Vec<DeliveryRow>,
    ) -> anyhow::Result<CallbackDelivery> {
        Ok(CallbackDelivery {
            url: self.url,
            state: state_from(&self.state)?,
            attempts: count("callback_outbox.attempts", self.attempts)?,
            next_attempt_at: self.next_attempt_at.map(Timestamp::from_millis),
            last_error: self.last_error,
            queued_at: Timestamp::from_millis(self.created_at),
            updated_at: Timestamp::from_millis(self.updated_at),
            deliveries: tries
                .into_iter()
                .map(|row| row.into_attempt(operation_id))
                .collect::<anyhow::Result<_>>()?,
        })
    }
}

/// The ledger entries of operation `id`, oldest first.
fn read_ledger(
    conn: &mut DbConn,
    id: OperationId,
) -> Result<Vec<LedgerEntry>, TxError<StoreError>> {
    let found: Vec<LedgerRow> = ledger::table
        .filter(ledger::operation_id.eq(id.to_string()))
        .order(ledger::id.asc())
        .select(LedgerRow::as_select())
        .load(conn)?;
    found
        .into_iter()
        .map(LedgerRow::into_entry)
        .collect::<anyhow::Result<_>>()
        .map_err(corrupt)
}

/// The callback of operation `id`, if one was queued, with its attempts by number. The
/// attempts are read after the row, so they include every attempt the row counts.
fn read_callbacks(
    conn: &mut DbConn,
    id: OperationId,
) -> Result<Vec<CallbackDelivery>, TxError<StoreError>> {
    let key = id.to_string();
    let found: Option<OutboxRow> = callback_outbox::table
        .find(&key)
        .select(OutboxRow::as_select())
        .first(conn)
        .optional()?;
    let Some(row) = found else {
        return Ok(Vec::new());
    };
    let tries: Vec<DeliveryRow> = callback_attempts::table
        .filter(callback_attempts::operation_id.eq(&key))
        .order(callback_attempts::attempt.asc())
        .select(DeliveryRow::as_select())
        .load(conn)?;
    row.into_delivery(id, tries)
        .map(|delivery| vec![delivery])
        .map_err(corrupt)
}

impl Database {
    /// See [`OperatorStore::operation_ledger`](domain::ports::OperatorStore::operation_ledger).
    pub(crate) async fn read_operation_ledger(
        &self,
        id: OperationId,
    ) -> Result<Vec<LedgerEntry>, StoreError> {
        self.read(move |conn| read_ledger(conn, id)).await
    }

    /// See [`OperatorStore::operation_callbacks`](domain::ports::OperatorStore::operation_callbacks).
    pub(crate) async fn read_operation_callbacks(
        &self,
        id: OperationId,
    ) -> Result<Vec<CallbackDelivery>, StoreError> {
        self.read(move |conn| read_callbacks(conn, id)).await
    }
}
