//! `DisputeStore` on diesel: a new appeal is written with its receipt and callback, one open
//! or accepted appeal per deposit (a unique index, so even two concurrent requests get one); a change of
//! status is written once, guarded by the stored status, with its moves and callback.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use domain::dispute::{Dispute, DisputeFile, DisputeFilter, DisputeStatus};
use domain::ports::{
    AppealInsertError, DisputeChangeError, DisputeChangeWrite, DisputeStore, NewAppeal, StoreError,
};
use domain::{DisputeId, OperationId};

use super::{apply_move, queue_callback};
use crate::database::Database;
use crate::rows::{DisputeFileRow, DisputeRow};
use crate::schema::{dispute_files, disputes};
use crate::work::{decode_all, TxError};

/// The most disputes one list returns.
const MAX_LISTED: u32 = 500;

/// The stored statuses of an undecided dispute: only these change.
fn undecided() -> [&'static str; 2] {
    [
        DisputeStatus::Open.as_str(),
        DisputeStatus::UnderReview.as_str(),
    ]
}

#[async_trait]
impl DisputeStore for Database {
    /// The dispute row first (a second open or accepted appeal of the deposit breaks
    /// `disputes_one_appeal`: `OpenExists`), then its receipt and callback.
    #[tracing::instrument(level = "debug", skip_all, fields(dispute.id = %new.dispute.id, operation.id = %new.dispute.operation_id))]
    async fn insert_appeal(&self, new: &NewAppeal) -> Result<(), AppealInsertError> {
        let new = new.clone();
        self.write(move |conn| {
            let dispute = &new.dispute;
            match diesel::insert_into(disputes::table)
                .values(DisputeRow::new(dispute, None))
                .execute(conn)
            {
                Ok(_) => {}
                // PostgreSQL names the index, SQLite its column.
                Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info))
                    if info
                        .constraint_name()
                        .unwrap_or(info.message())
                        .contains("operation_id")
                        || info.constraint_name() == Some("disputes_one_appeal") =>
                {
                    return Err(TxError::Fail(AppealInsertError::OpenExists));
                }
                Err(error) => return Err(error.into()),
            }
            if let Some(receipt) = &new.receipt {
                diesel::insert_into(dispute_files::table)
                    .values(DisputeFileRow::new(dispute, 1, receipt, dispute.created_at))
                    .execute(conn)?;
            }
            if let Some(callback) = &new.callback {
                queue_callback(conn, callback)?;
            }
            Ok(())
        })
        .await
    }

    /// The guarded update (`status IN ('open', 'under_review')`), then the callback, then the
    /// moves last: they hold the balance row's lock until the commit.
    #[tracing::instrument(level = "debug", skip_all, fields(dispute.id = %change.dispute.id))]
    async fn change_dispute(&self, change: &DisputeChangeWrite) -> Result<(), DisputeChangeError> {
        let change = change.clone();
        self.write(move |conn| {
            use crate::schema::disputes::dsl::*;
            let done = &change.dispute;
            let changed = diesel::update(
                disputes
                    .filter(id.eq(done.id.to_string()))
                    .filter(status.eq_any(undecided())),
            )
            .set((
                status.eq(done.status.as_str()),
                amount.eq(done.amount.minor()),
                resolution.eq(&done.resolution),
                due_by.eq(done.due_by.map(domain::Timestamp::millis)),
                updated_at.eq(done.updated_at.millis()),
            ))
            .execute(conn)?;
            if changed == 0 {
                return Err(TxError::Fail(DisputeChangeError::Decided));
            }
            if let Some(callback) = &change.callback {
                queue_callback(conn, callback)?;
            }
            for mv in &change.moves {
                apply_move(conn, mv, || DisputeChangeError::InsufficientBalance)?;
            }
            Ok(())
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self), fields(dispute.id = %dispute_id))]
    async fn dispute(&self, dispute_id: DisputeId) -> Result<Option<Dispute>, StoreError> {
        self.read(move |conn| {
            let row: Option<DisputeRow> = disputes::table
                .find(dispute_id.to_string())
                .select(DisputeRow::as_select())
                .first(conn)
                .optional()?;
            row.map(DisputeRow::into_dispute)
                .transpose()
                .map_err(crate::work::corrupt)
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self), fields(operation.id = %deposit))]
    async fn disputes_of(&self, deposit: OperationId) -> Result<Vec<Dispute>, StoreError> {
        self.read(move |conn| {
            let found: Vec<DisputeRow> = disputes::table
                .filter(disputes::operation_id.eq(deposit.to_string()))
                .order((disputes::created_at.asc(), disputes::id.asc()))
                .select(DisputeRow::as_select())
                .load(conn)?;
            decode_all(found, DisputeRow::into_dispute)
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn list_disputes(&self, filter: &DisputeFilter) -> Result<Vec<Dispute>, StoreError> {
        let filter = filter.clone();
        self.read(move |conn| {
            let mut query = disputes::table.into_boxed();
            if let Some(merchant) = &filter.merchant_id {
                query = query.filter(disputes::merchant_id.eq(merchant.as_str().to_string()));
            }
            if let Some(status) = filter.status {
                query = query.filter(disputes::status.eq(status.as_str()));
            }
            if let Some(kind) = filter.kind {
                query = query.filter(disputes::kind.eq(kind.as_str()));
            }
            let found: Vec<DisputeRow> = query
                .order((disputes::created_at.desc(), disputes::id.desc()))
                .limit(i64::from(filter.limit.clamp(1, MAX_LISTED)))
                .select(DisputeRow::as_select())
                .load(conn)?;
            decode_all(found, DisputeRow::into_dispute)
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self), fields(dispute.id = %dispute_id))]
    async fn dispute_files(&self, dispute_id: DisputeId) -> Result<Vec<DisputeFile>, StoreError> {
        self.read(move |conn| {
            let found: Vec<DisputeFileRow> = dispute_files::table
                .filter(dispute_files::dispute_id.eq(dispute_id.to_string()))
                .order(dispute_files::n.asc())
                .select(DisputeFileRow::as_select())
                .load(conn)?;
            decode_all(found, DisputeFileRow::into_file)
        })
        .await
    }
}
