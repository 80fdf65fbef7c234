//! `DisputeStore` on diesel: a new appeal is written with its receipt and callback, one open
//! or accepted appeal per deposit (a unique index, so even two concurrent requests get one); a change of
//! status is written once, guarded by the stored status, with its moves and callback.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{BigInt, Text};
use domain::dispute::{
    Chargeback, Dispute, DisputeFile, DisputeFilter, DisputeKind, DisputeStatus, EvidenceState,
};
use domain::ports::{
    AppealInsertError, ChargebackInsertError, DisputeChangeError, DisputeChangeWrite, DisputeStore,
    EvidenceInsertError, NewAppeal, NewChargeback, NewEvidence, StoreError,
};
use domain::{DisputeId, OperationId, Timestamp};

use super::{apply_move, queue_callback};
use crate::conn::DbConn;
use crate::database::Database;
use crate::journal::{write_events, NewEvent};
use crate::rows::{DisputeFileRow, DisputeRow};
use crate::schema::{dispute_files, disputes};
use crate::work::{corrupt, decode_all, TxError};

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
            let event = NewEvent::dispute(dispute, None, dispute.created_at).map_err(corrupt)?;
            write_events(conn, &[event])?;
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
                check_at.eq(change.check_at.map(Timestamp::millis)),
                lease_owner.eq(None::<String>),
                lease_until.eq(None::<i64>),
            ))
            .execute(conn)?;
            if changed == 0 {
                return Err(TxError::Fail(DisputeChangeError::Decided));
            }
            if let Some(state) = change.evidence {
                diesel::update(disputes.filter(id.eq(done.id.to_string())))
                    .set(evidence_state.eq(state.as_str()))
                    .execute(conn)?;
            }
            let event =
                NewEvent::dispute(done, change.evidence, done.updated_at).map_err(corrupt)?;
            write_events(conn, &[event])?;
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
                .map_err(corrupt)
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

    /// Under the deposit's lock (refunds of it are checked one after the other with it): the
    /// row (a second one with this provider and id breaks `disputes_acquirer`: `Exists`),
    /// its callbacks, then the moves last.
    #[tracing::instrument(level = "debug", skip_all, fields(dispute.id = %new.dispute.id, operation.id = %new.dispute.operation_id))]
    async fn insert_chargeback(&self, new: &NewChargeback) -> Result<(), ChargebackInsertError> {
        let new = new.clone();
        self.write(move |conn| {
            let dispute = &new.dispute;
            super::refunds::lock_deposit::<ChargebackInsertError>(
                conn,
                &dispute.operation_id.to_string(),
            )?;
            let row = DisputeRow::new(dispute, Some((&new.provider, &new.acquirer_id)));
            match diesel::insert_into(disputes::table)
                .values(row)
                .execute(conn)
            {
                Ok(_) => {}
                Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
                    return Err(TxError::Fail(ChargebackInsertError::Exists));
                }
                Err(error) => return Err(error.into()),
            }
            diesel::update(disputes::table.find(dispute.id.to_string()))
                .set(disputes::check_at.eq(new.check_at.map(Timestamp::millis)))
                .execute(conn)?;
            let event = NewEvent::dispute(dispute, None, dispute.created_at).map_err(corrupt)?;
            write_events(conn, &[event])?;
            for callback in &new.callbacks {
                queue_callback(conn, callback)?;
            }
            for mv in &new.moves {
                apply_move(conn, mv, || {
                    ChargebackInsertError::Store(StoreError::Other(anyhow::anyhow!(
                        "a chargeback's move found the balance too low"
                    )))
                })?;
            }
            Ok(())
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn chargeback_at(
        &self,
        provider: &str,
        acquirer_id: &str,
    ) -> Result<Option<Chargeback>, StoreError> {
        let (provider, acquirer_id) = (provider.to_string(), acquirer_id.to_string());
        self.read(move |conn| {
            let row: Option<(DisputeRow, Option<String>)> = disputes::table
                .filter(disputes::kind.eq(DisputeKind::Chargeback.as_str()))
                .filter(disputes::provider.eq(&provider))
                .filter(disputes::acquirer_id.eq(&acquirer_id))
                .select((DisputeRow::as_select(), disputes::evidence_state))
                .first(conn)
                .optional()?;
            chargeback_of(row)
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self), fields(dispute.id = %dispute_id))]
    async fn chargeback(&self, dispute_id: DisputeId) -> Result<Option<Chargeback>, StoreError> {
        self.read(move |conn| {
            let row: Option<(DisputeRow, Option<String>)> = disputes::table
                .find(dispute_id.to_string())
                .filter(disputes::kind.eq(DisputeKind::Chargeback.as_str()))
                .select((DisputeRow::as_select(), disputes::evidence_state))
                .first(conn)
                .optional()?;
            chargeback_of(row)
        })
        .await
    }

    /// The guarded update (an open chargeback whose evidence is none or failed), then the
    /// files, numbered after the stored ones.
    #[tracing::instrument(level = "debug", skip_all, fields(dispute.id = %new.dispute_id))]
    async fn insert_evidence(&self, new: &NewEvidence) -> Result<(), EvidenceInsertError> {
        let new = new.clone();
        self.write(move |conn| {
            use crate::schema::disputes::dsl::*;
            let taken = diesel::update(
                disputes
                    .filter(id.eq(new.dispute_id.to_string()))
                    .filter(kind.eq(DisputeKind::Chargeback.as_str()))
                    .filter(status.eq(DisputeStatus::Open.as_str()))
                    .filter(
                        evidence_state
                            .is_null()
                            .or(evidence_state.eq(EvidenceState::Failed.as_str())),
                    ),
            )
            .set((
                evidence_state.eq(EvidenceState::Pending.as_str()),
                evidence_key.eq(new.key.hyphenated().to_string()),
                evidence_text.eq(&new.text),
                check_at.eq(new.check_at.millis()),
                lease_owner.eq(None::<String>),
                lease_until.eq(None::<i64>),
            ))
            .execute(conn)?;
            if taken == 0 {
                return Err(TxError::Fail(EvidenceInsertError::NotTaken));
            }
            let last: Option<i32> = dispute_files::table
                .filter(dispute_files::dispute_id.eq(new.dispute_id.to_string()))
                .select(diesel::dsl::max(dispute_files::n))
                .first(conn)?;
            let row = disputes
                .find(new.dispute_id.to_string())
                .select(DisputeRow::as_select())
                .first(conn)?;
            let dispute = row.into_dispute().map_err(corrupt)?;
            let event = NewEvent::dispute(&dispute, Some(EvidenceState::Pending), new.at)
                .map_err(corrupt)?;
            write_events(conn, &[event])?;
            for (n, file) in (last.unwrap_or(0) + 1..).zip(&new.files) {
                diesel::insert_into(dispute_files::table)
                    .values(DisputeFileRow::new(&dispute, n, file, new.at))
                    .execute(conn)?;
            }
            Ok(())
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self), fields(dispute.id = %dispute_id))]
    async fn postpone_chargeback(
        &self,
        dispute_id: DisputeId,
        evidence: Option<EvidenceState>,
        next: Timestamp,
    ) -> Result<(), StoreError> {
        self.write(move |conn| {
            use crate::schema::disputes::dsl::*;
            let undecided_one = || {
                disputes
                    .filter(id.eq(dispute_id.to_string()))
                    .filter(status.eq_any(undecided()))
            };
            diesel::update(undecided_one())
                .set((
                    check_at.eq(next.millis()),
                    lease_owner.eq(None::<String>),
                    lease_until.eq(None::<i64>),
                ))
                .execute(conn)?;
            if let Some(state) = evidence {
                diesel::update(undecided_one())
                    .set(evidence_state.eq(state.as_str()))
                    .execute(conn)?;
            }
            Ok::<_, TxError<StoreError>>(())
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn claim_due_chargebacks(
        &self,
        owner: &str,
        now: Timestamp,
        until: Timestamp,
        limit: u32,
    ) -> Result<Vec<Chargeback>, StoreError> {
        let owner = owner.to_string();
        let mut claimed = self
            .write(move |conn| {
                let ids: Vec<ClaimedId> = diesel::sql_query(claim_sql(conn))
                    .bind::<Text, _>(&owner)
                    .bind::<BigInt, _>(until.millis())
                    .bind::<BigInt, _>(now.millis())
                    .bind::<BigInt, _>(i64::from(limit))
                    .load(conn)?;
                let ids: Vec<String> = ids.into_iter().map(|c| c.id).collect();
                let rows: Vec<(DisputeRow, Option<String>, Option<i64>)> = disputes::table
                    .filter(disputes::id.eq_any(&ids))
                    .select((
                        DisputeRow::as_select(),
                        disputes::evidence_state,
                        disputes::check_at,
                    ))
                    .load(conn)?;
                let mut found = Vec::new();
                for (row, evidence, at) in rows {
                    if let Some(chargeback) = chargeback_of(Some((row, evidence)))? {
                        found.push((at, chargeback));
                    }
                }
                Ok::<_, TxError<StoreError>>(found)
            })
            .await?;
        claimed.sort_by_key(|a| (a.0, a.1.dispute.id));
        Ok(claimed.into_iter().map(|(_, c)| c).collect())
    }
}

/// A stored chargeback, read.
fn chargeback_of<E: From<StoreError>>(
    row: Option<(DisputeRow, Option<String>)>,
) -> Result<Option<Chargeback>, TxError<E>> {
    match row {
        None => Ok(None),
        Some((row, evidence)) => row.into_chargeback(evidence).map_err(corrupt),
    }
}

/// A claimed chargeback's id.
#[derive(QueryableByName)]
struct ClaimedId {
    #[diesel(sql_type = Text)]
    id: String,
}

/// Due undecided chargebacks, leased in the same statement. `{lock}` is PostgreSQL's row lock
/// (rows another claimer holds are skipped); SQLite's `BEGIN IMMEDIATE` makes the statement
/// the only writer.
///
/// Binds: 1 owner, 2 lease until, 3 now, 4 limit.
const CLAIM: &str = "\
UPDATE disputes SET lease_owner = {p}1, lease_until = {p}2
WHERE id IN (
    SELECT id FROM disputes
    WHERE check_at IS NOT NULL AND check_at <= {p}3
      AND kind = 'chargeback' AND status IN ('open', 'under_review')
      AND (lease_until IS NULL OR lease_until < {p}3)
    ORDER BY check_at, id
    LIMIT {p}4{lock})
RETURNING id";

/// [`CLAIM`] in the dialect of `conn`'s backend.
fn claim_sql(conn: &DbConn) -> String {
    let (placeholder, lock) = match conn {
        DbConn::Pg(_) => ("$", "\n    FOR UPDATE SKIP LOCKED"),
        DbConn::Sqlite(_) => ("?", ""),
    };
    CLAIM.replace("{p}", placeholder).replace("{lock}", lock)
}
