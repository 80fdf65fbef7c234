//! PostgreSQL: the common creations as one statement each, so a request's unit of work is one
//! round trip instead of BEGIN, three to six statements and COMMIT.
//!
//! * A new operation with no balance move and no callback (a deposit waiting for the user)
//!   is one `INSERT` (a batch of one, [`InsertMany`]), committed on its own.
//! * A new operation with one move that takes money (a payout's hold) and no callback is one
//!   statement: the conditional balance update, then the operation and its ledger entry
//!   inserted only if the update found the money. It is atomic like any single statement, and
//!   the balance row is locked only from that statement to its commit.
//! * A new operation with its first provider attempt (an acquirer's card payin, or payout
//!   with its hold) is the same statement with the attempt row added: what the gateway is
//!   about to send is committed, in one round trip, before it is sent.
//!
//! Each statement also writes the operation's events (`created`, and its attempt's) and
//! counter (see `crate::journal`), so they commit with it.
//!
//! Everything else (declines at creation, operations with routes passed over at creation,
//! SQLite) keeps the general unit of work in [`super::operations`].

use diesel::pg::{Pg, PgConnection};
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{BigInt, Nullable, SmallInt, Text};
use domain::operation::Operation;
use domain::ports::{InsertError, NewOperation};

use crate::binds::Binds;
use crate::journal::{self, created_events, NewEvent};

use crate::rows::{self, InsertMany, NewAttemptRow, NewOperationRow};
use crate::work::{corrupt, TxError};

/// Which single statement writes `new`, if one can.
pub(crate) enum Shape {
    /// The operation row alone.
    Plain,
    /// The operation row with the one move that takes money.
    Hold,
    /// The operation row with its provider attempts (the routes passed over, then the
    /// acquirer about to be called), and the one move that takes money if it has one (a
    /// payout's hold).
    Attempt,
}

impl Shape {
    pub(crate) fn of(new: &NewOperation) -> Option<Shape> {
        if new.callback.is_some() {
            return None;
        }
        let holds = match new.moves.as_slice() {
            [] => false,
            // A move that only adds may have to create the balance row: the general path.
            [mv] if mv.available < 0 || mv.held < 0 => true,
            _ => return None,
        };
        Some(match (new.attempts.is_empty(), holds) {
            (true, false) => Shape::Plain,
            (true, true) => Shape::Hold,
            (false, _) => Shape::Attempt,
        })
    }
}

/// One new operation as one statement: the conditional balance update if it holds money
/// (`UPDATE balances ... RETURNING`, the rest written only if it found the money), the
/// operation, its attempts, its events, its counter, and the ledger entry of the hold.
struct InsertOne<'a> {
    row: &'a NewOperationRow<'a>,
    hold: Option<Hold<'a>>,
    attempts: Vec<NewAttemptRow<'a>>,
    /// The operation's `created` event, then its attempts', in their order.
    events: Vec<NewEvent>,
    counter: Counter,
}

/// A move that takes money, and its ledger entry.
struct Hold<'a> {
    merchant_id: &'a str,
    currency: &'a str,
    kind: &'static str,
    available: i64,
    held: i64,
    operation_id: Option<String>,
    at: i64,
}

/// The counter a new operation adds one to.
struct Counter {
    minute: i64,
    direction: &'static str,
    method: &'static str,
    status: i16,
    currency: String,
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
            amount: op.amount().minor(),
        }
    }
}

