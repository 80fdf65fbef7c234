//! `RefundStore` on diesel: a new refund is checked and written under a lock on its deposit,
//! with its hold; its final status is written once, with its moves and its callback; due
//! refunds are leased to one settler each, like attempts and callbacks.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{BigInt, Nullable, Text};
use domain::dispute::{DisputeKind, DisputeStatus};
use domain::ports::{
    FinishError, NewRefund, RefundCompletion, RefundInsertError, RefundStore, StoreError,
};
use domain::refund::Refund;
use domain::signature::Fingerprint;
use domain::{Direction, MerchantId, MerchantRefundId, OperationId, RefundId, Status, Timestamp};

use super::PROCESSING;
use super::{apply_move, queue_callback};
use crate::conn::DbConn;
use crate::database::Database;
use crate::journal::{write_events, NewEvent};
use crate::rows::{self, refund_from_row, NewRefundRow, RefundRow, REFUND_COLUMNS};
use crate::schema::{operations, refunds};
use crate::work::{corrupt, decode_all, TxError};

diesel::define_sql_function! {
    /// The first of its arguments that is not NULL.
    fn coalesce(first: Nullable<Text>, second: Nullable<Text>) -> Nullable<Text>;
}

/// What a new refund is checked against: its deposit's row.
pub(super) struct Deposit {
    direction: String,
    status: i16,
    amount: i64,
    merchant_id: String,
    currency: String,
}

/// Reads the deposit `id` under a lock that serialises the refunds of one deposit: on
/// PostgreSQL its row is locked (`FOR UPDATE`) until the commit; on SQLite the write
/// transaction began `IMMEDIATE`, so it is the only writer already.
pub(super) fn lock_deposit<E: From<StoreError>>(
    conn: &mut DbConn,
    id: &str,
) -> Result<Option<Deposit>, TxError<E>> {
    let query = operations::table.find(id).select((
        operations::direction,
        operations::status,
        operations::amount,
        operations::merchant_id,
        operations::currency,
    ));
    let row: Option<(String, i16, i64, String, String)> = match conn {
        DbConn::Pg(pg) => query.for_update().first(pg).optional()?,
        DbConn::Sqlite(_) => query.first(conn).optional()?,
    };
    Ok(row.map(
        |(direction, status, amount, merchant_id, currency)| Deposit {
            direction,
            status,
            amount,
            merchant_id,
            currency,
        },
    ))
}

/// The refund row inserted first: a taken merchantRefundId (even by a concurrent insert,
/// which the unique index waits for) is `Duplicate` before anything else is looked at.
fn insert_row(conn: &mut DbConn, new: &NewRefund) -> Result<(), TxError<RefundInsertError>> {
    let row = NewRefundRow::new(&new.refund, new.fingerprint.as_ref());
    match diesel::insert_into(refunds::table)
        .values(&row)
        .execute(conn)
    {
        Ok(_) => Ok(()),
        // PostgreSQL names the index, SQLite its columns; a clash of ids is a bug, not this.
        Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info))
            if info
                .constraint_name()
                .unwrap_or(info.message())
                .contains("merchant_refund_id") =>
        {
            Err(TxError::Fail(RefundInsertError::Duplicate))
        }
        Err(error) => Err(error.into()),
    }
}

/// The sum of the amounts of the deposit's refunds that are not declined (the new one
/// included, once inserted).
fn counted_refunds<E>(conn: &mut DbConn, deposit: &str) -> Result<i64, TxError<E>> {
    use crate::schema::disputes;
    let amounts: Vec<i64> = refunds::table
        .filter(refunds::operation_id.eq(deposit))
        .filter(refunds::status.ne(rows::status_code(Status::Declined)))
        .select(refunds::amount)
        .load(conn)?;
    // The deposit's chargebacks that took or hold money back count as refunds do.
    let charged_back: Vec<i64> = disputes::table
        .filter(disputes::operation_id.eq(deposit))
        .filter(disputes::kind.eq(DisputeKind::Chargeback.as_str()))
        .filter(disputes::status.eq_any([
            DisputeStatus::Open.as_str(),
            DisputeStatus::UnderReview.as_str(),
            DisputeStatus::Lost.as_str(),
        ]))
        .select(disputes::amount)
        .load(conn)?;
    Ok(amounts
        .into_iter()
        .chain(charged_back)
        .fold(0_i64, i64::saturating_add))
}

/// How much of the deposit can be refunded in all: its amount, or the right amount an
/// accepted `wrong_amount` appeal set (a deposit has at most one accepted appeal).
fn refundable<E>(conn: &mut DbConn, deposit: &str, amount: i64) -> Result<i64, TxError<E>> {
    use crate::schema::disputes;
    let corrected: Option<i64> = disputes::table
        .filter(disputes::operation_id.eq(deposit))
        .filter(disputes::kind.eq("appeal"))
        .filter(disputes::reason.eq("wrong_amount"))
        .filter(disputes::status.eq("accepted"))
        .select(disputes::amount)
        .first(conn)
        .optional()?;
    Ok(corrected.unwrap_or(amount))
}

