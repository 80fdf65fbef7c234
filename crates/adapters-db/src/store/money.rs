//! Balance moves with their ledger entries, and callbacks queued with final statuses.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{BigInt, Text};
use domain::callback::QueuedCallback;
use domain::ledger::{BalanceMove, ManualNote};

use crate::conn::{last_insert_rowid, DbConn};
use crate::schema::ledger;
use crate::work::TxError;

/// Writes one balance move's ledger entry and applies it, inside the caller's transaction.
///
/// One conditional statement: `available += a, held += h` only where both stay non-negative,
/// so concurrent holds can never overdraw (the table's CHECKs say the same). A missing balance
/// row is created for a move that only adds; a move that would take from it is `short()`.
pub(crate) fn apply_move<E>(
    conn: &mut DbConn,
    mv: &BalanceMove,
    short: impl Fn() -> E,
) -> Result<(), TxError<E>> {
    // The ledger entry first: on PostgreSQL the balance row stays locked from its update to
    // the commit, so the update comes last to keep that window short. A refusal below rolls
    // the entry back with everything else.
    diesel::insert_into(ledger::table)
        .values(NewEntry::of(mv, None))
        .execute(conn)?;
    // The fee account is the sum of its entries: no balance row to move (or to lock).
    if mv.kind.is_fee_income() {
        return Ok(());
    }
    apply_to_balance(conn, mv, short)
}

/// A ledger entry as written: one balance move, and for a manual one who made it and why.
#[derive(Insertable)]
#[diesel(table_name = ledger)]
struct NewEntry<'a> {
    merchant_id: &'a str,
    currency: &'a str,
    kind: &'a str,
    available_delta: i64,
    held_delta: i64,
    operation_id: Option<String>,
    refund_id: Option<String>,
    created_at: i64,
    actor: Option<&'a str>,
    reason: Option<&'a str>,
}

impl<'a> NewEntry<'a> {
    fn of(mv: &'a BalanceMove, note: Option<&'a ManualNote>) -> Self {
        NewEntry {
            merchant_id: mv.merchant_id.as_str(),
            currency: mv.currency.as_str(),
            kind: mv.kind.as_str(),
            available_delta: mv.available,
            held_delta: mv.held,
            operation_id: mv.operation_id.map(|id| id.to_string()),
            refund_id: mv.refund_id.map(|id| id.to_string()),
            created_at: mv.at.millis(),
            actor: note.map(|n| n.actor.as_str()),
            reason: note.map(|n| n.reason.as_str()),
        }
    }
}

/// An operator's manual move, as [`apply_move`] writes it, its ledger entry recording `note`
/// (who made it and why); returns the entry's id.
pub(crate) fn apply_manual_entry<E>(
    conn: &mut DbConn,
    mv: &BalanceMove,
    note: &ManualNote,
    short: impl Fn() -> E,
) -> Result<i64, TxError<E>> {
    let entry = NewEntry::of(mv, Some(note));
    let id = match conn {
        DbConn::Pg(pg) => diesel::insert_into(ledger::table)
            .values(entry)
            .returning(ledger::id)
            .get_result(pg)?,
        DbConn::Sqlite(lite) => {
            diesel::insert_into(ledger::table)
                .values(entry)
                .execute(lite)?;
            // The ledger's id is its rowid (AUTOINCREMENT), and nothing else was inserted
            // on this connection since.
            last_insert_rowid(lite)?
        }
    };
    apply_to_balance(conn, mv, short)?;
    Ok(id)
}

