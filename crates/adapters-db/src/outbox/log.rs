//! `CallbackLog`: a merchant's callbacks in one direction, newest first, with their attempts
//! (found through `merchant_callbacks`, one row per callback written with it: an index on the
//! outbox would cost every delivery), and the requeues a merchant asks for.

use async_trait::async_trait;
use diesel::prelude::*;
use domain::callback_log::{
    CallbackKind, CallbackOwner, CallbackQuery, LoggedAttempt, LoggedCallback, Requeue,
};
use domain::ports::{CallbackLog, StoreError};
use domain::Timestamp;

use super::{dispute_of, refund_of, state_from};
use crate::conn::DbConn;
use crate::database::Database;
use crate::rows::{self, bad};
use crate::schema::{callback_attempts, callback_outbox};
use crate::work::{decode_all, TxError};

/// A callback as its merchant reads it, as stored.
#[derive(Queryable, Selectable)]
#[diesel(table_name = callback_outbox)]
struct LogRow {
    id: String,
    operation_id: String,
    refund_id: Option<String>,
    dispute_id: Option<String>,
    change_id: Option<String>,
    direction: String,
    state: String,
    sequence: i64,
    created_at: i64,
}

/// An attempt as stored.
#[derive(Queryable, Selectable)]
#[diesel(table_name = callback_attempts)]
struct AttemptRow {
    callback_id: String,
    at: i64,
    http_status: Option<i32>,
    error: Option<String>,
}

impl LogRow {
    fn into_logged(self, attempts: Vec<LoggedAttempt>) -> anyhow::Result<LoggedCallback> {
        let dispute = dispute_of(self.dispute_id.as_deref(), self.change_id.as_deref())?;
        let refund_id = refund_of(self.refund_id.as_deref())?;
        let kind = match (dispute, refund_id) {
            (Some(_), _) => CallbackKind::Dispute,
            (None, Some(_)) => CallbackKind::Refund,
            (None, None) => CallbackKind::Operation(rows::direction(
                "callback_outbox.direction",
                &self.direction,
            )?),
        };
        Ok(LoggedCallback {
            callback_id: uuid::Uuid::parse_str(&self.id)
                .map_err(|e| bad("callback_outbox.id", e))?,
            kind,
            operation_id: rows::operation_id("callback_outbox.operation_id", &self.operation_id)?,
            refund_id,
            dispute_id: dispute.map(|d| d.dispute_id),
            state: state_from(&self.state)?,
            sequence: u64::try_from(self.sequence)
                .map_err(|e| bad("callback_outbox.sequence", e))?,
            created_at: Timestamp::from_millis(self.created_at),
            attempts,
        })
    }
}

impl AttemptRow {
    fn into_logged(self) -> anyhow::Result<LoggedAttempt> {
        Ok(LoggedAttempt {
            at: Timestamp::from_millis(self.at),
            http_status: self
                .http_status
                .map(u16::try_from)
                .transpose()
                .map_err(|e| bad("callback_attempts.http_status", e))?,
            error: self.error,
        })
    }
}

/// The page's callbacks (one more than the limit, if there are), then their attempts.
fn page(
    conn: &mut DbConn,
    query: &CallbackQuery,
) -> Result<Vec<LoggedCallback>, TxError<StoreError>> {
    let rows = callbacks_of(conn, query)?;
    let keys: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
    let tried: Vec<AttemptRow> = callback_attempts::table
        .filter(callback_attempts::callback_id.eq_any(&keys))
        .order((callback_attempts::callback_id, callback_attempts::attempt))
        .select(AttemptRow::as_select())
        .load(conn)?;
    let mut by_key: std::collections::HashMap<String, Vec<LoggedAttempt>> =
        std::collections::HashMap::new();
    for row in tried {
        let key = row.callback_id.clone();
        let attempt = row.into_logged().map_err(crate::work::corrupt)?;
        by_key.entry(key).or_default().push(attempt);
    }
    decode_all(rows, |row| {
        let logged = by_key.remove(&row.id).unwrap_or_default();
        row.into_logged(logged)
    })
}