/// A final refund's stored status; a processing one is a bug in the caller.
fn final_status(refund: &Refund) -> Result<i16, StoreError> {
    match refund.status() {
        Status::Approved | Status::Declined => Ok(rows::status_code(refund.status())),
        Status::Processing => Err(StoreError::Other(anyhow::anyhow!(
            "finish_refund called with a processing refund"
        ))),
    }
}

fn load_refund<E: From<StoreError>>(
    row: Option<RefundRow>,
) -> Result<Option<(Refund, Option<Fingerprint>)>, TxError<E>> {
    row.map(refund_from_row).transpose().map_err(corrupt)
}

/// Due processing refunds, leased in the same statement. `{lock}` is PostgreSQL's row lock
/// (rows another claimer holds are skipped, and the lease condition is checked again on the
/// locked row); SQLite's `BEGIN IMMEDIATE` makes the statement the only writer. The literal
/// `status = 3` lets the planner use the partial index `refunds_due`.
///
/// Binds: 1 owner, 2 lease until, 3 now, 4 limit.
const CLAIM: &str = "\
UPDATE refunds SET lease_owner = {p}1, lease_until = {p}2
WHERE id IN (
    SELECT id FROM refunds
    WHERE status = 3 AND check_at <= {p}3
      AND (lease_until IS NULL OR lease_until < {p}3)
    ORDER BY check_at, id
    LIMIT {p}4{lock})
RETURNING {columns}";

/// [`CLAIM`] in the dialect of `conn`'s backend.
fn claim_sql(conn: &DbConn) -> String {
    let (placeholder, lock) = match conn {
        DbConn::Pg(_) => ("$", "\n    FOR UPDATE SKIP LOCKED"),
        DbConn::Sqlite(_) => ("?", ""),
    };
    CLAIM
        .replace("{p}", placeholder)
        .replace("{lock}", lock)
        .replace("{columns}", REFUND_COLUMNS)
}

#[async_trait]
impl RefundStore for Database {
    /// Under the deposit's lock, in the port's order: the refund row (`Duplicate`), the
    /// deposit's status (`NotApproved`), the sum of its refunds that count, this one included
    /// (`ExceedsAmount`), then its event (see `crate::journal`) and the hold
    /// (`InsufficientBalance`). Any refusal rolls back all.
    #[tracing::instrument(level = "debug", skip_all, fields(refund.id = %new.refund.id, operation.id = %new.refund.operation_id))]
    async fn insert_refund(&self, new: &NewRefund) -> Result<(), RefundInsertError> {
        let new = new.clone();
        let event =
            NewEvent::refund(&new.refund, new.refund.created_at).map_err(StoreError::Other)?;
        self.write(move |conn| {
            let refund = &new.refund;
            let deposit_id = refund.operation_id.to_string();
            let Some(deposit) = lock_deposit(conn, &deposit_id)? else {
                return Err(corrupt(anyhow::anyhow!(
                    "refund {} of unknown operation {deposit_id}",
                    refund.id
                )));
            };
            if deposit.merchant_id != refund.merchant_id.as_str()
                || deposit.currency != refund.currency.as_str()
            {
                return Err(corrupt(anyhow::anyhow!(
                    "refund {} does not match the merchant or currency of operation {deposit_id}",
                    refund.id
                )));
            }
            insert_row(conn, &new)?;
            if deposit.direction != Direction::Deposit.as_str()
                || deposit.status != rows::status_code(Status::Approved)
            {
                return Err(TxError::Fail(RefundInsertError::NotApproved));
            }
            if counted_refunds(conn, &deposit_id)? > refundable(conn, &deposit_id, deposit.amount)?
            {
                return Err(TxError::Fail(RefundInsertError::ExceedsAmount));
            }
            write_events(conn, std::slice::from_ref(&event))?;
            // The balance update last: it holds the balance row's lock until the commit.
            apply_move(conn, &new.hold, || RefundInsertError::InsufficientBalance)
        })
        .await
    }

