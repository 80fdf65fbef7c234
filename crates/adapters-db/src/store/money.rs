//! Balance moves with their ledger entries, and callbacks queued with final statuses.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{BigInt, Bool, Nullable, Text};
use domain::callback::QueuedCallback;
use domain::ledger::{BalanceMove, EntryKind, ManualNote};

use crate::conn::{last_insert_rowid, pg_latest_entry_at, DbConn};
use crate::schema::ledger;
use crate::work::TxError;

/// Writes one balance move's ledger entry and applies it, inside the caller's transaction.
///
/// One conditional statement: `available += a, held += h` only where what takes from either
/// leaves it non-negative (a credit applies to a negative balance too), so concurrent holds
/// can never overdraw. A chargeback's hold (`dispute_hold`) alone skips
/// the condition on `available`: the bank took the money back, so it applies even when it
/// leaves the available balance below zero (and every other move that takes from it is then
/// refused until it is positive again). A missing balance
/// row is created for a move that only adds; a move that would take from it is `short()`.
pub(crate) fn apply_move<E>(
    conn: &mut DbConn,
    mv: &BalanceMove,
    short: impl Fn() -> E,
) -> Result<(), TxError<E>> {
    // The fee account is the sum of its entries: no balance row to move (or to lock), and no
    // balance left to record.
    if mv.kind.is_fee_income() {
        diesel::insert_into(ledger::table)
            .values(NewEntry::of(mv, None, None))
            .execute(conn)?;
        return Ok(());
    }
    write_entry(conn, mv, None, short).map(|_| ())
}

/// Where a written entry is: its id, which PostgreSQL returns with it, or SQLite's last row
/// inserted on this connection (read only when asked for: a move's caller needs no id).
enum Written {
    Id(i64),
    LastInsert,
}

