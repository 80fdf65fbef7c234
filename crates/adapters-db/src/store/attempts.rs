//! Provider attempts: written with their operation, completed after each call, leased to the
//! reconciler; and the discrepancies providers report.

use std::sync::LazyLock;
use std::time::Duration;

use diesel::backend::Backend;
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, HasSqlType, Integer, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use domain::attempt::{Attempt, AttemptState, Discrepancy};
use domain::ports::{Chain, SaveCommitted, StoreError};
use domain::{OperationId, Timestamp};
use futures::FutureExt;
use tokio::sync::oneshot;

use crate::conn::DbConn;
use crate::database::Database;
use crate::jobs::AttemptSave;
use crate::journal::{write_events, NewEvent};
use crate::rows::{bad, AttemptChanges, AttemptRow, NewAttemptRow};
use crate::schema::{operations, provider_attempts};
use crate::work::{corrupt, statement_tx, write_tx, TxError};

use super::PROCESSING;

/// Most writers of queued attempt saves at once ([`Database::update_attempt`],
/// [`Database::queue_attempt`]).
const SAVE_WRITERS: usize = 1;

/// Most queued attempt saves in one transaction.
const MAX_SAVES: usize = 64;

/// How long a writer holding only saves nobody waits for waits for more before writing: the
/// acquirer's notification of a payment comes a moment after the creation's answer is queued,
/// and saves of one attempt queued together are written as one ([`folded`]).
const LINGER: Duration = Duration::from_millis(3);

/// Writes a new attempt inside the caller's transaction (after its operation); its event
/// ([`NewEvent::attempt`]) is the caller's to write.
pub(crate) fn insert_attempt<E: From<StoreError>>(
    conn: &mut DbConn,
    attempt: &Attempt,
) -> Result<(), TxError<E>> {
    let row = NewAttemptRow::new(attempt).map_err(corrupt)?;
    diesel::insert_into(provider_attempts::table)
        .values(&row)
        .execute(conn)?;
    Ok(())
}

/// The due current attempts of one provider's processing operations, leased in the same
/// statement. "Current" is the last attempt tried: a later `skipped` one does not count.
/// `{lock}` is PostgreSQL's row lock (rows another claimer holds are skipped, and the lease
/// condition is checked again on the locked row); SQLite's `BEGIN IMMEDIATE` makes the
/// statement the only writer, so it needs none.
///
/// Binds: 1 owner, 2 lease until, 3 provider, 4 now, 5 limit.
const CLAIM: &str = "\
UPDATE provider_attempts SET lease_owner = {p}1, lease_until = {p}2
WHERE (operation_id, number) IN (
    SELECT a.operation_id, a.number
    FROM provider_attempts a JOIN operations o ON o.id = a.operation_id
    WHERE a.provider = {p}3 AND a.next_check_at <= {p}4
      AND (a.lease_until IS NULL OR a.lease_until < {p}4)
      AND o.status = 3 AND a.state <> 'skipped'
      AND NOT EXISTS (SELECT 1 FROM provider_attempts later
          WHERE later.operation_id = a.operation_id AND later.number > a.number
            AND later.state <> 'skipped')
    ORDER BY a.next_check_at, a.operation_id, a.number
    LIMIT {p}5{lock})
RETURNING operation_id, number, route_id, provider, state, acquirer_id, failure_code,
    redirect_url, latency_ms, created_at, updated_at, next_check_at, unknown_since, reads";

