//! PostgreSQL: attempt records written together, many to a statement (group commit, see
//! `crate::group`).
//!
//! Each delivery's record queues and awaits its answer; up to [`WRITERS`] blocking writers
//! take everything queued (up to [`MAX_GROUP`]) and write it with [`RecordMany`]: one
//! statement updates the outbox rows still leased by their recorder, and inserts the attempts
//! of exactly those rows (an operation's timeline reads its callback attempts from there).
//! Each record is answered after that statement's commit: `true` if its row was updated,
//! `false` if its recorder no longer held the lease.
//!
//! If the statement fails as a whole (an attempt already logged, say), each record is written
//! again alone with [`Recorded`], so one bad row answers for itself only. A callback recorded
//! twice in one group (never by the worker, which records each claim once) has its later
//! records written alone after the group, as if they had come after it.

use std::collections::HashSet;

use diesel::pg::{Pg, PgConnection};
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text};
use domain::ports::StoreError;

use crate::binds::Binds;
use crate::conn::DbConn;
use crate::database::Database;
use crate::jobs::{RecordJob, Recorded};
use crate::work::{corrupt, TxError};

/// Most writers at once: one writing while the next group gathers, and one more.
const WRITERS: usize = 2;

/// Most records in one statement.
const MAX_GROUP: usize = 256;

impl Database {
    /// Writes `recorded` in the next group; `Ok(false)` if its owner no longer held the lease.
    pub(crate) async fn record_grouped(&self, recorded: Recorded) -> Result<bool, StoreError> {
        self.enqueue_and_wait(
            |db| &db.inner.records,
            |reply| RecordJob { recorded, reply },
            WRITERS,
            MAX_GROUP,
            Database::write_group,
            "the grouped attempt record",
        )
        .await
    }

    /// Writes `jobs` with one statement and answers each; see the module docs.
    fn write_group(&self, mut jobs: Vec<RecordJob>) {
        // In key order, so two groups lock their outbox rows in one order.
        jobs.sort_by(|a, b| a.recorded.key.cmp(&b.recorded.key));
        let mut keys = HashSet::new();
        let (group, later): (Vec<RecordJob>, Vec<RecordJob>) = jobs
            .into_iter()
            .partition(|job| keys.insert(job.recorded.key.clone()));
        if group.len() == 1 {
            self.answer_alone(group);
        } else {
            let written = self.retrying(true, |conn| -> Result<Vec<String>, TxError<StoreError>> {
                let DbConn::Pg(pg) = conn else {
                    return Err(corrupt(anyhow::anyhow!("a PostgreSQL statement on SQLite")));
                };
                Ok(RecordMany::new(&group).load::<String>(pg)?)
            });
            match written {
                Ok(updated) => {
                    let updated: HashSet<String> = updated.into_iter().collect();
                    for job in group {
                        let done = updated.contains(&job.recorded.key);
                        let _ = job.reply.send(Ok(done));
                    }
                }
                // The database is away, or the statement's outcome is unknown: not written
                // again (a record written once and again would answer "lease lost").
                Err(StoreError::Unavailable(why)) => {
                    let why = format!("{}", domain::ports::Chain(why.as_ref()));
                    for job in group {
                        let _ = job
                            .reply
                            .send(Err(StoreError::Unavailable(why.clone().into())));
                    }
                }
                Err(error) => {
                    tracing::debug!(error = %domain::ports::Chain(&error), records = group.len(),
                        "grouped attempt records failed; each is written alone");
                    self.answer_alone(group);
                }
            }
        }
        self.answer_alone(later);
    }

    /// Writes each of `jobs` with a statement of its own and answers it.
    fn answer_alone(&self, jobs: Vec<RecordJob>) {
        for job in jobs {
            let answer = self.record_alone(&job.recorded);
            let _ = job.reply.send(answer);
        }
    }

    /// One record as its own statement, with the exact answer for it.
    pub(crate) fn record_alone(&self, recorded: &Recorded) -> Result<bool, StoreError> {
        self.retrying(true, |conn| match conn {
            DbConn::Pg(pg) => Ok(recorded.clone().execute(pg)? == 1),
            DbConn::Sqlite(_) => Err(corrupt(anyhow::anyhow!("a PostgreSQL statement on SQLite"))),
        })
    }
}

/// The one-record statement (prepared once per connection); it inserts the attempt and its
/// log entry only if the lease still matched, so it affects one row or none.
pub(crate) struct RecordedId;

