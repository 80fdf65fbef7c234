//! `OperationStore` on diesel: every method is one unit of work in one transaction.

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::Bool;
use domain::attempt::{Attempt, Discrepancy};
use domain::ledger::Balance;
use domain::operation::{Action, Operation};
use domain::ports::{
    Completion, FinishError, InsertError, NewOperation, OperationStore, SaveCommitted, StoreError,
};
use domain::signature::Fingerprint;
use domain::{Direction, MerchantId, MerchantOperationId, OperationId, Status, Timestamp};

use super::attempts::{insert_attempt, Claim};
use super::{apply_move, queue_callback, single, PROCESSING};
use crate::conn::DbConn;
use crate::database::{Backend, Database};
use crate::journal::{self, created_events, write_events, NewEvent};
use crate::rows::{
    self, action_json, action_kind, operation_from_row, AttemptRow, NewOperationRow, OperationRow,
};
use crate::schema::{balances, operations, provider_attempts};
use crate::work::{corrupt, decode_all, TxError};

/// A processing operation of the built-in sandbox: what the expiry sweep and the payout
/// poller act on (an acquirer's operations are never expired on the gateway's clock nor polled
/// through the sandbox). Written as a literal (not bound parameters) so the planner can use
/// their partial indexes `... WHERE status = 3 AND provider = 'sandbox'`.
fn is_sandbox_processing() -> diesel::expression::SqlLiteral<Bool> {
    sql::<Bool>("status = 3 AND provider = 'sandbox'")
}

fn load_operation<E: From<StoreError>>(
    row: Option<OperationRow>,
) -> Result<Option<(Operation, Option<Fingerprint>)>, TxError<E>> {
    row.map(operation_from_row).transpose().map_err(corrupt)
}

/// `Operation::finish` only yields final statuses; anything else is a bug in the caller.
fn final_status(op: &Operation) -> Result<i16, StoreError> {
    match op.status() {
        Status::Approved | Status::Declined => Ok(rows::status_code(op.status())),
        Status::Processing => Err(StoreError::Other(anyhow::anyhow!(
            "finish called with a processing operation"
        ))),
    }
}