/// The page's callbacks as stored, one more than the limit if there are.
fn callbacks_of(conn: &mut DbConn, query: &CallbackQuery) -> QueryResult<Vec<LogRow>> {
    use crate::schema::merchant_callbacks::dsl::*;
    let mut found = merchant_callbacks
        .inner_join(callback_outbox::table)
        .filter(merchant_id.eq(query.owner.merchant_id.as_str()))
        .filter(direction.eq(query.owner.direction.as_str()))
        .into_boxed();
    if let Some(only) = query.state {
        found = found.filter(callback_outbox::state.eq(only.as_str()));
    }
    if let Some(since) = query.since {
        found = found.filter(created_at.ge(since.millis()));
    }
    if let Some(after) = query.after {
        let (at, key) = (
            after.created_at.millis(),
            after.callback_id.hyphenated().to_string(),
        );
        found = found.filter(
            created_at
                .lt(at)
                .or(created_at.eq(at).and(callback_id.lt(key))),
        );
    }
    found
        .order((created_at.desc(), callback_id.desc()))
        .limit(i64::from(query.limit) + 1)
        .select(LogRow::as_select())
        .load(conn)
}

/// Sends the owner's callbacks `which` names again; `None` when one named is not the owner's.
fn requeue(
    conn: &mut DbConn,
    owner: &CallbackOwner,
    which: &Requeue,
    now: Timestamp,
) -> Result<Option<u64>, TxError<StoreError>> {
    use crate::schema::callback_outbox::dsl::*;
    let now = now.millis();
    let owned = callback_outbox
        .filter(merchant_id.eq(owner.merchant_id.as_str()))
        .filter(direction.eq(owner.direction.as_str()));
    let fresh = (
        state.eq("pending"),
        failures_in_run.eq(0),
        next_attempt_at.eq(Some(now)),
        lease_owner.eq(None::<String>),
        lease_until.eq(None::<i64>),
        updated_at.eq(now),
    );
    match which {
        Requeue::One(key) => {
            let key = key.hyphenated().to_string();
            // An attempt under way (a live lease) finishes first; its record then stands.
            let changed = diesel::update(
                owned
                    .filter(id.eq(&key))
                    .filter(lease_until.is_null().or(lease_until.lt(now))),
            )
            .set(fresh)
            .execute(conn)?;
            if changed == 1 {
                return Ok(Some(1));
            }
            let exists: i64 = owned.filter(id.eq(&key)).count().get_result(conn)?;
            Ok((exists == 1).then_some(0))
        }
        Requeue::Since { since, state: from } => {
            let changed = diesel::update(
                owned
                    .filter(state.eq(from.state().as_str()))
                    .filter(created_at.ge(since.millis())),
            )
            .set(fresh)
            .execute(conn)?;
            Ok(Some(u64::try_from(changed).unwrap_or(u64::MAX)))
        }
    }
}

#[async_trait]
impl CallbackLog for Database {
    #[tracing::instrument(level = "debug", skip(self), fields(merchant.id = %query.owner.merchant_id))]
    async fn callbacks(&self, query: &CallbackQuery) -> Result<Vec<LoggedCallback>, StoreError> {
        let query = query.clone();
        self.read(move |conn| page(conn, &query)).await
    }

    #[tracing::instrument(level = "debug", skip(self), fields(merchant.id = %owner.merchant_id))]
    async fn requeue(
        &self,
        owner: &CallbackOwner,
        which: &Requeue,
        now: Timestamp,
    ) -> Result<Option<u64>, StoreError> {
        let (owner, which) = (owner.clone(), which.clone());
        self.write(move |conn| requeue(conn, &owner, &which, now))
            .await
    }
}
