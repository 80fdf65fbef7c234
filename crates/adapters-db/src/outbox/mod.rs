//! `CallbackOutbox`: leases so each callback is sent by one process, and the attempt log.
//!
//! The outbox is keyed by `id`: an operation's own callback has the operation's id, a
//! refund's callback the refund's id (its `operation_id` is then the refunded deposit's).

mod grouped;
mod held;
mod log;

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Text};
use domain::callback::{CallbackAttempt, CallbackState, DisputeChange};
use domain::ports::{
    AttemptResult, CallbackOutbox, CallbackStatus, HoldOutcome, PendingCallback, RetryOutcome,
    StoreError,
};
use domain::{OperationId, RefundId, Timestamp};

use crate::conn::DbConn;
use crate::database::{Backend, Database};
use crate::jobs::Recorded;
use crate::rows::{self, bad};
use crate::schema::{callback_attempts, callback_outbox, disputes, refunds};
use crate::work::{decode_all, TxError};
pub(crate) use held::release_merchant;

/// A claimed callback as read back.
#[derive(Queryable, Selectable, QueryableByName)]
#[diesel(table_name = callback_outbox)]
struct ClaimRow {
    operation_id: String,
    refund_id: Option<String>,
    dispute_id: Option<String>,
    change_id: Option<String>,
    merchant_id: String,
    direction: String,
    url: String,
    body: String,
    attempts: i32,
    failures_in_run: i32,
}

/// The outbox key of a callback: its id ([`domain::callback::callback_id`]).
pub(crate) fn callback_key(
    operation_id: OperationId,
    refund_id: Option<RefundId>,
    dispute: Option<DisputeChange>,
) -> String {
    domain::callback::callback_id(&operation_id, refund_id.as_ref(), dispute.as_ref())
}

/// A stored dispute change of the outbox: both columns or neither.
pub(crate) fn dispute_of(
    dispute: Option<&str>,
    change: Option<&str>,
) -> anyhow::Result<Option<DisputeChange>> {
    match (dispute, change) {
        (None, None) => Ok(None),
        (Some(dispute), Some(change)) => Ok(Some(DisputeChange {
            dispute_id: rows::parse(
                "callback_outbox.dispute_id",
                dispute,
                domain::DisputeId::parse,
            )?,
            change_id: uuid::Uuid::parse_str(change)
                .map_err(|e| bad("callback_outbox.change_id", e))?,
        })),
        _ => Err(bad(
            "callback_outbox.change_id",
            "a dispute and its change come together",
        )),
    }
}

/// One of an operation's callbacks, by its outbox key: the operation's own, a refund's or a
/// dispute change's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallbackOwner {
    pub(crate) key: String,
    pub(crate) refund_id: Option<RefundId>,
    pub(crate) dispute: Option<DisputeChange>,
}

/// The callbacks operation `id` can have, by key: its own (its id), each of its refunds'
/// (their ids) and each change of its disputes' (found by the dispute). The outbox is not
/// indexed by `operation_id` (one index less to write each time a callback is queued or
/// recorded); the refunds are found by theirs.
pub(crate) fn keys_of_operation(
    conn: &mut DbConn,
    id: OperationId,
) -> Result<Vec<CallbackOwner>, TxError<StoreError>> {
    let refund_ids: Vec<String> = refunds::table
        .filter(refunds::operation_id.eq(id.to_string()))
        .select(refunds::id)
        .load(conn)?;
    let changes: Vec<(String, Option<String>, Option<String>)> = callback_outbox::table
        .filter(
            callback_outbox::dispute_id.eq_any(
                disputes::table
                    .filter(disputes::operation_id.eq(id.to_string()))
                    .select(disputes::id.nullable()),
            ),
        )
        .select((
            callback_outbox::id,
            callback_outbox::dispute_id,
            callback_outbox::change_id,
        ))
        .load(conn)?;
    let mut owners = vec![CallbackOwner {
        key: id.to_string(),
        refund_id: None,
        dispute: None,
    }];
    for refund in refund_ids {
        owners.push(CallbackOwner {
            refund_id: refund_of(Some(&refund)).map_err(crate::work::corrupt)?,
            key: refund,
            dispute: None,
        });
    }
    for (key, dispute, change) in changes {
        owners.push(CallbackOwner {
            key,
            refund_id: None,
            dispute: dispute_of(dispute.as_deref(), change.as_deref())
                .map_err(crate::work::corrupt)?,
        });
    }
    Ok(owners)
}