/// Applies `mv` to its balance row (see [`apply_move`]).
fn apply_to_balance<E>(
    conn: &mut DbConn,
    mv: &BalanceMove,
    short: impl Fn() -> E,
) -> Result<(), TxError<E>> {
    use crate::schema::balances::dsl::*;
    let (da, dh) = (mv.available, mv.held);
    let changed = diesel::update(
        balances
            .filter(merchant_id.eq(mv.merchant_id.as_str()))
            .filter(currency.eq(mv.currency.as_str()))
            .filter((available + da).ge(0_i64))
            .filter((held + dh).ge(0_i64)),
    )
    .set((available.eq(available + da), held.eq(held + dh)))
    .execute(conn)?;
    if changed == 0 {
        if da < 0 || dh < 0 {
            // Either the row is missing (nothing to take) or it holds too little.
            return Err(TxError::Fail(short()));
        }
        let inserted = diesel::insert_into(balances)
            .values((
                merchant_id.eq(mv.merchant_id.as_str()),
                currency.eq(mv.currency.as_str()),
                available.eq(da),
                held.eq(dh),
            ))
            .execute(conn);
        match inserted {
            Ok(_) => {}
            // PostgreSQL: a concurrent unit of work created the row first. The transaction is
            // aborted now; a fresh attempt finds the row and updates it.
            Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
                return Err(TxError::Retry("a balance row was created concurrently"));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Queues `callback` for delivery, pending and due at once, inside the caller's
/// transaction: an operation's own keyed by the operation's id, a refund's by the refund's
/// (beside its deposit's).
pub(crate) fn queue_callback<D, E>(
    conn: &mut DbConn,
    callback: &QueuedCallback<D>,
) -> Result<(), TxError<E>> {
    use crate::schema::callback_outbox::dsl::*;
    let operation = callback.operation_id.to_string();
    let refund = callback.refund_id.map(|refund| refund.to_string());
    let at = callback.queued_at.millis();
    diesel::insert_into(callback_outbox)
        .values((
            id.eq(refund.as_ref().unwrap_or(&operation)),
            operation_id.eq(&operation),
            refund_id.eq(&refund),
            merchant_id.eq(callback.merchant_id.as_str()),
            direction.eq(callback.direction.as_str()),
            url.eq(callback.url.as_str()),
            body.eq(&callback.body),
            state.eq("pending"),
            attempts.eq(0),
            failures_in_run.eq(0),
            next_attempt_at.eq(Some(at)),
            lease_owner.eq(None::<String>),
            lease_until.eq(None::<i64>),
            last_error.eq(None::<String>),
            created_at.eq(at),
            updated_at.eq(at),
        ))
        .execute(conn)?;
    Ok(())
}

/// One merchant and currency: its balance row (zeros if none) and the sums of its ledger.
#[derive(QueryableByName)]
pub(crate) struct LedgerSums {
    #[diesel(sql_type = Text)]
    pub(crate) merchant_id: String,
    #[diesel(sql_type = Text)]
    pub(crate) currency: String,
    #[diesel(sql_type = BigInt)]
    pub(crate) balance_available: i64,
    #[diesel(sql_type = BigInt)]
    pub(crate) balance_held: i64,
    #[diesel(sql_type = BigInt)]
    pub(crate) ledger_available: i64,
    #[diesel(sql_type = BigInt)]
    pub(crate) ledger_held: i64,
}

/// Balances beside their ledger sums, for every merchant and currency found in either table
/// (a ledger without a balance row shows zeros). One statement, so one consistent snapshot.
/// The fee account's entries (`fee_income`) name the merchant who paid but are not the
/// merchant's money: they are left out here.
const LEDGER_SUMS: &str = "\
SELECT merchant_id, currency,
       CAST(SUM(b_available) AS BIGINT) AS balance_available,
       CAST(SUM(b_held) AS BIGINT) AS balance_held,
       CAST(SUM(l_available) AS BIGINT) AS ledger_available,
       CAST(SUM(l_held) AS BIGINT) AS ledger_held
FROM (
    SELECT merchant_id, currency, available AS b_available, held AS b_held,
           CAST(0 AS BIGINT) AS l_available, CAST(0 AS BIGINT) AS l_held
    FROM balances
    UNION ALL
    SELECT merchant_id, currency, CAST(0 AS BIGINT), CAST(0 AS BIGINT), available_delta, held_delta
    FROM ledger WHERE kind <> 'fee_income'
) AS both_sides
GROUP BY merchant_id, currency
ORDER BY merchant_id, currency";

pub(crate) fn ledger_sums<E>(conn: &mut DbConn) -> Result<Vec<LedgerSums>, TxError<E>> {
    Ok(diesel::sql_query(LEDGER_SUMS).load(conn)?)
}