/// Writes an attempt over its row, merged with what the row already knows: the acquirer's
/// id is kept once known, a failure code, page or latency is kept unless a new one comes, and
/// a state the acquirer has answered (`ok`, `declined`, `unavailable`) is never taken back
/// to `sent` or `unknown` (nor its `unknown_since` set). The lease ends.
///
/// Binds: 1 state, 2 acquirer id, 3 failure code, 4 redirect URL, 5 latency, 6 updated at,
/// 7 next check, 8 unknown since, 9 reads, 10 operation id, 11 number. Followed by
/// `RETURNING state` ([`PLAIN_SAVE`]) or by the rest of [`SAVE_JOURNALED`].
const SAVE: &str = "\
UPDATE provider_attempts SET
    state = CASE WHEN state IN ('ok', 'declined', 'unavailable') AND {p}1 IN ('sent', 'unknown')
        THEN state ELSE {p}1 END,
    unknown_since = CASE WHEN state IN ('ok', 'declined', 'unavailable')
        AND {p}1 IN ('sent', 'unknown') THEN NULL ELSE {p}8 END,
    acquirer_id = COALESCE(acquirer_id, {p}2),
    failure_code = COALESCE({p}3, failure_code),
    redirect_url = COALESCE({p}4, redirect_url),
    latency_ms = COALESCE({p}5, latency_ms),
    updated_at = {p}6,
    next_check_at = {p}7,
    reads = {p}9,
    lease_owner = NULL,
    lease_until = NULL
WHERE operation_id = {p}10 AND number = {p}11";

/// PostgreSQL: [`SAVE`] as one statement with the attempt's event, written when the state
/// changed. The row is locked first (`before`, which the update waits for through its
/// condition) so that the state compared is the one the update replaces. A changed state is
/// always the one written (a state kept is the stored one), so the event binds it.
///
/// Binds: those of [`SAVE`], then 12 the event's detail.
const SAVE_JOURNALED: &str = "\
WITH before AS (SELECT state FROM provider_attempts
    WHERE operation_id = {p}10 AND number = {p}11 FOR UPDATE),
saved AS ({save} AND (SELECT COUNT(*) FROM before) >= 0 RETURNING state),
ev AS (INSERT INTO operation_events (operation_id, at, detail)
    SELECT {p}10, {p}6, {p}12 FROM saved, before WHERE saved.state <> before.state)
SELECT state FROM saved";

/// [`SAVE`] returning the state it left, on either backend.
static PLAIN_SAVE: LazyLock<Template> =
    LazyLock::new(|| Template::cut(&format!("{SAVE} RETURNING state")));

/// [`SAVE_JOURNALED`] with [`SAVE`] in it (PostgreSQL).
static JOURNALED_SAVE: LazyLock<Template> =
    LazyLock::new(|| Template::cut(&SAVE_JOURNALED.replace("{save}", SAVE)));

/// A statement's text cut at its numbered parameters (`{p}N`): the text before each and
/// its number, then the rest.
struct Template {
    pieces: Vec<(String, usize)>,
    tail: String,
}

impl Template {
    fn cut(sql: &str) -> Template {
        let mut pieces = Vec::new();
        let mut rest = sql;
        while let Some(at) = rest.find("{p}") {
            let after = &rest[at + 3..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            pieces.push((rest[..at].to_string(), after[..digits].parse().unwrap_or(0)));
            rest = &after[digits..];
        }
        Template {
            pieces,
            tail: rest.to_string(),
        }
    }
}

/// One attempt's save ([`PLAIN_SAVE`] or [`JOURNALED_SAVE`]) as a statement diesel prepares
/// once per connection and text (a `sql_query` is parsed and planned on every call, which
/// cost PostgreSQL as much as running it). Each parameter of the template is bound where
/// it appears, in order, as both backends number them (a number used twice is bound twice).
struct SaveStatement<'a> {
    template: &'static Template,
    changes: AttemptChanges<'a>,
    operation_id: String,
    /// The event's detail, parameter 12 of [`SAVE_JOURNALED`].
    detail: Option<&'a str>,
}

impl<'a> SaveStatement<'a> {
    fn new(
        template: &'static Template,
        attempt: &'a Attempt,
        detail: Option<&'a str>,
    ) -> anyhow::Result<Self> {
        Ok(SaveStatement {
            template,
            changes: AttemptChanges::new(attempt)?,
            operation_id: attempt.operation_id.to_string(),
            detail,
        })
    }