impl Written {
    fn id(self, conn: &mut DbConn) -> QueryResult<i64> {
        match (self, conn) {
            (Written::Id(id), _) => Ok(id),
            // The ledger's id is its rowid (AUTOINCREMENT), and nothing else was inserted on
            // this connection since.
            (Written::LastInsert, DbConn::Sqlite(lite)) => last_insert_rowid(lite),
            (Written::LastInsert, DbConn::Pg(_)) => Err(DieselError::QueryBuilderError(
                "PostgreSQL returns a written entry's id".into(),
            )),
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
    let written = write_entry(conn, mv, Some(note), short)?;
    Ok(written.id(conn)?)
}

/// A ledger entry as written: one balance move, the balance it left (none for the fee
/// account's), when it is dated, and for a manual one who made it and why.
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
    dispute_id: Option<String>,
    created_at: i64,
    actor: Option<&'a str>,
    reason: Option<&'a str>,
    available_after: Option<i64>,
    held_after: Option<i64>,
}

impl<'a> NewEntry<'a> {
    fn of(mv: &'a BalanceMove, note: Option<&'a ManualNote>, left: Option<Left>) -> Self {
        NewEntry {
            merchant_id: mv.merchant_id.as_str(),
            currency: mv.currency.as_str(),
            kind: mv.kind.as_str(),
            available_delta: mv.available,
            held_delta: mv.held,
            operation_id: mv.operation_id.map(|id| id.to_string()),
            refund_id: mv.refund_id.map(|id| id.to_string()),
            dispute_id: mv.dispute_id.map(|id| id.to_string()),
            created_at: left.map_or(mv.at.millis(), |l| l.entry_at),
            actor: note.map(|n| n.actor.as_str()),
            reason: note.map(|n| n.reason.as_str()),
            available_after: left.map(|l| l.available),
            held_after: left.map(|l| l.held),
        }
    }
}

/// What a move left on its balance row: the balance, and the time its entry is dated (the
/// move's own, raised to the previous entry's so that a balance's entries never go back in
/// time).
#[derive(QueryableByName, Clone, Copy)]
struct Left {
    #[diesel(sql_type = BigInt)]
    available: i64,
    #[diesel(sql_type = BigInt)]
    held: i64,
    #[diesel(sql_type = BigInt)]
    entry_at: i64,
}

/// The id of an entry just written.
#[derive(QueryableByName)]
struct EntryId {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// PostgreSQL: the conditional balance update and its entry, with the balance it left, as
/// one statement: the entry's id is drawn after the update took the row's lock, so a
/// balance's entries are numbered in the order they were applied. The entry is dated with
/// the move's time, no later than `conn::pg_latest_entry_at!` and no earlier than the
/// balance's previous entry. No row: the balance row
/// is missing or too short.
const MOVE_PG: &str = concat!(
    "WITH b AS (UPDATE balances SET available = available + $3, held = held + $4, \
         entry_at = GREATEST(entry_at, LEAST($5, ",
    pg_latest_entry_at!(),
    ")) WHERE merchant_id = $1 AND currency = $2 AND ($12 OR $3 >= 0 OR available + $3 >= 0) \
         AND held + $4 >= 0 \
         RETURNING available, held, entry_at) \
     INSERT INTO ledger (merchant_id, currency, kind, available_delta, held_delta, \
         operation_id, refund_id, actor, reason, created_at, available_after, held_after, \
         dispute_id) \
     SELECT $1, $2, $6, $3, $4, $7, $8, $9, $10, b.entry_at, b.available, b.held, $11 FROM b \
     RETURNING id"
);

/// SQLite: the conditional balance update, returning what it left (the entry follows; one
/// writer at a time, so nothing comes between), dated as on PostgreSQL by the move's time,
/// no more than a second ahead of the clock now.
const MOVE_SQLITE: &str = "\
UPDATE balances SET available = available + ?1, held = held + ?2,
    entry_at = MAX(entry_at, MIN(?3, CAST(unixepoch('subsec') * 1000 AS INTEGER) + 1000))
WHERE merchant_id = ?4 AND currency = ?5 AND (?6 OR ?1 >= 0 OR available + ?1 >= 0) AND held + ?2 >= 0
RETURNING available, held, entry_at";

/// Applies `mv` to its balance row and writes its entry with the balance it left; returns
/// where the entry is. A missing row is created (at zero) for a move that only adds, and the move
/// applied to it the same way; a move that would take from a missing row is `short()`.
fn write_entry<E>(
    conn: &mut DbConn,
    mv: &BalanceMove,
    note: Option<&ManualNote>,
    short: impl Fn() -> E,
) -> Result<Written, TxError<E>> {
    if let Some(written) = move_balance(conn, mv, note)? {
        return Ok(written);
    }
    if (mv.available < 0 && !may_overdraw(mv)) || mv.held < 0 {
        // Either the row is missing (nothing to take) or it holds too little.
        return Err(TxError::Fail(short()));
    }
    create_balance(conn, mv)?;
    move_balance(conn, mv, note)?.ok_or_else(|| {
        TxError::Db(DieselError::QueryBuilderError(
            "a balance row just created was not found".into(),
        ))
    })
}

/// Whether `mv` applies even when it leaves the available balance below zero: only a
/// chargeback's hold.
fn may_overdraw(mv: &BalanceMove) -> bool {
    mv.kind == EntryKind::DisputeHold
}

/// The conditional update of `mv`'s balance row and its entry with what it left: where the
/// entry is, or `None` when the row is missing or holds too little.
fn move_balance<E>(
    conn: &mut DbConn,
    mv: &BalanceMove,
    note: Option<&ManualNote>,
) -> Result<Option<Written>, TxError<E>> {
    let (da, dh, at) = (mv.available, mv.held, mv.at.millis());
    let entry = NewEntry::of(mv, note, None);
    Ok(match conn {
        DbConn::Pg(pg) => {
            let written: Vec<EntryId> = diesel::sql_query(MOVE_PG)
                .bind::<Text, _>(entry.merchant_id)
                .bind::<Text, _>(entry.currency)
                .bind::<BigInt, _>(da)
                .bind::<BigInt, _>(dh)
                .bind::<BigInt, _>(at)
                .bind::<Text, _>(entry.kind)
                .bind::<Nullable<Text>, _>(&entry.operation_id)
                .bind::<Nullable<Text>, _>(&entry.refund_id)
                .bind::<Nullable<Text>, _>(entry.actor)
                .bind::<Nullable<Text>, _>(entry.reason)
                .bind::<Nullable<Text>, _>(&entry.dispute_id)
                .bind::<Bool, _>(may_overdraw(mv))
                .load(pg)?;
            written.first().map(|w| Written::Id(w.id))
        }
        DbConn::Sqlite(lite) => {
            let left: Vec<Left> = diesel::sql_query(MOVE_SQLITE)
                .bind::<BigInt, _>(da)
                .bind::<BigInt, _>(dh)
                .bind::<BigInt, _>(at)
                .bind::<Text, _>(entry.merchant_id)
                .bind::<Text, _>(entry.currency)
                .bind::<Bool, _>(may_overdraw(mv))
                .load(lite)?;
            match left.first() {
                Some(left) => {
                    diesel::insert_into(ledger::table)
                        .values(NewEntry::of(mv, note, Some(*left)))
                        .execute(lite)?;
                    Some(Written::LastInsert)
                }
                None => None,
            }
        }
    })
}

/// Creates the balance row of a merchant's first move in a currency, at zero.
fn create_balance<E>(conn: &mut DbConn, mv: &BalanceMove) -> Result<(), TxError<E>> {
    use crate::schema::balances::dsl::*;
    let inserted = diesel::insert_into(balances)
        .values((
            merchant_id.eq(mv.merchant_id.as_str()),
            currency.eq(mv.currency.as_str()),
            available.eq(0_i64),
            held.eq(0_i64),
            entry_at.eq(0_i64),
        ))
        .execute(conn);
    match inserted {
        Ok(_) => Ok(()),
        // PostgreSQL: a concurrent unit of work created the row first. The transaction is
        // aborted now; a fresh attempt finds the row and updates it.
        Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
            Err(TxError::Retry("a balance row was created concurrently"))
        }
        Err(e) => Err(e.into()),
    }
}

/// Queues `callback` for delivery, pending and due at once, inside the caller's
/// transaction: an operation's own keyed by the operation's id, a refund's by the refund's
/// (beside its deposit's), a dispute's change by the change's. Its sequence number is drawn
/// from its operation's row (`operations.callback_sequence`) by the same unit of work, and
/// written into its body; its merchant's list of callbacks (`merchant_callbacks`) gains it.
pub(crate) fn queue_callback<D, E>(
    conn: &mut DbConn,
    callback: &QueuedCallback<D>,
) -> Result<(), TxError<E>> {
    let queued = Queued::of(callback);
    let written = match conn {
        DbConn::Pg(pg) => diesel::sql_query(QUEUE_PG)
            .bind::<Text, _>(&queued.operation)
            .bind::<Text, _>(&queued.key)
            .bind::<Nullable<Text>, _>(&queued.refund)
            .bind::<Nullable<Text>, _>(&queued.dispute)
            .bind::<Nullable<Text>, _>(&queued.change)
            .bind::<Text, _>(queued.merchant)
            .bind::<Text, _>(queued.direction)
            .bind::<Text, _>(queued.url)
            .bind::<Text, _>(queued.body.before())
            .bind::<Text, _>(queued.body.after())
            .bind::<BigInt, _>(queued.at)
            .execute(pg)?,
        DbConn::Sqlite(lite) => {
            let drawn: Vec<Drawn> = diesel::sql_query(DRAW_SQLITE)
                .bind::<Text, _>(&queued.operation)
                .load(lite)?;
            match drawn.first() {
                Some(drawn) => queued.insert_sqlite(lite, drawn.sequence)?,
                None => 0,
            }
        }
    };
    if written != 1 {
        return Err(TxError::Db(DieselError::QueryBuilderError(
            format!(
                "a callback was queued for operation {} not found",
                queued.operation
            )
            .into(),
        )));
    }
    Ok(())
}

/// PostgreSQL: the operation's next sequence number, its callback and the callback's row in
/// its merchant's list, in one statement (the operation row's lock orders two callbacks of
/// one deposit queued at once).
const QUEUE_PG: &str = "\
WITH s AS (UPDATE operations SET callback_sequence = callback_sequence + 1 WHERE id = $1
    RETURNING callback_sequence),