#[async_trait]
impl OperationStore for Database {
    /// The operation row first, then its attempts, its events (creation, then each attempt),
    /// its callback, its moves and, last, its counters (see `crate::journal`); on PostgreSQL
    /// the common shapes go in one statement each (`store::single`, `store::batched`).
    #[tracing::instrument(level = "debug", skip_all, fields(operation.id = %new.operation.id()))]
    async fn insert(&self, new: &NewOperation) -> Result<(), InsertError> {
        let new = new.clone();
        if self.backend() == Backend::Postgres {
            if let Some(lane) = crate::queue::lane_of(&new) {
                return self.insert_batched(lane, new).await;
            }
            if let Some(shape) = single::Shape::of(&new) {
                return self
                    .write_one(move |conn| {
                        let row = NewOperationRow::new(&new.operation, new.fingerprint.as_ref())
                            .map_err(corrupt)?;
                        match conn {
                            DbConn::Pg(pg) => single::insert(pg, &shape, &new, &row),
                            DbConn::Sqlite(_) => {
                                Err(corrupt(anyhow::anyhow!("a PostgreSQL statement on SQLite")))
                            }
                        }
                    })
                    .await;
            }
        }
        self.write(move |conn| {
            let row =
                NewOperationRow::new(&new.operation, new.fingerprint.as_ref()).map_err(corrupt)?;
            // The operation row first: a taken merchantOperationId stops everything else.
            match diesel::insert_into(operations::table)
                .values(&row)
                .execute(conn)
            {
                Ok(_) => {}
                Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
                    return Err(TxError::Fail(InsertError::Duplicate));
                }
                Err(e) => return Err(e.into()),
            }
            for attempt in &new.attempts {
                insert_attempt(conn, attempt)?;
            }
            write_events(conn, &created_events(&new).map_err(corrupt)?)?;
            if let Some(callback) = &new.callback {
                queue_callback(conn, callback)?;
            }
            // Balance updates last: they hold the balance row's lock until the commit.
            for mv in &new.moves {
                apply_move(conn, mv, || InsertError::InsufficientBalance)?;
            }
            // The counters after the balances (see `crate::journal`).
            journal::bump(conn, journal::created(&new.operation))
        })
        .await
    }

    /// Writes the status, decline, `updated_at` and a cleared `due_at` (what
    /// `Operation::finish` changes), guarded by `status = 3`, then its event, the callback,
    /// the moves and, last, its counters (see `crate::journal`).
    #[tracing::instrument(level = "debug", skip_all, fields(operation.id = %completion.operation.id()))]
    async fn finish(&self, completion: &Completion) -> Result<(), FinishError> {
        let completion = completion.clone();
        let status_code = final_status(&completion.operation)?;
        self.write(move |conn| {
            use crate::schema::operations::dsl::*;
            let done = &completion.operation;
            let decline = done.decline();
            let changed = diesel::update(
                operations
                    .filter(id.eq(done.id().to_string()))
                    .filter(status.eq(PROCESSING)),
            )
            .set((
                status.eq(status_code),
                error_code.eq(decline.map(|d| d.code.as_str())),
                error_message.eq(decline.map(|d| d.message.as_str())),
                updated_at.eq(done.updated_at().millis()),
                due_at.eq(None::<i64>),
            ))
            .execute(conn)?;
            if changed == 0 {
                return Err(TxError::Fail(FinishError::NotProcessing));
            }
            if let Some(number) = completion.from_attempt {
                // A statement of its own, after the update took the operation's row: it sees
                // an attempt that `add_attempts` committed while this one waited for the lock.
                if super::attempts::tried_after(conn, done.id(), number)? {
                    return Err(TxError::Fail(FinishError::NotProcessing));
                }
            }
            let event = NewEvent::status(done, Status::Processing, None).map_err(corrupt)?;
            write_events(conn, &[event])?;
            if let Some(callback) = &completion.callback {
                queue_callback(conn, callback)?;
            }
            // Balance updates last: they hold the balance row's lock until the commit.
            for mv in &completion.moves {
                apply_move(conn, mv, || FinishError::InsufficientBalance)?;
            }
            // The counters after the balances (see `crate::journal`).
            journal::bump(conn, journal::changed(done, Status::Processing))
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip_all, fields(operation.id = %operation.id()))]
    async fn advance(&self, operation: &Operation) -> Result<(), FinishError> {
        let op_id = operation.id().to_string();
        let action = operation
            .action()
            .map(action_json)
            .transpose()
            .map_err(StoreError::Other)?;
        let state = operation.provider_state().map(|s| s.as_str().to_string());
        let due = operation.due_at().map(Timestamp::millis);
        let at = operation.updated_at().millis();
        let kind = operation.action().map(action_kind);
        let event = NewEvent::step(operation.id(), kind, operation.updated_at())
            .map_err(StoreError::Other)?;
        self.write(move |conn| {
            use crate::schema::operations::dsl as o;
            let changed = diesel::update(
                o::operations
                    .filter(o::id.eq(&op_id))
                    .filter(o::status.eq(PROCESSING)),
            )
            .set((
                o::action.eq(&action),
                o::provider_state.eq(&state),
                o::due_at.eq(due),
                o::updated_at.eq(at),
            ))
            .execute(conn)?;
            match changed {
                0 => Err(TxError::Fail(FinishError::NotProcessing)),
                _ => write_events(conn, std::slice::from_ref(&event)),
            }
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self, expected, action), fields(operation.id = %op_id))]
    async fn replace_action(
        &self,
        op_id: OperationId,
        expected: &Action,
        action: &Action,
        at: Timestamp,
    ) -> Result<(), FinishError> {
        let expected = action_json(expected).map_err(StoreError::Other)?;
        let replacement = action_json(action).map_err(StoreError::Other)?;
        let event =
            NewEvent::step(op_id, Some(action_kind(action)), at).map_err(StoreError::Other)?;
        self.write(move |conn| {
            use crate::schema::operations::dsl as o;
            let changed = diesel::update(
                o::operations
                    .filter(o::id.eq(op_id.to_string()))
                    .filter(o::status.eq(PROCESSING))
                    .filter(o::action.eq(&expected)),
            )
            .set((o::action.eq(&replacement), o::updated_at.eq(at.millis())))
            .execute(conn)?;
            match changed {
                0 => Err(TxError::Fail(FinishError::NotProcessing)),
                _ => write_events(conn, std::slice::from_ref(&event)),
            }
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self), fields(operation.id = %op_id))]
    async fn get(&self, op_id: OperationId) -> Result<Option<Operation>, StoreError> {
        self.read(move |conn| {
            let row = operations::table
                .find(op_id.to_string())
                .select(OperationRow::as_select())
                .first(conn)
                .optional()?;
            Ok(load_operation(row)?.map(|(op, _)| op))
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self), fields(operation.id = %op_id))]
    async fn get_with_attempts(
        &self,
        op_id: OperationId,
    ) -> Result<Option<(Operation, Vec<Attempt>)>, StoreError> {
        // One statement: the operation's row once per attempt (or once, with none).
        self.read(move |conn| {
            let rows: Vec<(OperationRow, Option<AttemptRow>)> = operations::table
                .left_join(
                    provider_attempts::table.on(provider_attempts::operation_id.eq(operations::id)),
                )
                .filter(operations::id.eq(op_id.to_string()))
                .order(provider_attempts::number.asc())
                .select((OperationRow::as_select(), Option::<AttemptRow>::as_select()))
                .load(conn)?;
            let mut rows = rows.into_iter();
            let Some((first, attempt)) = rows.next() else {
                return Ok(None);
            };
            let attempts = attempt
                .into_iter()
                .chain(rows.filter_map(|(_, attempt)| attempt));
            let attempts = decode_all(attempts, AttemptRow::into_attempt)?;
            let (operation, _) = operation_from_row(first).map_err(corrupt)?;
            Ok(Some((operation, attempts)))
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self, merchant, moid), fields(merchant.id = %merchant))]
    async fn find_by_merchant_operation_id(
        &self,
        merchant: &MerchantId,
        dir: Direction,
        moid: &MerchantOperationId,
    ) -> Result<Option<(Operation, Option<Fingerprint>)>, StoreError> {
        let (merchant, moid) = (merchant.as_str().to_string(), moid.as_str().to_string());
        self.read(move |conn| {
            use crate::schema::operations::dsl::*;
            let row = operations
                .filter(merchant_id.eq(&merchant))
                .filter(direction.eq(dir.as_str()))
                .filter(merchant_operation_id.eq(&moid))
                .select(OperationRow::as_select())
                .first(conn)
                .optional()?;
            load_operation(row)
        })
        .await
    }

    /// The sandbox's deposits only: an acquirer's are never expired on the gateway's clock.
    #[tracing::instrument(level = "debug", skip(self))]
    async fn expired_deposits(
        &self,
        now: Timestamp,
        limit: u32,
    ) -> Result<Vec<OperationId>, StoreError> {
        self.read(move |conn| {
            use crate::schema::operations::dsl::*;
            let ids: Vec<String> = operations
                .filter(is_sandbox_processing())
                .filter(expires_at.le(now.millis()))
                .filter(direction.eq(Direction::Deposit.as_str()))
                .order(expires_at.asc())
                .limit(i64::from(limit))
                .select(id)
                .load(conn)?;
            decode_all(&ids, |text| rows::operation_id("operations.id", text))
        })
        .await
    }

    /// The sandbox's payouts only: an acquirer's are never polled through the sandbox.
    #[tracing::instrument(level = "debug", skip(self))]
    async fn due_payouts(&self, now: Timestamp, limit: u32) -> Result<Vec<Operation>, StoreError> {
        self.read(move |conn| {
            use crate::schema::operations::dsl::*;
            let found: Vec<OperationRow> = operations
                .filter(is_sandbox_processing())
                .filter(due_at.le(now.millis()))
                .order(due_at.asc())
                .limit(i64::from(limit))
                .select(OperationRow::as_select())
                .load(conn)?;
            decode_all(found, |row| operation_from_row(row).map(|(op, _)| op))
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self), fields(operation.id = %op_id))]
    async fn postpone(&self, op_id: OperationId, next: Timestamp) -> Result<(), StoreError> {
        self.write(move |conn| {
            use crate::schema::operations::dsl::*;
            diesel::update(
                operations
                    .filter(id.eq(op_id.to_string()))
                    .filter(status.eq(PROCESSING)),
            )
            .set(due_at.eq(Some(next.millis())))
            .execute(conn)?;
            Ok(())
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self), fields(merchant.id = %merchant))]
    async fn balances(&self, merchant: &MerchantId) -> Result<Vec<Balance>, StoreError> {
        let merchant = merchant.as_str().to_string();
        self.read(move |conn| {
            let found: Vec<(String, i64, i64)> = balances::table
                .filter(balances::merchant_id.eq(&merchant))
                .order(balances::currency.asc())
                .select((balances::currency, balances::available, balances::held))
                .load(conn)?;
            decode_all(found, |(currency, available, held)| {
                Ok(Balance {
                    currency: rows::currency("balances.currency", &currency)?,
                    available,
                    held,
                })
            })
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip_all, fields(operation.id = %attempt.operation_id))]
    async fn save_attempt(&self, attempt: &Attempt) -> Result<(), StoreError> {
        self.update_attempt(attempt).await
    }

    fn save_attempt_soon(&self, attempt: Attempt) -> SaveCommitted {
        self.queue_attempt(attempt)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(operation.id = %finished.operation_id))]
    async fn add_attempts(&self, finished: &Attempt, next: &[Attempt]) -> Result<bool, StoreError> {
        self.append_attempts(finished, next).await
    }

    #[tracing::instrument(level = "debug", skip(self), fields(operation.id = %id))]
    async fn attempts(&self, id: OperationId) -> Result<Vec<Attempt>, StoreError> {
        self.read_attempts(id).await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn claim_checks(
        &self,
        provider: &str,
        owner: &str,
        now: Timestamp,
        lease_until: Timestamp,
        limit: u32,
    ) -> Result<Vec<Attempt>, StoreError> {
        let claim = Claim {
            provider: provider.to_string(),
            owner: owner.to_string(),
            now,
            lease_until,
            limit,
        };
        self.lease_checks(claim).await
    }

    #[tracing::instrument(level = "debug", skip_all, fields(operation.id = %discrepancy.operation_id))]
    async fn record_discrepancy(&self, discrepancy: &Discrepancy) -> Result<(), StoreError> {
        self.insert_discrepancy(discrepancy).await
    }

    #[tracing::instrument(level = "debug", skip_all, fields(operation.id = %id))]
    async fn claim_page_read(
        &self,
        id: OperationId,
        now: Timestamp,
        gap: std::time::Duration,
    ) -> Result<bool, StoreError> {
        self.claim_read(id, now, gap).await
    }
}