    /// The states it returned: one, or none if the attempt does not exist.
    fn run(self, conn: &mut DbConn) -> QueryResult<Vec<String>> {
        match conn {
            DbConn::Pg(pg) => self.load(pg),
            DbConn::Sqlite(sqlite) => self.load(sqlite),
        }
    }
}

// The text depends on the template: diesel keeps one prepared statement per text.
impl QueryId for SaveStatement<'_> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<DB> QueryFragment<DB> for SaveStatement<'_>
where
    DB: Backend + HasSqlType<Text> + HasSqlType<BigInt> + HasSqlType<Integer>,
    str: ToSql<Text, DB>,
    String: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
    i32: ToSql<Integer, DB>,
{
    /// The template's text, each parameter bound where it appears (see [`SAVE`] and
    /// [`SAVE_JOURNALED`] for their numbers).
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let c = &self.changes;
        for (text, number) in &self.template.pieces {
            out.push_sql(text);
            match (*number, &self.detail) {
                (1, _) => out.push_bind_param::<Text, _>(c.state)?,
                (2, _) => out.push_bind_param::<Nullable<Text>, _>(&c.acquirer_id)?,
                (3, _) => out.push_bind_param::<Nullable<Text>, _>(&c.failure_code)?,
                (4, _) => out.push_bind_param::<Nullable<Text>, _>(&c.redirect_url)?,
                (5, _) => out.push_bind_param::<Nullable<BigInt>, _>(&c.latency_ms)?,
                (6, _) => out.push_bind_param::<BigInt, _>(&c.updated_at)?,
                (7, _) => out.push_bind_param::<Nullable<BigInt>, _>(&c.next_check_at)?,
                (8, _) => out.push_bind_param::<Nullable<BigInt>, _>(&c.unknown_since)?,
                (9, _) => out.push_bind_param::<Integer, _>(&c.reads)?,
                (10, _) => out.push_bind_param::<Text, _>(&self.operation_id)?,
                (11, _) => out.push_bind_param::<Integer, _>(&c.number)?,
                (12, Some(detail)) => out.push_bind_param::<Text, _>(*detail)?,
                _ => {
                    return Err(diesel::result::Error::QueryBuilderError(
                        format!("the attempt save has no parameter {number}").into(),
                    ))
                }
            }
        }
        out.push_sql(&self.template.tail);
        Ok(())
    }
}

impl Query for SaveStatement<'_> {
    type SqlType = Text;
}

impl RunQueryDsl<PgConnection> for SaveStatement<'_> {}
impl RunQueryDsl<SqliteConnection> for SaveStatement<'_> {}

/// Merges `attempt` into its row ([`SAVE`]) inside the caller's transaction; the state it
/// has after.
fn save_attempt<E: From<StoreError>>(
    conn: &mut DbConn,
    attempt: &Attempt,
) -> Result<String, TxError<E>> {
    let states = SaveStatement::new(&PLAIN_SAVE, attempt, None)
        .map_err(corrupt)?
        .run(conn)?;
    saved_state(states, attempt)
}

/// The state a save left, from the states its statement returned (one, or none if the
/// attempt does not exist, which is a bug).
fn saved_state<E: From<StoreError>>(
    states: Vec<String>,
    attempt: &Attempt,
) -> Result<String, TxError<E>> {
    states.into_iter().next().ok_or_else(|| {
        corrupt(anyhow::anyhow!(
            "attempt {} of operation {} does not exist",
            attempt.number,
            attempt.operation_id
        ))
    })
}

/// The event of a save that took the attempt's state from `before` to `after`, if it did.
fn state_change(
    attempt: &Attempt,
    before: Option<&str>,
    after: &str,
) -> anyhow::Result<Option<NewEvent>> {
    if before == Some(after) {
        return Ok(None);
    }
    let state = AttemptState::parse(after)
        .ok_or_else(|| bad("provider_attempts.state", format!("{after:?}")))?;
    let saved = Attempt {
        state,
        ..attempt.clone()
    };
    NewEvent::attempt(&saved).map(Some)
}