q AS (INSERT INTO callback_outbox (id, operation_id, refund_id, dispute_id, change_id,
    merchant_id, direction, url, body, state, attempts, failures_in_run, next_attempt_at,
    created_at, updated_at, sequence)
    SELECT $2, $1, $3, $4, $5, $6, $7, $8, $9 || s.callback_sequence || $10, 'pending', 0, 0,
        $11, $11, $11, s.callback_sequence
    FROM s
    RETURNING id, merchant_id, direction, created_at)
INSERT INTO merchant_callbacks (merchant_id, direction, created_at, callback_id)
SELECT merchant_id, direction, created_at, id FROM q";

/// SQLite: the operation's next sequence number (its callback follows; one writer at a time).
const DRAW_SQLITE: &str = "\
UPDATE operations SET callback_sequence = callback_sequence + 1 WHERE id = ?1
RETURNING callback_sequence AS sequence";

/// A sequence number just drawn.
#[derive(QueryableByName)]
struct Drawn {
    #[diesel(sql_type = BigInt)]
    sequence: i64,
}

/// A callback's row as it is queued, but for its sequence number.
struct Queued<'a> {
    key: String,
    operation: String,
    refund: Option<String>,
    dispute: Option<String>,
    change: Option<String>,
    merchant: &'a str,
    direction: &'static str,
    url: &'a str,
    body: &'a domain::callback::CallbackBody,
    at: i64,
}

