//! The `provider_attempts` rows.

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::AstPass;
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use domain::attempt::{Attempt, AttemptState};
use domain::Timestamp;

use super::bad;
use crate::binds::Binds;
use crate::schema::provider_attempts;

/// An attempt as written when it is created: not leased.
#[derive(Insertable)]
#[diesel(table_name = provider_attempts, treat_none_as_default_value = false)]
pub(crate) struct NewAttemptRow<'a> {
    operation_id: String,
    number: i32,
    route_id: i64,
    provider: &'a str,
    state: &'static str,
    acquirer_id: Option<&'a str>,
    failure_code: Option<&'a str>,
    redirect_url: Option<&'a str>,
    latency_ms: Option<i64>,
    created_at: i64,
    updated_at: i64,
    next_check_at: Option<i64>,
    unknown_since: Option<i64>,
    reads: i32,
    lease_owner: Option<&'a str>,
    lease_until: Option<i64>,
}

/// What [`OperationStore::save_attempt`](domain::ports::OperationStore::save_attempt)
/// writes: every field but the attempt's key, route, provider and creation time (the
/// statement in `store/attempts.rs` merges it with what is stored).
pub(crate) struct AttemptChanges<'a> {
    /// The attempt's number, to find its row (not written).
    pub(crate) number: i32,
    pub(crate) state: &'static str,
    pub(crate) acquirer_id: Option<&'a str>,
    pub(crate) failure_code: Option<&'a str>,
    pub(crate) redirect_url: Option<&'a str>,
    pub(crate) latency_ms: Option<i64>,
    pub(crate) updated_at: i64,
    pub(crate) next_check_at: Option<i64>,
    pub(crate) unknown_since: Option<i64>,
    pub(crate) reads: i32,
}

/// An attempt as read (its lease is the store's business, not the domain's).
#[derive(Queryable, Selectable, QueryableByName)]
#[diesel(table_name = provider_attempts)]
pub(crate) struct AttemptRow {
    operation_id: String,
    number: i32,
    route_id: i64,
    provider: String,
    state: String,
    acquirer_id: Option<String>,
    failure_code: Option<String>,
    redirect_url: Option<String>,
    latency_ms: Option<i64>,
    created_at: i64,
    updated_at: i64,
    next_check_at: Option<i64>,
    unknown_since: Option<i64>,
    reads: i32,
}

/// A count the domain keeps as `u32`, as the INTEGER it is stored as.
fn integer(what: &str, value: u32) -> anyhow::Result<i32> {
    i32::try_from(value).map_err(|_| anyhow::anyhow!("{what} out of range: {value}"))
}

fn count(column: &str, value: i32) -> anyhow::Result<u32> {
    u32::try_from(value).map_err(|_| bad(column, value))
}

impl<'a> NewAttemptRow<'a> {
    pub(crate) fn new(attempt: &'a Attempt) -> anyhow::Result<Self> {
        Ok(Self {
            operation_id: attempt.operation_id.to_string(),
            number: integer("attempt number", attempt.number)?,
            route_id: attempt.route_id,
            provider: &attempt.provider,
            state: attempt.state.as_str(),
            acquirer_id: attempt.acquirer_id.as_deref(),
            failure_code: attempt.failure_code.as_deref(),
            redirect_url: attempt.redirect_url.as_deref(),
            latency_ms: attempt.latency_ms,
            created_at: attempt.created_at.millis(),
            updated_at: attempt.updated_at.millis(),
            next_check_at: attempt.next_check_at.map(Timestamp::millis),
            unknown_since: attempt.unknown_since.map(Timestamp::millis),
            reads: integer("attempt reads", attempt.reads)?,
            lease_owner: None,
            lease_until: None,
        })
    }
}

impl NewAttemptRow<'_> {
    /// The columns [`NewAttemptRow::push_values`] binds, in order (a new attempt is not
    /// leased: `lease_owner` and `lease_until` are left NULL).
    pub(crate) const COLUMNS: &'static str = "operation_id, number, route_id, provider, state, \
         acquirer_id, failure_code, redirect_url, latency_ms, created_at, updated_at, \
         next_check_at, unknown_since, reads";

    /// Binds the row's values, comma separated, for a statement built by hand.
    pub(crate) fn push_values<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        Binds::new(&mut out)
            .bind::<Text, _>(&self.operation_id)?
            .bind::<Integer, _>(&self.number)?
            .bind::<BigInt, _>(&self.route_id)?
            .bind::<Text, _>(&self.provider)?
            .bind::<Text, _>(&self.state)?
            .bind::<Nullable<Text>, _>(&self.acquirer_id)?
            .bind::<Nullable<Text>, _>(&self.failure_code)?
            .bind::<Nullable<Text>, _>(&self.redirect_url)?
            .bind::<Nullable<BigInt>, _>(&self.latency_ms)?
            .bind::<BigInt, _>(&self.created_at)?
            .bind::<BigInt, _>(&self.updated_at)?
            .bind::<Nullable<BigInt>, _>(&self.next_check_at)?
            .bind::<Nullable<BigInt>, _>(&self.unknown_since)?
            .bind::<Integer, _>(&self.reads)?;
        Ok(())
    }
}

impl<'a> AttemptChanges<'a> {
    pub(crate) fn new(attempt: &'a Attempt) -> anyhow::Result<Self> {
        Ok(Self {
            number: integer("attempt number", attempt.number)?,
            state: attempt.state.as_str(),
            acquirer_id: attempt.acquirer_id.as_deref(),
            failure_code: attempt.failure_code.as_deref(),
            redirect_url: attempt.redirect_url.as_deref(),
            latency_ms: attempt.latency_ms,
            updated_at: attempt.updated_at.millis(),
            next_check_at: attempt.next_check_at.map(Timestamp::millis),
            unknown_since: attempt.unknown_since.map(Timestamp::millis),
            reads: integer("attempt reads", attempt.reads)?,
        })
    }
}

impl AttemptRow {
    pub(crate) fn into_attempt(self) -> anyhow::Result<Attempt> {
        let state = AttemptState::parse(&self.state).ok_or_else(|| {
            bad(
                "provider_attempts.state",
                format!("{:?}: unknown state", self.state),
            )
        })?;
        Ok(Attempt {
            operation_id: super::operation_id(
                "provider_attempts.operation_id",
                &self.operation_id,
            )?,
            number: count("provider_attempts.number", self.number)?,
            route_id: self.route_id,
            provider: self.provider,
            state,
            acquirer_id: self.acquirer_id,
            failure_code: self.failure_code,
            redirect_url: self.redirect_url,
            latency_ms: self.latency_ms,
            created_at: Timestamp::from_millis(self.created_at),
            updated_at: Timestamp::from_millis(self.updated_at),
            next_check_at: self.next_check_at.map(Timestamp::from_millis),
            unknown_since: self.unknown_since.map(Timestamp::from_millis),
            reads: count("provider_attempts.reads", self.reads)?,
        })
    }
}