/// [`save_attempt`] with its event when the state changed, inside the caller's transaction;
/// the row is locked (PostgreSQL) and its state read first.
fn save_with_event<E: From<StoreError>>(
    conn: &mut DbConn,
    attempt: &Attempt,
) -> Result<(), TxError<E>> {
    let before = stored_state(conn, attempt)?;
    let after = save_attempt(conn, attempt)?;
    let event = state_change(attempt, before.as_deref(), &after).map_err(corrupt)?;
    write_events(conn, event.as_slice())
}

/// PostgreSQL: [`save_with_event`] as one statement ([`SAVE_JOURNALED`]), on its own.
fn save_journaled(conn: &mut DbConn, attempt: &Attempt) -> Result<(), TxError<StoreError>> {
    let event = NewEvent::attempt(attempt).map_err(corrupt)?;
    let states = SaveStatement::new(&JOURNALED_SAVE, attempt, Some(event.detail()))
        .map_err(corrupt)?
        .run(conn)?;
    saved_state(states, attempt).map(|_| ())
}

/// Merges `attempt` into its row with its event: [`save_journaled`] on PostgreSQL,
/// [`save_with_event`] on SQLite.
fn save_merged(conn: &mut DbConn, attempt: &Attempt) -> Result<(), TxError<StoreError>> {
    match conn {
        DbConn::Pg(_) => save_journaled(conn, attempt),
        DbConn::Sqlite(_) => save_with_event(conn, attempt),
    }
}

/// The stored state of `attempt`'s row, locked until the commit on PostgreSQL.
fn stored_state<E: From<StoreError>>(
    conn: &mut DbConn,
    attempt: &Attempt,
) -> Result<Option<String>, TxError<E>> {
    let row = provider_attempts::table
        .filter(provider_attempts::operation_id.eq(attempt.operation_id.to_string()))
        .filter(provider_attempts::number.eq(number_of(attempt)?))
        .select(provider_attempts::state);
    Ok(match conn {
        DbConn::Pg(pg) => row.for_update().first(pg).optional()?,
        DbConn::Sqlite(_) => row.first(conn).optional()?,
    })
}

/// Whether the operation has an attempt after `number` that was tried.
pub(crate) fn tried_after<E: From<StoreError>>(
    conn: &mut DbConn,
    id: OperationId,
    number: u32,
) -> Result<bool, TxError<E>> {
    let number = i32::try_from(number).map_err(|e| corrupt(e.into()))?;
    let later: i64 = provider_attempts::table
        .filter(provider_attempts::operation_id.eq(id.to_string()))
        .filter(provider_attempts::number.gt(number))
        .filter(provider_attempts::state.ne("skipped"))
        .count()
        .get_result(conn)?;
    Ok(later > 0)
}

fn number_of<E: From<StoreError>>(attempt: &Attempt) -> Result<i32, TxError<E>> {
    i32::try_from(attempt.number).map_err(|e| corrupt(e.into()))
}

/// A discrepancy, unless the same one is recorded (`provider_discrepancies_once`).
///
/// Binds: 1 operation id, 2 provider, 3 reported status, 4 at.
const DISCREPANCY: &str = "\
INSERT INTO provider_discrepancies (operation_id, provider, reported, at)
VALUES ({p}1, {p}2, {p}3, {p}4)
ON CONFLICT (operation_id, provider, reported) DO NOTHING";

/// [`DISCREPANCY`] in the dialect of `conn`'s backend.
fn discrepancy_sql(conn: &DbConn) -> String {
    let placeholder = match conn {
        DbConn::Pg(_) => "$",
        DbConn::Sqlite(_) => "?",
    };
    DISCREPANCY.replace("{p}", placeholder)
}