impl<'a> Queued<'a> {
    fn of<D>(callback: &'a QueuedCallback<D>) -> Self {
        Queued {
            key: crate::outbox::callback_key(
                callback.operation_id,
                callback.refund_id,
                callback.dispute,
            ),
            operation: callback.operation_id.to_string(),
            refund: callback.refund_id.map(|refund| refund.to_string()),
            dispute: callback.dispute.map(|d| d.dispute_id.to_string()),
            change: callback
                .dispute
                .map(|d| d.change_id.hyphenated().to_string()),
            merchant: callback.merchant_id.as_str(),
            direction: callback.direction.as_str(),
            url: callback.url.as_str(),
            body: &callback.body,
            at: callback.queued_at.millis(),
        }
    }

    fn insert_sqlite(
        &self,
        conn: &mut diesel::SqliteConnection,
        number: i64,
    ) -> QueryResult<usize> {
        use crate::schema::callback_outbox::dsl::*;
        let text = self
            .body
            .with_sequence(u64::try_from(number).unwrap_or_default());
        diesel::insert_into(callback_outbox)
            .values((
                id.eq(&self.key),
                operation_id.eq(&self.operation),
                refund_id.eq(&self.refund),
                dispute_id.eq(&self.dispute),
                change_id.eq(&self.change),
                merchant_id.eq(self.merchant),
                direction.eq(self.direction),
                url.eq(self.url),
                body.eq(&text),
                state.eq("pending"),
                attempts.eq(0),
                failures_in_run.eq(0),
                next_attempt_at.eq(Some(self.at)),
                lease_owner.eq(None::<String>),
                lease_until.eq(None::<i64>),
                last_error.eq(None::<String>),
                created_at.eq(self.at),
                updated_at.eq(self.at),
                sequence.eq(number),
            ))
            .execute(conn)?;
        use crate::schema::merchant_callbacks as listed;
        diesel::insert_into(listed::table)
            .values((
                listed::merchant_id.eq(self.merchant),
                listed::direction.eq(self.direction),
                listed::created_at.eq(self.at),
                listed::callback_id.eq(&self.key),
            ))
            .execute(conn)
    }
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