/// A stored `refund_id` of the outbox.
pub(crate) fn refund_of(text: Option<&str>) -> anyhow::Result<Option<RefundId>> {
    text.map(|t| rows::refund_id("callback_outbox.refund_id", t))
        .transpose()
}

/// A stored count (attempts, failures) as the domain counts it.
pub(crate) fn count(column: &str, value: i32) -> anyhow::Result<u32> {
    u32::try_from(value).map_err(|_| bad(column, value))
}

impl ClaimRow {
    fn into_pending(self) -> anyhow::Result<PendingCallback> {
        Ok(PendingCallback {
            operation_id: rows::operation_id("callback_outbox.operation_id", &self.operation_id)?,
            refund_id: refund_of(self.refund_id.as_deref())?,
            dispute: dispute_of(self.dispute_id.as_deref(), self.change_id.as_deref())?,
            merchant_id: rows::merchant_id("callback_outbox.merchant_id", &self.merchant_id)?,
            direction: rows::direction("callback_outbox.direction", &self.direction)?,
            url: self.url,
            body: self.body,
            attempt: count("callback_outbox.attempts", self.attempts)? + 1,
            failures_in_run: count("callback_outbox.failures_in_run", self.failures_in_run)?,
        })
    }
}

/// PostgreSQL: due rows that another claimer has locked are skipped, not waited for, and the
/// lease condition is re-checked on the locked row, so each row goes to one claimer.
const PG_CLAIM: &str = "\
UPDATE callback_outbox SET lease_owner = $1, lease_until = $2
WHERE id IN (
    SELECT id FROM callback_outbox
    WHERE state = 'pending' AND next_attempt_at <= $3
      AND (lease_until IS NULL OR lease_until < $3)
    ORDER BY next_attempt_at
    LIMIT $4
    FOR UPDATE SKIP LOCKED)
RETURNING operation_id, refund_id, dispute_id, change_id, merchant_id, direction, url, body,
    attempts, failures_in_run";

fn claim(
    conn: &mut DbConn,
    owner: &str,
    now: i64,
    until: i64,
    limit: i64,
) -> Result<Vec<ClaimRow>, TxError<StoreError>> {
    use crate::schema::callback_outbox::dsl::*;
    match conn {
        DbConn::Pg(pg) => Ok(diesel::sql_query(PG_CLAIM)
            .bind::<Text, _>(owner)
            .bind::<BigInt, _>(until)
            .bind::<BigInt, _>(now)
            .bind::<BigInt, _>(limit)
            .load(pg)?),
        // SQLite: the caller's BEGIN IMMEDIATE makes this select-then-lease atomic.
        DbConn::Sqlite(lite) => {
            // A literal, so SQLite's planner can use the partial index `WHERE state = 'pending'`.
            let ids: Vec<String> = callback_outbox
                .filter(sql::<Bool>("state = 'pending'"))
                .filter(next_attempt_at.le(now))
                .filter(lease_until.is_null().or(lease_until.lt(now)))
                .order(next_attempt_at.asc())
                .limit(limit)
                .select(id)
                .load(lite)?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            diesel::update(callback_outbox.filter(id.eq_any(&ids)))
                .set((lease_owner.eq(owner), lease_until.eq(until)))
                .execute(lite)?;
            Ok(callback_outbox
                .filter(id.eq_any(&ids))
                .order(next_attempt_at.asc())
                .select(ClaimRow::as_select())
                .load(lite)?)
        }
    }
}