/// [`CLAIM`] in the dialect of `conn`'s backend.
fn claim_sql(conn: &DbConn) -> String {
    let (placeholder, lock) = match conn {
        DbConn::Pg(_) => ("$", "\n    FOR UPDATE OF a SKIP LOCKED"),
        DbConn::Sqlite(_) => ("?", ""),
    };
    CLAIM.replace("{p}", placeholder).replace("{lock}", lock)
}

/// What one claim asks for.
#[derive(Clone)]
pub(crate) struct Claim {
    pub(crate) provider: String,
    pub(crate) owner: String,
    pub(crate) now: Timestamp,
    pub(crate) lease_until: Timestamp,
    pub(crate) limit: u32,
}

impl AttemptSave {
    /// Hands `result` to whoever holds the answer; a save nobody waits for that failed is
    /// logged.
    fn answer(self, result: Result<(), StoreError>) {
        if !self.awaited {
            if let Err(error) = &result {
                tracing::error!(operation.id = %self.attempt.operation_id,
                    attempt = self.attempt.number, error = %Chain(error),
                    "acquirer answer not written; the reconciler reads it");
            }
        }
        // The caller may have stopped waiting, or never asked; the save stands either way.
        drop(self.reply.send(result));
    }
}

/// `later`, a save of the same attempt queued after `first`, folded into `first` when both
/// give it the same answered state (`ok`, `declined`, `unavailable`): the row then ends as
/// [`SAVE`] would leave it after both, with one statement and at most one event, whose time
/// is the later save's (the earlier one's when written one after the other; a creation's
/// answer and the acquirer's notification of it, the usual pair, are milliseconds apart).
/// `None` when they cannot be folded.
fn folded(first: &Attempt, later: &Attempt) -> Option<Attempt> {
    let answered = matches!(
        first.state,
        AttemptState::Ok | AttemptState::Declined | AttemptState::Unavailable
    );
    let same = (first.operation_id, first.number) == (later.operation_id, later.number);
    if !(same && answered && first.state == later.state) {
        return None;
    }
    // As SAVE merges: the first acquirer id known is kept; a later failure code, page or
    // latency replaces an earlier one; the rest is the later save's.
    Some(Attempt {
        acquirer_id: first.acquirer_id.clone().or(later.acquirer_id.clone()),
        failure_code: later.failure_code.clone().or(first.failure_code.clone()),
        redirect_url: later.redirect_url.clone().or(first.redirect_url.clone()),
        latency_ms: later.latency_ms.or(first.latency_ms),
        ..later.clone()
    })
}

/// What one transaction writes for `saves` (in key order, saves of one attempt in the order
/// they were queued): each run of saves of one attempt folded where [`folded`] allows.
fn statements(saves: &[AttemptSave]) -> Vec<Attempt> {
    let mut written: Vec<Attempt> = Vec::with_capacity(saves.len());
    for save in saves {
        if let Some(last) = written.last_mut() {
            if let Some(both) = folded(last, &save.attempt) {
                *last = both;
                continue;
            }
        }
        written.push(save.attempt.clone());
    }
    written
}

fn attempts_from(rows: Vec<AttemptRow>) -> anyhow::Result<Vec<Attempt>> {
    rows.into_iter().map(AttemptRow::into_attempt).collect()
}