// Its text depends on the parts present, so it is not one static query: diesel keeps one
// prepared statement per distinct text and bind types.
impl QueryId for InsertOne<'_> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl QueryFragment<Pg> for InsertOne<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH ");
        if let Some(hold) = &self.hold {
            out.push_sql("hold AS (UPDATE balances SET available = available + ");
            out.push_bind_param::<BigInt, _>(&hold.available)?;
            out.push_sql(", held = held + ");
            out.push_bind_param::<BigInt, _>(&hold.held)?;
            out.push_sql(", entry_at = GREATEST(entry_at, LEAST(");
            out.push_bind_param::<BigInt, _>(&hold.at)?;
            out.push_sql(", ");
            out.push_sql(crate::conn::pg_latest_entry_at!());
            out.push_sql(")) WHERE merchant_id = ");
            out.push_bind_param::<Text, _>(&hold.merchant_id)?;
            out.push_sql(" AND currency = ");
            out.push_bind_param::<Text, _>(&hold.currency)?;
            out.push_sql(" AND available + ");
            out.push_bind_param::<BigInt, _>(&hold.available)?;
            out.push_sql(" >= 0 AND held + ");
            out.push_bind_param::<BigInt, _>(&hold.held)?;
            out.push_sql(" >= 0 RETURNING available, held, entry_at), ");
        }
        out.push_sql("op AS (INSERT INTO operations (");
        out.push_sql(NewOperationRow::COLUMNS);
        out.push_sql(") SELECT ");
        self.row.push_values(out.reborrow())?;
        if self.hold.is_some() {
            out.push_sql(" FROM hold");
        }
        out.push_sql(" RETURNING 1)");
        for (i, attempt) in self.attempts.iter().enumerate() {
            out.push_sql(&format!(", att{i} AS (INSERT INTO provider_attempts ("));
            out.push_sql(NewAttemptRow::COLUMNS);
            out.push_sql(") SELECT ");
            attempt.push_values(out.reborrow())?;
            out.push_sql(" FROM op)");
        }
        self.push_journal(out.reborrow())?;
        let Some(hold) = &self.hold else {
            out.push_sql(" SELECT 1 FROM op");
            return Ok(());
        };
        // The entry records the balance the hold left, dated no earlier than the entry
        // before it (see `store::money`).
        out.push_sql(
            " INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, \
             operation_id, created_at, available_after, held_after) SELECT ",
        );
        Binds::new(&mut out)
            .bind::<Text, _>(&hold.merchant_id)?
            .bind::<Text, _>(&hold.currency)?
            .bind::<Text, _>(&hold.kind)?
            .bind::<BigInt, _>(&hold.available)?
            .bind::<BigInt, _>(&hold.held)?
            .bind::<Nullable<Text>, _>(&hold.operation_id)?
            .sql("hold.entry_at")
            .sql("hold.available")
            .sql("hold.held");
        out.push_sql(" FROM op CROSS JOIN hold");
        Ok(())
    }
}

impl InsertOne<'_> {
    /// The events, in order, and the counter, each written only if the operation was
    /// (`FROM op`).
    fn push_journal<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(
            ", ev AS (INSERT INTO operation_events (operation_id, at, detail) \
             SELECT v.operation_id, v.at, v.detail FROM op CROSS JOIN (VALUES ",
        );
        for (i, event) in self.events.iter().enumerate() {
            out.push_sql(if i == 0 { "(" } else { ", (" });
            Binds::new(&mut out)
                .bind::<Text, _>(event.operation_id())?
                .bind::<BigInt, _>(event.at())?
                .bind::<Text, _>(event.detail())?;
            out.push_sql(")");
        }
        out.push_sql(") AS v (operation_id, at, detail)), cnt AS (INSERT INTO operation_counts (");
        out.push_sql(journal::COUNT_COLUMNS);
        out.push_sql(") SELECT ");
        let c = &self.counter;
        Binds::new(&mut out)
            .bind::<BigInt, _>(&c.minute)?
            .bind::<Text, _>(&c.direction)?
            .bind::<Text, _>(&c.method)?
            .bind::<SmallInt, _>(&c.status)?
            .bind::<Text, _>(&c.currency)?
            .sql(crate::conn::PG_SLOT)
            .sql("1")
            .bind::<BigInt, _>(&c.amount)?;
        out.push_sql(" FROM op");
        out.push_sql(journal::ADD_TO_COUNTS);
        out.push_sql(")");
        Ok(())
    }
}

impl RunQueryDsl<PgConnection> for InsertOne<'_> {}

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
        Shape::Hold | Shape::Attempt => {
            let statement = one_statement(row, new).map_err(corrupt)?;
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

/// The statement for a [`Shape::Hold`] or [`Shape::Attempt`] operation.
fn one_statement<'a>(
    row: &'a NewOperationRow<'a>,
    new: &'a NewOperation,
) -> anyhow::Result<InsertOne<'a>> {
    let op = &new.operation;
    let hold = match new.moves.as_slice() {
        [] => None,
        [mv] => Some(Hold {
            merchant_id: mv.merchant_id.as_str(),
            currency: mv.currency.as_str(),
            kind: mv.kind.as_str(),
            available: mv.available,
            held: mv.held,
            operation_id: mv.operation_id.map(|id| id.to_string()),
            at: mv.at.millis(),
        }),
        _ => anyhow::bail!("one statement writes at most one move"),
    };
    Ok(InsertOne {
        row,
        hold,
        attempts: new
            .attempts
            .iter()
            .map(NewAttemptRow::new)
            .collect::<anyhow::Result<_>>()?,
        events: created_events(new)?,
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