/// A callback as an operator sees it, as stored.
#[derive(Queryable, Selectable)]
#[diesel(table_name = callback_outbox)]
pub(crate) struct StatusRow {
    operation_id: String,
    refund_id: Option<String>,
    dispute_id: Option<String>,
    change_id: Option<String>,
    merchant_id: String,
    url: String,
    state: String,
    attempts: i32,
    next_attempt_at: Option<i64>,
    last_error: Option<String>,
}

/// A stored callback state.
pub(crate) fn state_from(text: &str) -> anyhow::Result<CallbackState> {
    CallbackState::parse(text).ok_or_else(|| bad("callback_outbox.state", format!("{text:?}")))
}

impl StatusRow {
    pub(crate) fn into_status(self) -> anyhow::Result<CallbackStatus> {
        Ok(CallbackStatus {
            operation_id: rows::operation_id("callback_outbox.operation_id", &self.operation_id)?,
            refund_id: refund_of(self.refund_id.as_deref())?,
            dispute: dispute_of(self.dispute_id.as_deref(), self.change_id.as_deref())?,
            merchant_id: rows::merchant_id("callback_outbox.merchant_id", &self.merchant_id)?,
            url: self.url,
            state: state_from(&self.state)?,
            attempts: count("callback_outbox.attempts", self.attempts)?,
            next_attempt_at: self.next_attempt_at.map(Timestamp::from_millis),
            last_error: self.last_error,
        })
    }
}

/// What an attempt leaves behind: state, next time, whether it counts as a failure, error.
fn after_attempt(
    attempt: &CallbackAttempt,
    result: &AttemptResult,
) -> (&'static str, Option<i64>, i32, Option<String>) {
    let failure = attempt
        .error
        .clone()
        .or_else(|| attempt.http_status.map(|s| format!("HTTP {s}")));
    match result {
        AttemptResult::Delivered => ("delivered", None, 0, None),
        AttemptResult::RetryAt(at) => ("pending", Some(at.millis()), 1, failure),
        AttemptResult::Failed(reason) => ("failed", None, 1, Some(reason.clone())),
    }
}