impl Database {
    /// See [`OperationStore::save_attempt`](domain::ports::OperationStore::save_attempt).
    /// The writers of an attempt (the creation call, notifications, the reconciler) each
    /// hold a copy that may be older than the row, so [`SAVE`] merges rather than replaces:
    /// what the acquirer said (its id, failure code, page, a known state) is never lost.
    ///
    /// A save that changes the attempt's state writes its event (see `crate::journal`); one
    /// that changes only what else is known of it (a read, the next check) writes none.
    ///
    /// Queued with the saves no caller waits for ([`Database::queue_attempt`]) and answered
    /// once the transaction that wrote it committed: a notification's save and the creation's
    /// save of the same payment, arriving together, share one commit.
    pub(crate) async fn update_attempt(&self, attempt: &Attempt) -> Result<(), StoreError> {
        let attempt = attempt.clone();
        self.enqueue_and_wait(
            |db| &db.inner.attempt_saves,
            |reply| AttemptSave {
                attempt,
                reply,
                awaited: true,
            },
            SAVE_WRITERS,
            MAX_SAVES,
            Database::save_queued,
            "an attempt save",
        )
        .await
    }

    /// See [`OperationStore::save_attempt_soon`](domain::ports::OperationStore::save_attempt_soon):
    /// queued, and written by a blocking writer with whatever else is queued, many saves to
    /// one transaction (see `crate::group`). A writer started on the blocking pool runs to
    /// the end of the queue even while the process stops, so only a crash loses a save.
    /// Returns whether it was committed, for whoever asks (once its transaction ended).
    pub(crate) fn queue_attempt(&self, attempt: Attempt) -> SaveCommitted {
        let (reply, answer) = oneshot::channel();
        self.enqueue(
            |db| &db.inner.attempt_saves,
            AttemptSave {
                attempt,
                reply,
                awaited: false,
            },
            SAVE_WRITERS,
            MAX_SAVES,
            Database::save_queued,
        );
        // A writer that panicked drops the sender: not written, as far as anyone knows.
        async move { matches!(answer.await, Ok(Ok(()))) }
            .boxed()
            .shared()
    }

    /// Writes queued saves in one transaction, in key order (so two writers lock rows in one
    /// order), saves of one attempt in the order they were queued and folded where they can
    /// be ([`statements`]). If that fails, each is written alone, unfolded, so one bad save
    /// fails for itself only; once the database is found unavailable, the rest hear that at
    /// once rather than wait for a connection each. Each waiting caller is answered after
    /// the commit that wrote its save.
    fn save_queued(&self, mut saves: Vec<AttemptSave>) {
        if saves.len() < MAX_SAVES && saves.iter().all(|s| !s.awaited) {
            std::thread::sleep(LINGER);
            let room = MAX_SAVES - saves.len();
            saves.extend(self.inner.attempt_saves.take(room));
        }
        saves.sort_by_key(|s| (s.attempt.operation_id, s.attempt.number));
        if saves.len() > 1 {
            let written = statements(&saves);
            let together = self.retrying(true, |conn| {
                write_tx(conn, |conn| {
                    written.iter().try_for_each(|a| save_merged(conn, a))
                })
            });
            match together {
                Ok(()) => {
                    for save in saves {
                        save.answer(Ok(()));
                    }
                    return;
                }
                // The database is away, or the group's COMMIT is unknown: not written again.
                Err(StoreError::Unavailable(why)) => {
                    let why = format!("{}", Chain(why.as_ref()));
                    for save in saves {
                        save.answer(Err(StoreError::Unavailable(why.clone().into())));
                    }
                    return;
                }
                Err(error) => tracing::debug!(error = %Chain(&error), saves = saves.len(),
                    "queued attempt saves failed together; each is written alone"),
            }
        }
        let mut unavailable: Option<String> = None;
        for save in saves {
            if let Some(why) = &unavailable {
                save.answer(Err(StoreError::Unavailable(why.clone().into())));
                continue;
            }
            // One statement on PostgreSQL: no BEGIN and COMMIT around it.
            let alone: Result<(), StoreError> = self.retrying(true, |conn| {
                statement_tx(conn, |conn| save_merged(conn, &save.attempt))
            });
            if let Err(StoreError::Unavailable(why)) = &alone {
                unavailable = Some(format!("{}", Chain(why.as_ref())));
            }
            save.answer(alone);
        }
    }