    /// Writes the status, decline, `updated_at`, a known acquirer id, and clears the check
    /// time and lease, guarded by `status = 3`; then its event, the callback and the moves.
    #[tracing::instrument(level = "debug", skip_all, fields(refund.id = %completion.refund.id))]
    async fn finish_refund(&self, completion: &RefundCompletion) -> Result<(), FinishError> {
        let completion = completion.clone();
        let status_code = final_status(&completion.refund)?;
        let done = &completion.refund;
        let event = NewEvent::refund(done, done.updated_at).map_err(StoreError::Other)?;
        self.write(move |conn| {
            use crate::schema::refunds::dsl::*;
            let done = &completion.refund;
            let decline = done.decline();
            let changed = diesel::update(
                refunds
                    .filter(id.eq(done.id.to_string()))
                    .filter(status.eq(PROCESSING)),
            )
            .set((
                status.eq(status_code),
                error_code.eq(decline.map(|d| d.code.as_str())),
                error_message.eq(decline.map(|d| d.message.as_str())),
                acquirer_id.eq(coalesce(acquirer_id, done.acquirer_id.as_deref())),
                check_at.eq(None::<i64>),
                unknown_since.eq(None::<i64>),
                lease_owner.eq(None::<String>),
                lease_until.eq(None::<i64>),
                updated_at.eq(done.updated_at.millis()),
            ))
            .execute(conn)?;
            if changed == 0 {
                return Err(TxError::Fail(FinishError::NotProcessing));
            }
            write_events(conn, std::slice::from_ref(&event))?;
            if let Some(callback) = &completion.callback {
                queue_callback(conn, callback)?;
            }
            // Balance updates last: they hold the balance row's lock until the commit.
            for mv in &completion.moves {
                apply_move(conn, mv, || FinishError::InsufficientBalance)?;
            }
            Ok(())
        })
        .await
    }

    /// Writes no event: a saved refund is still processing (its status does not change).
    #[tracing::instrument(level = "debug", skip_all, fields(refund.id = %refund.id))]
    async fn save_refund(&self, refund: &Refund) -> Result<(), FinishError> {
        let refund = refund.clone();
        self.write_one(move |conn| {
            use crate::schema::refunds::dsl::*;
            let changed = diesel::update(
                refunds
                    .filter(id.eq(refund.id.to_string()))
                    .filter(status.eq(PROCESSING)),
            )
            .set((
                acquirer_id.eq(coalesce(acquirer_id, refund.acquirer_id.as_deref())),
                check_at.eq(refund.check_at.map(Timestamp::millis)),
                unknown_since.eq(refund.unknown_since.map(Timestamp::millis)),
                updated_at.eq(refund.updated_at.millis()),
                lease_owner.eq(None::<String>),
                lease_until.eq(None::<i64>),
            ))
            .execute(conn)?;
            match changed {
                0 => Err(TxError::Fail(FinishError::NotProcessing)),
                _ => Ok(()),
            }
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self), fields(refund.id = %refund_id))]
    async fn refund(&self, refund_id: RefundId) -> Result<Option<Refund>, StoreError> {
        self.read(move |conn| {
            let row = refunds::table
                .find(refund_id.to_string())
                .select(RefundRow::as_select())
                .first(conn)
                .optional()?;
            Ok(load_refund(row)?.map(|(refund, _)| refund))
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self), fields(operation.id = %deposit))]
    async fn refunds_of(&self, deposit: OperationId) -> Result<Vec<Refund>, StoreError> {
        self.read(move |conn| {
            let found: Vec<RefundRow> = refunds::table
                .filter(refunds::operation_id.eq(deposit.to_string()))
                .order((refunds::created_at.asc(), refunds::id.asc()))
                .select(RefundRow::as_select())
                .load(conn)?;
            decode_all(found, |row| refund_from_row(row).map(|(refund, _)| refund))
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self, mrid), fields(merchant.id = %merchant))]
    async fn find_by_merchant_refund_id(
        &self,
        merchant: &MerchantId,
        mrid: &MerchantRefundId,
    ) -> Result<Option<(Refund, Option<Fingerprint>)>, StoreError> {
        let (merchant, mrid) = (merchant.as_str().to_string(), mrid.as_str().to_string());
        self.read(move |conn| {
            let row = refunds::table
                .filter(refunds::merchant_id.eq(&merchant))
                .filter(refunds::merchant_refund_id.eq(&mrid))
                .select(RefundRow::as_select())
                .first(conn)
                .optional()?;
            load_refund(row)
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn claim_due_refunds(
        &self,
        owner: &str,
        now: Timestamp,
        lease_until: Timestamp,
        limit: u32,
    ) -> Result<Vec<Refund>, StoreError> {
        let owner = owner.to_string();
        // One statement: on PostgreSQL without BEGIN/COMMIT, on SQLite in a write transaction.
        let mut claimed = self
            .write_one(move |conn| {
                let rows: Vec<RefundRow> = diesel::sql_query(claim_sql(conn))
                    .bind::<Text, _>(&owner)
                    .bind::<BigInt, _>(lease_until.millis())
                    .bind::<BigInt, _>(now.millis())
                    .bind::<BigInt, _>(i64::from(limit))
                    .load(conn)?;
                decode_all::<_, _, StoreError>(rows, |row| {
                    refund_from_row(row).map(|(refund, _)| refund)
                })
            })
            .await?;
        // RETURNING keeps no order: oldest check first, as selected.
        claimed.sort_by_key(|r| (r.check_at, r.id));
        Ok(claimed)
    }
}
