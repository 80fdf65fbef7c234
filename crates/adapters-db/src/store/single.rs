//! PostgreSQL: the common creations as one statement each, so a request's unit of work is one
//! round trip instead of BEGIN, two or three statements and COMMIT.
//!
//! * A new operation with no balance move and no callback (a deposit waiting for the user)
//!   is one `INSERT` (a batch of one, [`InsertMany`]), committed on its own.
//! * A new operation with one move that takes money (a payout's hold) and no callback is one
//!   statement: the conditional balance update, then the operation and its ledger entry
//!   inserted only if the update found the money. It is atomic like any single statement, and
//!   the balance row is locked only from that statement to its commit.
//!
//! Either statement also writes the operation's `created` event and counter (see
//! `crate::journal`), so they commit with it.
//!
//! Everything else (declines at creation, operations written with their first provider
//! attempt, SQLite) keeps the general unit of work in
//! [`super::operations`].

use diesel::pg::{Pg, PgConnection};
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{BigInt, Nullable, SmallInt, Text};
use domain::ledger::BalanceMove;
use domain::operation::Operation;
use domain::ports::{InsertError, NewOperation};

use crate::journal::{self, NewEvent};
use crate::rows::{self, InsertMany, NewOperationRow};
use crate::work::{corrupt, TxError};

/// Which single statement writes `new`, if one can.
pub(crate) enum Shape {
    /// The operation row alone.
    Plain,
    /// The operation row with the one move that takes money.
    Hold,
}

impl Shape {
    pub(crate) fn of(new: &NewOperation) -> Option<Shape> {
        // An operation with its first attempts (an acquirer's) takes the general path.
        if new.callback.is_some() || !new.attempts.is_empty() {
            return None;
        }
        match new.moves.as_slice() {
            [] => Some(Shape::Plain),
            // A move that only adds may have to create the balance row: the general path.
            [mv] if mv.available < 0 || mv.held < 0 => Some(Shape::Hold),
            _ => None,
        }
    }
}

/// `UPDATE balances ... RETURNING`, then the operation, its event, its counter and the ledger
/// entry from its result.
struct InsertWithHold<'a> {
    row: &'a NewOperationRow<'a>,
    merchant_id: &'a str,
    currency: &'a str,
    kind: &'static str,
    available: i64,
    held: i64,
    operation_id: Option<String>,
    at: i64,
    /// The operation's `created` event.
    event: NewEvent,
    counter: Counter,
}

/// The counter a new operation adds one to.
struct Counter {
    minute: i64,
    direction: &'static str,
    method: &'static str,
    status: i16,
    currency: String,
    slot: i16,
    amount: i64,
}

impl Counter {
    fn of(op: &Operation) -> Counter {
        Counter {
            minute: journal::minute_of(op.created_at().millis()),
            direction: op.direction().as_str(),
            method: op.method().as_str(),
            status: rows::status_code(op.status()),
            currency: op.currency().as_str().to_string(),
            slot: journal::slot(),
            amount: op.amount().minor(),
        }
    }
}

/// The statement's text never changes, so diesel prepares it once per connection.
struct InsertWithHoldId;

impl QueryId for InsertWithHold<'_> {
    type QueryId = InsertWithHoldId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl QueryFragment<Pg> for InsertWithHold<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH hold AS (UPDATE balances SET available = available + ");
        out.push_bind_param::<BigInt, _>(&self.available)?;
        out.push_sql(", held = held + ");
        out.push_bind_param::<BigInt, _>(&self.held)?;
        out.push_sql(" WHERE merchant_id = ");
        out.push_bind_param::<Text, _>(&self.merchant_id)?;
        out.push_sql(" AND currency = ");
        out.push_bind_param::<Text, _>(&self.currency)?;
        out.push_sql(" AND available + ");
        out.push_bind_param::<BigInt, _>(&self.available)?;
        out.push_sql(" >= 0 AND held + ");
        out.push_bind_param::<BigInt, _>(&self.held)?;
        out.push_sql(" >= 0 RETURNING 1), op AS (INSERT INTO operations (");
        out.push_sql(NewOperationRow::COLUMNS);
        out.push_sql(") SELECT ");
        self.row.push_values(out.reborrow())?;
        out.push_sql(" FROM hold RETURNING 1)");
        self.push_journal(out.reborrow())?;
        out.push_sql(
            " INSERT INTO ledger (merchant_id, currency, kind, \
             available_delta, held_delta, operation_id, created_at) SELECT ",
        );
        out.push_bind_param::<Text, _>(&self.merchant_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&self.currency)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&self.kind)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.available)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.held)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&self.operation_id)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.at)?;
        out.push_sql(" FROM op");
        Ok(())
    }
}