    /// See [`OperationStore::add_attempts`](domain::ports::OperationStore::add_attempts).
    /// Moving on to a provider to call needs the finished attempt still `sent` (no answer
    /// heard for it from anywhere: a notification or a read that found the payment would
    /// have changed it) and the operation still processing; the operation then records the
    /// provider and route it is now at.
    pub(crate) async fn append_attempts(
        &self,
        finished: &Attempt,
        next: &[Attempt],
    ) -> Result<bool, StoreError> {
        let finished = finished.clone();
        let next = next.to_vec();
        let called = next.iter().find(|a| a.was_tried()).cloned();
        self.write(move |conn| {
            // Locks in the order attempt row, then operation row.
            let before = stored_state(conn, &finished)?;
            if let Some(called) = &called {
                if before.as_deref() != Some("sent") {
                    return Ok(false);
                }
                let moved = diesel::update(
                    operations::table
                        .filter(operations::id.eq(finished.operation_id.to_string()))
                        .filter(operations::status.eq(PROCESSING)),
                )
                .set((
                    operations::provider.eq(&called.provider),
                    operations::route_id.eq(called.route_id),
                ))
                .execute(conn)?;
                if moved == 0 {
                    return Ok(false);
                }
            }
            let after = save_attempt(conn, &finished)?;
            for attempt in &next {
                insert_attempt(conn, attempt)?;
            }
            let events = state_change(&finished, before.as_deref(), &after)
                .and_then(|change| {
                    change
                        .into_iter()
                        .map(Ok)
                        .chain(next.iter().map(NewEvent::attempt))
                        .collect::<anyhow::Result<Vec<_>>>()
                })
                .map_err(corrupt)?;
            write_events(conn, &events)?;
            Ok(true)
        })
        .await
    }

    /// See [`OperationStore::attempts`](domain::ports::OperationStore::attempts).
    pub(crate) async fn read_attempts(&self, id: OperationId) -> Result<Vec<Attempt>, StoreError> {
        self.read(move |conn| {
            let rows: Vec<AttemptRow> = provider_attempts::table
                .filter(provider_attempts::operation_id.eq(id.to_string()))
                .order(provider_attempts::number.asc())
                .select(AttemptRow::as_select())
                .load(conn)?;
            attempts_from(rows).map_err(corrupt)
        })
        .await
    }

    /// See [`OperationStore::claim_checks`](domain::ports::OperationStore::claim_checks).
    pub(crate) async fn lease_checks(&self, claim: Claim) -> Result<Vec<Attempt>, StoreError> {
        // One statement: on PostgreSQL without BEGIN/COMMIT, on SQLite in a write transaction.
        let mut claimed = self
            .write_one(move |conn| {
                let c = &claim;
                let rows: Vec<AttemptRow> = diesel::sql_query(claim_sql(conn))
                    .bind::<Text, _>(&c.owner)
                    .bind::<BigInt, _>(c.lease_until.millis())
                    .bind::<Text, _>(&c.provider)
                    .bind::<BigInt, _>(c.now.millis())
                    .bind::<BigInt, _>(i64::from(c.limit))
                    .load(conn)?;
                attempts_from(rows).map_err(corrupt::<StoreError>)
            })
            .await?;
        // RETURNING keeps no order: oldest check first, as selected.
        claimed.sort_by_key(|a| (a.next_check_at, a.operation_id, a.number));
        Ok(claimed)
    }