impl QueryId for Recorded {
    type QueryId = RecordedId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl QueryFragment<Pg> for Recorded {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH lease AS (UPDATE callback_outbox SET state = ");
        out.push_bind_param::<Text, _>(&self.state)?;
        out.push_sql(", attempts = attempts + 1, failures_in_run = failures_in_run + ");
        out.push_bind_param::<Integer, _>(&self.failed)?;
        out.push_sql(", next_attempt_at = ");
        out.push_bind_param::<Nullable<BigInt>, _>(&self.next)?;
        out.push_sql(", last_error = ");
        out.push_bind_param::<Nullable<Text>, _>(&self.error)?;
        out.push_sql(", lease_owner = NULL, lease_until = NULL, updated_at = ");
        out.push_bind_param::<BigInt, _>(&self.updated_at)?;
        out.push_sql(" WHERE id = ");
        out.push_bind_param::<Text, _>(&self.key)?;
        out.push_sql(" AND lease_owner = ");
        out.push_bind_param::<Text, _>(&self.owner)?;
        out.push_sql(
            " RETURNING id) INSERT INTO callback_attempts \
             (callback_id, attempt, at, duration_ms, http_status, error) SELECT id, ",
        );
        Binds::new(&mut out)
            .bind::<Integer, _>(&self.attempt)?
            .bind::<BigInt, _>(&self.at)?
            .bind::<BigInt, _>(&self.duration_ms)?
            .bind::<Nullable<Integer>, _>(&self.http_status)?
            .bind::<Nullable<Text>, _>(&self.attempt_error)?;
        out.push_sql(" FROM lease");
        Ok(())
    }
}

impl RunQueryDsl<PgConnection> for Recorded {}

/// Many records as one statement: one array parameter per field, unnested into rows, so its
/// text is the same for any number of records and it is prepared once per connection.
/// Returns the keys of the outbox rows it updated; only those rows get their attempt and
/// log entry. Keys MUST be distinct.
struct RecordMany<'a> {
    key: Vec<&'a str>,
    owner: Vec<&'a str>,
    state: Vec<&'static str>,
    failed: Vec<i32>,
    next: Vec<Option<i64>>,
    error: Vec<Option<&'a str>>,
    updated_at: Vec<i64>,
    attempt: Vec<i32>,
    at: Vec<i64>,
    duration_ms: Vec<i64>,
    http_status: Vec<Option<i32>>,
    attempt_error: Vec<Option<&'a str>>,
}

impl<'a> RecordMany<'a> {
    fn new(jobs: &'a [RecordJob]) -> Self {
        let all = || jobs.iter().map(|job| &job.recorded);
        Self {
            key: all().map(|r| r.key.as_str()).collect(),
            owner: all().map(|r| r.owner.as_str()).collect(),
            state: all().map(|r| r.state).collect(),
            failed: all().map(|r| r.failed).collect(),
            next: all().map(|r| r.next).collect(),
            error: all().map(|r| r.error.as_deref()).collect(),
            updated_at: all().map(|r| r.updated_at).collect(),
            attempt: all().map(|r| r.attempt).collect(),
            at: all().map(|r| r.at).collect(),
            duration_ms: all().map(|r| r.duration_ms).collect(),
            http_status: all().map(|r| r.http_status).collect(),
            attempt_error: all().map(|r| r.attempt_error.as_deref()).collect(),
        }
    }
}

/// The statement's text is the same for any number of records.
struct RecordManyId;

impl QueryId for RecordMany<'_> {
    type QueryId = RecordManyId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl QueryFragment<Pg> for RecordMany<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH req AS (SELECT * FROM unnest(");
        Binds::new(&mut out)
            .bind::<Array<Text>, _>(&self.key)?
            .bind::<Array<Text>, _>(&self.owner)?
            .bind::<Array<Text>, _>(&self.state)?
            .bind::<Array<Integer>, _>(&self.failed)?
            .bind::<Array<Nullable<BigInt>>, _>(&self.next)?
            .bind::<Array<Nullable<Text>>, _>(&self.error)?
            .bind::<Array<BigInt>, _>(&self.updated_at)?
            .bind::<Array<Integer>, _>(&self.attempt)?
            .bind::<Array<BigInt>, _>(&self.at)?
            .bind::<Array<BigInt>, _>(&self.duration_ms)?
            .bind::<Array<Nullable<Integer>>, _>(&self.http_status)?
            .bind::<Array<Nullable<Text>>, _>(&self.attempt_error)?;
        out.push_sql(
            ") AS r (callback_id, lease_owner, new_state, failed, next_at, last_error, \
                 updated_at, attempt, attempt_at, duration_ms, http_status, attempt_error)), \
             lease AS (UPDATE callback_outbox o SET state = r.new_state, \
                 attempts = o.attempts + 1, failures_in_run = o.failures_in_run + r.failed, \
                 next_attempt_at = r.next_at, last_error = r.last_error, \
                 lease_owner = NULL, lease_until = NULL, updated_at = r.updated_at \
                 FROM req r WHERE o.id = r.callback_id AND o.lease_owner = r.lease_owner \
                 RETURNING o.id), \
             att AS (INSERT INTO callback_attempts \
                 (callback_id, attempt, at, duration_ms, http_status, error) \
                 SELECT r.callback_id, r.attempt, r.attempt_at, r.duration_ms, r.http_status, \
                     r.attempt_error \
                 FROM req r JOIN lease l ON l.id = r.callback_id) \
             SELECT l.id FROM lease l",
        );
        Ok(())
    }
}

impl Query for RecordMany<'_> {
    type SqlType = Text;
}

impl RunQueryDsl<PgConnection> for RecordMany<'_> {}