#[async_trait]
impl CallbackOutbox for Database {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn claim_due(
        &self,
        owner: &str,
        now: Timestamp,
        lease_until: Timestamp,
        limit: u32,
    ) -> Result<Vec<PendingCallback>, StoreError> {
        let owner = owner.to_string();
        // On PostgreSQL the claim is one statement (no BEGIN/COMMIT round trips); on SQLite
        // it is a select then an update inside one write transaction.
        self.write_one(move |conn| {
            let (now, until) = (now.millis(), lease_until.millis());
            let claimed = claim(conn, &owner, now, until, i64::from(limit))?;
            decode_all(claimed, ClaimRow::into_pending)
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self, attempt, result), fields(operation.id = %attempt.operation_id))]
    async fn record_attempt(
        &self,
        owner: &str,
        attempt: &CallbackAttempt,
        result: &AttemptResult,
    ) -> Result<bool, StoreError> {
        let (owner, attempt) = (owner.to_string(), attempt.clone());
        let (new_state, next, failed, error) = after_attempt(&attempt, result);
        let number = i32::try_from(attempt.attempt)
            .map_err(|_| StoreError::Other(anyhow::anyhow!("attempt number out of range")))?;
        let recorded = Recorded {
            key: callback_key(attempt.operation_id, attempt.refund_id, attempt.dispute),
            owner,
            state: new_state,
            failed,
            next,
            error,
            updated_at: attempt.at.millis(),
            attempt: number,
            at: attempt.at.millis(),
            duration_ms: attempt.duration_ms,
            http_status: attempt.http_status.map(i32::from),
            attempt_error: attempt.error.clone(),
        };
        if self.backend() == Backend::Postgres {
            // One statement for the outbox update and, if it matched, the attempt,
            // shared with the records of other deliveries (see `grouped`).
            return self.record_grouped(recorded).await;
        }
        self.write(move |conn| {
            use crate::schema::callback_outbox::dsl::*;
            let r = &recorded;
            let changed = diesel::update(
                callback_outbox
                    .filter(id.eq(&r.key))
                    .filter(lease_owner.eq(&r.owner)),
            )
            .set((
                state.eq(r.state),
                attempts.eq(attempts + 1),
                failures_in_run.eq(failures_in_run + r.failed),
                next_attempt_at.eq(r.next),
                last_error.eq(&r.error),
                lease_owner.eq(None::<String>),
                lease_until.eq(None::<i64>),
                updated_at.eq(r.updated_at),
            ))
            .execute(conn)?;
            if changed == 0 {
                return Ok(false);
            }
            diesel::insert_into(callback_attempts::table)
                .values((
                    callback_attempts::callback_id.eq(&r.key),
                    callback_attempts::attempt.eq(r.attempt),
                    callback_attempts::at.eq(r.at),
                    callback_attempts::duration_ms.eq(r.duration_ms),
                    callback_attempts::http_status.eq(r.http_status),
                    callback_attempts::error.eq(&r.attempt_error),
                ))
                .execute(conn)?;
            Ok(true)
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn release(&self, owner: &str) -> Result<(), StoreError> {
        let owner = owner.to_string();
        self.write(move |conn| {
            use crate::schema::callback_outbox::dsl::*;
            // Only pending rows are claimed: `callback_outbox_due` finds them.
            diesel::update(
                callback_outbox
                    .filter(state.eq("pending"))
                    .filter(lease_owner.eq(&owner)),
            )
            .set((lease_owner.eq(None::<String>), lease_until.eq(None::<i64>)))
            .execute(conn)?;
            Ok(())
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self, callback), fields(operation.id = %callback.operation_id))]
    async fn hold(
        &self,
        owner: &str,
        callback: &PendingCallback,
        at: Timestamp,
    ) -> Result<HoldOutcome, StoreError> {
        let key = callback_key(callback.operation_id, callback.refund_id, callback.dispute);
        let merchant = callback.merchant_id.as_str().to_string();
        let owner = owner.to_string();
        self.write(move |conn| held::hold(conn, &key, &merchant, &owner, at))
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn release_held(&self, at: Timestamp) -> Result<u64, StoreError> {
        // A read first: with no callback held (the usual case) nothing is written at all.
        if !self.read(held::any_held).await? {
            return Ok(0);
        }
        self.write(move |conn| held::release_enabled(conn, at))
            .await
    }

    /// `key` is matched against the outbox's `id`: an operation's id names its own callback,
    /// a refund's id the refund's.
    #[tracing::instrument(level = "debug", skip(self), fields(callback.id = %key))]
    async fn retry(&self, key: uuid::Uuid, now: Timestamp) -> Result<RetryOutcome, StoreError> {
        self.write(move |conn| {
            use crate::schema::callback_outbox::dsl::*;
            let key = key.hyphenated().to_string();
            let changed = diesel::update(
                callback_outbox
                    .filter(id.eq(&key))
                    .filter(state.eq("failed")),
            )
            .set((
                state.eq("pending"),
                failures_in_run.eq(0),
                next_attempt_at.eq(Some(now.millis())),
                lease_owner.eq(None::<String>),
                lease_until.eq(None::<i64>),
                updated_at.eq(now.millis()),
            ))
            .execute(conn)?;
            if changed == 1 {
                return Ok(RetryOutcome::Queued);
            }
            let held: i64 = callback_outbox
                .filter(id.eq(&key))
                .filter(state.eq("held"))
                .count()
                .get_result(conn)?;
            Ok(if held == 1 {
                RetryOutcome::Held
            } else {
                RetryOutcome::NotFailed
            })
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn list(
        &self,
        only: Option<CallbackState>,
        limit: u32,
    ) -> Result<Vec<CallbackStatus>, StoreError> {
        self.read(move |conn| {
            use crate::schema::callback_outbox::dsl::*;
            let mut query = callback_outbox.into_boxed();
            if let Some(only) = only {
                query = query.filter(state.eq(only.as_str()));
            }
            let found: Vec<StatusRow> = query
                .order((created_at.desc(), id.desc()))
                .limit(i64::from(limit))
                .select(StatusRow::as_select())
                .load(conn)?;
            decode_all(found, StatusRow::into_status)
        })
        .await
    }
}