    /// See [`OperationStore::record_discrepancy`](domain::ports::OperationStore::record_discrepancy).
    pub(crate) async fn insert_discrepancy(
        &self,
        discrepancy: &Discrepancy,
    ) -> Result<(), StoreError> {
        let discrepancy = discrepancy.clone();
        let event = NewEvent::discrepancy(&discrepancy).map_err(StoreError::Other)?;
        self.write(move |conn| {
            // The same report again (an acquirer retries its notifications) is the same
            // discrepancy: it is recorded, counted and shown once.
            let d = &discrepancy;
            let inserted = diesel::sql_query(discrepancy_sql(conn))
                .bind::<Text, _>(d.operation_id.to_string())
                .bind::<Text, _>(&d.provider)
                .bind::<Text, _>(&d.reported)
                .bind::<BigInt, _>(d.at.millis())
                .execute(conn)?;
            match inserted {
                0 => Ok(()),
                _ => write_events(conn, std::slice::from_ref(&event)),
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use domain::testkit::{at, id};

    use super::*;

    fn save(n: u128, state: AttemptState, changes: impl FnOnce(&mut Attempt)) -> AttemptSave {
        let mut attempt = Attempt::sent(id(n), 1, 1, "bank", at(0), at(5));
        attempt.state = state;
        changes(&mut attempt);
        AttemptSave {
            attempt,
            reply: oneshot::channel().0,
            awaited: false,
        }
    }

    #[test]
    fn a_creations_answer_and_the_notification_of_it_are_one_statement() {
        let creation = save(1, AttemptState::Ok, |a| {
            a.acquirer_id = Some("acq_1".into());
            a.redirect_url = Some("https://bank.example/pay/acq_1".into());
            a.latency_ms = Some(12);
            a.updated_at = at(1);
            a.next_check_at = Some(at(61));
        });
        let notification = save(1, AttemptState::Ok, |a| {
            a.acquirer_id = Some("acq_1".into());
            a.updated_at = at(2);
            a.next_check_at = Some(at(62));
        });

        let written = statements(&[creation, notification]);

        assert_eq!(written.len(), 1);
        let one = &written[0];
        assert_eq!(one.acquirer_id.as_deref(), Some("acq_1"));
        assert_eq!(
            one.redirect_url.as_deref(),
            Some("https://bank.example/pay/acq_1")
        );
        assert_eq!(one.latency_ms, Some(12));
        assert_eq!((one.updated_at, one.next_check_at), (at(2), Some(at(62))));
    }

    #[test]
    fn the_first_acquirer_id_stays_and_a_later_failure_code_replaces_an_earlier_one() {
        let first = save(1, AttemptState::Declined, |a| {
            a.acquirer_id = Some("acq_1".into());
            a.failure_code = Some("insufficient_funds".into());
        });
        let later = save(1, AttemptState::Declined, |a| {
            a.acquirer_id = Some("acq_other".into());
            a.failure_code = Some("card_declined".into());
        });

        let written = statements(&[first, later]);

        assert_eq!(written.len(), 1);
        assert_eq!(written[0].acquirer_id.as_deref(), Some("acq_1"));
        assert_eq!(written[0].failure_code.as_deref(), Some("card_declined"));
    }

    #[test]
    fn saves_that_change_the_state_differently_or_of_other_attempts_stay_apart() {
        let states = |written: Vec<Attempt>| -> Vec<(OperationId, AttemptState)> {
            written.iter().map(|a| (a.operation_id, a.state)).collect()
        };
        // Each change of state is its own event: unknown, then ok, are two statements.
        let apart = statements(&[
            save(1, AttemptState::Unknown, |_| {}),
            save(1, AttemptState::Ok, |_| {}),
        ]);
        assert_eq!(
            states(apart),
            vec![(id(1), AttemptState::Unknown), (id(1), AttemptState::Ok)]
        );
        // Not answered: nothing to fold.
        let sent = statements(&[
            save(1, AttemptState::Sent, |_| {}),
            save(1, AttemptState::Sent, |_| {}),
        ]);
        assert_eq!(sent.len(), 2);
        // Other attempts.
        let others = statements(&[
            save(1, AttemptState::Ok, |_| {}),
            save(2, AttemptState::Ok, |_| {}),
            save(2, AttemptState::Ok, |_| {}),
        ]);
        assert_eq!(
            states(others),
            vec![(id(1), AttemptState::Ok), (id(2), AttemptState::Ok)]
        );
    }
}