impl InsertWithHold<'_> {
    /// The event and the counter, each written only if the operation was (`FROM op`).
    fn push_journal<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(", ev AS (INSERT INTO operation_events (operation_id, at, detail) SELECT ");
        out.push_bind_param::<Text, _>(self.event.operation_id())?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(self.event.at())?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(self.event.detail())?;
        out.push_sql(" FROM op), cnt AS (INSERT INTO operation_counts (");
        out.push_sql(journal::COUNT_COLUMNS);
        out.push_sql(") SELECT ");
        let c = &self.counter;
        out.push_bind_param::<BigInt, _>(&c.minute)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&c.direction)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&c.method)?;
        out.push_sql(", ");
        out.push_bind_param::<SmallInt, _>(&c.status)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&c.currency)?;
        out.push_sql(", ");
        out.push_bind_param::<SmallInt, _>(&c.slot)?;
        out.push_sql(", 1, ");
        out.push_bind_param::<BigInt, _>(&c.amount)?;
        out.push_sql(" FROM op");
        out.push_sql(journal::ADD_TO_COUNTS);
        out.push_sql(")");
        Ok(())
    }
}

impl RunQueryDsl<PgConnection> for InsertWithHold<'_> {}

fn duplicate(error: DieselError) -> TxError<InsertError> {
    match error {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _) => {
            TxError::Fail(InsertError::Duplicate)
        }
        other => TxError::Db(other),
    }
}

/// Writes `new` in the one statement `shape` names, on its own (autocommit).
pub(crate) fn insert(
    conn: &mut PgConnection,
    shape: &Shape,
    new: &NewOperation,
    row: &NewOperationRow<'_>,
) -> Result<(), TxError<InsertError>> {
    match shape {
        Shape::Plain => {
            // A taken id or merchantOperationId is skipped (`ON CONFLICT DO NOTHING`).
            let written: Vec<String> = InsertMany::new(std::slice::from_ref(row))
                .map_err(corrupt)?
                .load(conn)
                .map_err(duplicate)?;
            if written.is_empty() {
                return Err(TxError::Fail(InsertError::Duplicate));
            }
            Ok(())
        }
        Shape::Hold => {
            let [mv] = new.moves.as_slice() else {
                return Err(corrupt(anyhow::anyhow!("a hold needs one move")));
            };
            let statement = hold_statement(row, &new.operation, mv).map_err(corrupt)?;
            let written = statement.execute(conn).map_err(duplicate)?;
            if written == 1 {
                return Ok(());
            }
            // Nothing written: the money was short, unless the merchantOperationId is taken
            // (the general path reports the duplicate first; so does this one).
            match &new.operation.merchant_operation_id() {
                Some(moid) if taken(conn, new, moid.as_str())? => {
                    Err(TxError::Fail(InsertError::Duplicate))
                }
                _ => Err(TxError::Fail(InsertError::InsufficientBalance)),
            }
        }
    }
}

fn hold_statement<'a>(
    row: &'a NewOperationRow<'a>,
    op: &Operation,
    mv: &'a BalanceMove,
) -> anyhow::Result<InsertWithHold<'a>> {
    Ok(InsertWithHold {
        row,
        merchant_id: mv.merchant_id.as_str(),
        currency: mv.currency.as_str(),
        kind: mv.kind.as_str(),
        available: mv.available,
        held: mv.held,
        operation_id: mv.operation_id.map(|id| id.to_string()),
        at: mv.at.millis(),
        event: NewEvent::created(op)?,
        counter: Counter::of(op),
    })
}

fn taken(
    conn: &mut PgConnection,
    new: &NewOperation,
    moid: &str,
) -> Result<bool, TxError<InsertError>> {
    use crate::schema::operations::dsl::*;
    let found: Option<String> = operations
        .filter(merchant_id.eq(new.operation.merchant_id().as_str()))
        .filter(direction.eq(new.operation.direction().as_str()))
        .filter(merchant_operation_id.eq(moid))
        .select(id)
        .first(conn)
        .optional()?;
    Ok(found.is_some())
}
