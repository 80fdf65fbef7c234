//! What the operator reads about one operation beyond its row and attempts: its ledger
//! entries and its callbacks with each delivery attempt (`OperatorStore::operation_ledger`,
//! `OperatorStore::operation_callbacks`), its refunds' included (their entries and callbacks
//! carry the deposit's id as `operation_id`). Reads only; one code path on both backends.

use diesel::prelude::*;
use domain::callback::{CallbackAttempt, DisputeChange};
use domain::console::Actor;
use domain::ledger::{EntryKind, ManualNote};
use domain::ports::StoreError;
use domain::story::{CallbackDelivery, LedgerEntry};
use domain::{OperationId, RefundId, Timestamp};

use crate::conn::DbConn;
use crate::database::Database;
use crate::outbox::{count, dispute_of, keys_of_operation, refund_of, state_from};
use crate::rows::{self, bad, grouped};
use crate::schema::{callback_attempts, callback_outbox, ledger};
use crate::work::{decode_all, TxError};

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
    refund_id: Option<String>,
    actor: Option<String>,
    reason: Option<String>,
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
            refund_id: self
                .refund_id
                .map(|r| rows::refund_id("ledger.refund_id", &r))
                .transpose()?,
            // Manual entries name who made them and why (those from before the console
            // kept that do not).
            note: match (self.actor, self.reason) {
                (Some(actor), Some(reason)) => Some(ManualNote {
                    actor: Actor::from_stored(&actor),
                    reason,
                }),
                _ => None,
            },
        })
    }
}

/// An operation's callback row (its own or a refund's) as stored.
#[derive(Queryable, Selectable)]
#[diesel(table_name = callback_outbox)]
struct OutboxRow {
    id: String,
    refund_id: Option<String>,
    dispute_id: Option<String>,
    change_id: Option<String>,
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
pub(crate) struct DeliveryRow {
    pub(crate) callback_id: String,
    attempt: i32,
    at: i64,
    duration_ms: i64,
    http_status: Option<i32>,
    error: Option<String>,
}

impl DeliveryRow {
    pub(crate) fn into_attempt(
        self,
        operation_id: OperationId,
        refund_id: Option<RefundId>,
        dispute: Option<DisputeChange>,
    ) -> anyhow::Result<CallbackAttempt> {
        let http_status = self
            .http_status
            .map(|s| u16::try_from(s).map_err(|_| bad("callback_attempts.http_status", s)))
            .transpose()?;
        Ok(CallbackAttempt {
            operation_id,
            refund_id,
            dispute,
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
        let refund_id = refund_of(self.refund_id.as_deref())?;
        let dispute = dispute_of(self.dispute_id.as_deref(), self.change_id.as_deref())?;
        Ok(CallbackDelivery {
            refund_id,
            dispute,
            url: self.url,
            state: state_from(&self.state)?,
            attempts: count("callback_outbox.attempts", self.attempts)?,
            next_attempt_at: self.next_attempt_at.map(Timestamp::from_millis),
            last_error: self.last_error,
            queued_at: Timestamp::from_millis(self.created_at),
            updated_at: Timestamp::from_millis(self.updated_at),
            deliveries: tries
                .into_iter()
                .map(|row| row.into_attempt(operation_id, refund_id, dispute))
                .collect::<anyhow::Result<_>>()?,
        })
    }
}

/// The ledger entries of operation `id` (manual ones that name it included), oldest first.
fn read_ledger(
    conn: &mut DbConn,
    id: OperationId,
) -> Result<Vec<LedgerEntry>, TxError<StoreError>> {
    let found: Vec<LedgerRow> = ledger::table
        .filter(ledger::operation_id.eq(id.to_string()))
        .order(ledger::id.asc())
        .select(LedgerRow::as_select())
        .load(conn)?;
    decode_all(found, LedgerRow::into_entry)
}

/// The callbacks of operation `id`: its own first, then its refunds' in the order they were
/// queued (ties by id), each with its attempts by number. The attempts are read after the
/// rows, so they include every attempt the rows count.
fn read_callbacks(
    conn: &mut DbConn,
    id: OperationId,
) -> Result<Vec<CallbackDelivery>, TxError<StoreError>> {
    let keys: Vec<String> = keys_of_operation(conn, id)?
        .into_iter()
        .map(|owner| owner.key)
        .collect();
    let mut found: Vec<OutboxRow> = callback_outbox::table
        .filter(callback_outbox::id.eq_any(&keys))
        .order((callback_outbox::created_at.asc(), callback_outbox::id.asc()))
        .select(OutboxRow::as_select())
        .load(conn)?;
    if found.is_empty() {
        return Ok(Vec::new());
    }
    // The operation's own callback first (a stable sort keeps the rest in order).
    found.sort_by_key(|row| row.refund_id.is_some() || row.dispute_id.is_some());
    let keys: Vec<&str> = found.iter().map(|row| row.id.as_str()).collect();
    let tries: Vec<DeliveryRow> = callback_attempts::table
        .filter(callback_attempts::callback_id.eq_any(&keys))
        .order((
            callback_attempts::callback_id.asc(),
            callback_attempts::attempt.asc(),
        ))
        .select(DeliveryRow::as_select())
        .load(conn)?;
    let mut by_callback = grouped(tries, |row| row.callback_id.clone());
    decode_all(found, |row| {
        let tries = by_callback.remove(&row.id).unwrap_or_default();
        row.into_delivery(id, tries)
    })
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
