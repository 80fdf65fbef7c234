//! Provider attempts: written with their operation, completed after each call, leased to the
//! reconciler; and the discrepancies providers report.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use domain::attempt::{Attempt, Discrepancy};
use domain::ports::StoreError;
use domain::{OperationId, Timestamp};

use crate::conn::DbConn;
use crate::database::Database;
use crate::rows::{AttemptChanges, AttemptRow, NewAttemptRow, NewDiscrepancyRow};
use crate::schema::{operations, provider_attempts, provider_discrepancies};
use crate::work::{corrupt, TxError};

use super::operations::PROCESSING;

/// Writes a new attempt inside the caller's transaction (after its operation).
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
/// 7 next check, 8 unknown since, 9 reads, 10 operation id, 11 number.
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

/// Merges `attempt` into its row ([`SAVE`]) inside the caller's transaction.
fn save_attempt<E: From<StoreError>>(
    conn: &mut DbConn,
    attempt: &Attempt,
) -> Result<(), TxError<E>> {
    let c = AttemptChanges::new(attempt).map_err(corrupt)?;
    let changed = diesel::sql_query(save_sql(conn))
        .bind::<Text, _>(c.state)
        .bind::<Nullable<Text>, _>(c.acquirer_id)
        .bind::<Nullable<Text>, _>(c.failure_code)
        .bind::<Nullable<Text>, _>(c.redirect_url)
        .bind::<Nullable<BigInt>, _>(c.latency_ms)
        .bind::<BigInt, _>(c.updated_at)
        .bind::<Nullable<BigInt>, _>(c.next_check_at)
        .bind::<Nullable<BigInt>, _>(c.unknown_since)
        .bind::<Integer, _>(c.reads)
        .bind::<Text, _>(attempt.operation_id.to_string())
        .bind::<Integer, _>(c.number)
        .execute(conn)?;
    if changed == 0 {
        return Err(corrupt(anyhow::anyhow!(
            "attempt {} of operation {} does not exist",
            attempt.number,
            attempt.operation_id
        )));
    }
    Ok(())
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

/// [`SAVE`] in the dialect of `conn`'s backend.
fn save_sql(conn: &DbConn) -> String {
    let placeholder = match conn {
        DbConn::Pg(_) => "$",
        DbConn::Sqlite(_) => "?",
    };
    SAVE.replace("{p}", placeholder)
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

fn attempts_from(rows: Vec<AttemptRow>) -> anyhow::Result<Vec<Attempt>> {
    rows.into_iter().map(AttemptRow::into_attempt).collect()
}

impl Database {
    /// See [`OperationStore::save_attempt`](domain::ports::OperationStore::save_attempt).
    /// The writers of an attempt (the creation call, notifications, the reconciler) each
    /// hold a copy that may be older than the row, so [`SAVE`] merges rather than replaces:
    /// what the acquirer said (its id, failure code, page, a known state) is never lost.
    pub(crate) async fn update_attempt(&self, attempt: &Attempt) -> Result<(), StoreError> {
        let attempt = attempt.clone();
        self.write_one(move |conn| save_attempt(conn, &attempt))
            .await
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
            if let Some(called) = &called {
                // Locks in the order attempt row, then operation row.
                if stored_state(conn, &finished)?.as_deref() != Some("sent") {
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
            save_attempt(conn, &finished)?;
            for attempt in &next {
                insert_attempt(conn, attempt)?;
            }
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
        self.write_one(move |conn| {
            // The same report again (an acquirer retries its notifications) is the same
            // discrepancy: it is recorded and counted once.
            let inserted = diesel::insert_into(provider_discrepancies::table)
                .values(NewDiscrepancyRow::new(&discrepancy))
                .execute(conn);
            match inserted {
                Ok(_)
                | Err(diesel::result::Error::DatabaseError(
                    diesel::result::DatabaseErrorKind::UniqueViolation,
                    _,
                )) => Ok(()),
                Err(error) => Err(error.into()),
            }
        })
        .await
    }
}
