//! Disputes of deposits: the merchant's appeals, decided by an operator. The deposit's
//! status never changes; an accepted appeal moves money through its own ledger entries, with
//! the fee the deposit's stored tariff gives, and every change of a dispute's status is a
//! callback to the deposit's URL, in the same unit of work.

use std::sync::Arc;

use super::callbacks::dispute_callback_for;
use super::calls::Calls;
use super::core::Core;
use super::{DecideError, DisputeError, ReadError};
use crate::dispute::{
    AppealRequest, Dispute, DisputeFile, DisputeFilter, DisputeKind, DisputeStatus,
    APPEAL_WINDOW_SECS,
};
use crate::ledger::{appeal_moves, AppealMoves, BalanceMove};
use crate::merchant::Merchant;
use crate::operation::Operation;
use crate::ports::{
    AppealInsertError, DisputeChangeError, DisputeChangeWrite, DisputeStore, IdGenerator, NewAppeal,
};
use crate::{AmountText, Direction, DisputeId, OperationId, Status, ValidationErrors};

/// Appeals and chargebacks of deposits.
#[derive(Clone)]
pub struct Disputes {
    pub(super) core: Arc<Core>,
    /// The acquirers a chargeback's evidence is forwarded to.
    pub(super) calls: Arc<Calls>,
    pub(super) store: Arc<dyn DisputeStore>,
    pub(super) ids: Arc<dyn IdGenerator>,
}

impl Disputes {
    /// Opens the merchant's appeal of its deposit `deposit`. Checks, in this order: the
    /// deposit is the merchant's, `paidAmount` has the currency's fraction digits, the
    /// deposit is in the status the reason is about and at most 30 days old, and it has no
    /// open or accepted appeal (an accepted one corrected it once and for all).
    #[tracing::instrument(skip_all, fields(merchant.id = %merchant.id, operation.id = %deposit))]
    pub async fn appeal(
        &self,
        merchant: &Merchant,
        deposit: OperationId,
        request: AppealRequest,
    ) -> Result<Dispute, DisputeError> {
        let deposit = self
            .core
            .read(merchant, Direction::Deposit, deposit)
            .await?;
        let amount = request
            .paid_amount
            .in_currency(deposit.currency())
            .map_err(|why| {
                let mut errors = ValidationErrors::default();
                errors.push("paidAmount", why.0);
                DisputeError::Invalid(errors)
            })?;
        let now = self.core.clock.now();
        let in_window = now.millis() - deposit.created_at().millis() <= APPEAL_WINDOW_SECS * 1000;
        if deposit.status() != request.reason.applies_to() || !in_window {
            return Err(DisputeError::InvalidState);
        }
        let dispute = Dispute {
            id: self.ids.dispute_id(),
            kind: DisputeKind::Appeal,
            operation_id: deposit.id(),
            merchant_id: merchant.id.clone(),
            status: DisputeStatus::Open,
            reason: request.reason.as_str().to_string(),
            amount,
            currency: deposit.currency(),
            comment: request.comment,
            due_by: None,
            resolution: None,
            created_at: now,
            updated_at: now,
        };
        let new = NewAppeal {
            callback: self.callback(&dispute, &deposit),
            receipt: request.receipt,
            dispute,
        };
        match self.store.insert_appeal(&new).await {
            Ok(()) => {
                tracing::info!(dispute.id = %new.dispute.id, "appeal opened");
                Ok(new.dispute)
            }
            Err(AppealInsertError::OpenExists) => Err(DisputeError::InvalidState),
            Err(AppealInsertError::Store(e)) => Err(e.into()),
        }
    }

    /// The merchant's dispute `id`; another merchant's is `NotFound`.
    pub async fn read(&self, merchant: &Merchant, id: DisputeId) -> Result<Dispute, ReadError> {
        match self.store.dispute(id).await? {
            Some(dispute) if dispute.merchant_id == merchant.id => Ok(dispute),
            _ => Err(ReadError::NotFound),
        }
    }

    /// The disputes of `operation`, oldest first: only a final deposit can have any, so
    /// nothing is read for any other.
    pub async fn of(&self, operation: &Operation) -> Result<Vec<Dispute>, ReadError> {
        if operation.direction() != Direction::Deposit || !operation.status().is_final() {
            return Ok(Vec::new());
        }
        Ok(self.store.disputes_of(operation.id()).await?)
    }

    /// The disputes `filter` selects, newest first.
    pub async fn list(&self, filter: &DisputeFilter) -> Result<Vec<Dispute>, ReadError> {
        Ok(self.store.list_disputes(filter).await?)
    }

    /// The dispute `id` (whoever's) and its files, for an operator.
    pub async fn with_files(
        &self,
        id: DisputeId,
    ) -> Result<(Dispute, Vec<DisputeFile>), ReadError> {
        let dispute = self.store.dispute(id).await?.ok_or(ReadError::NotFound)?;
        let files = self.store.dispute_files(id).await?;
        Ok((dispute, files))
    }

    /// An operator accepts the open appeal `id` at `amount` (its `paidAmount` if `None`),
    /// for `resolution`: the money moves by the deposit's stored tariff
    /// ([`appeal_moves`]), with the callback, in one unit of work.
    #[tracing::instrument(skip_all, fields(dispute.id = %id))]
    pub async fn accept(
        &self,
        id: DisputeId,
        amount: Option<AmountText>,
        resolution: Option<String>,
    ) -> Result<Dispute, DecideError> {
        let (appeal, deposit) = self.open_appeal(id).await?;
        let amount = match amount {
            None => appeal.amount,
            Some(text) => text.in_currency(appeal.currency).map_err(|why| {
                let mut errors = ValidationErrors::default();
                errors.push("amount", why.0);
                DecideError::Invalid(errors)
            })?,
        };
        let done = appeal
            .decide(
                DisputeStatus::Accepted,
                amount,
                resolution,
                self.core.clock.now(),
            )
            .map_err(|_| DecideError::NotOpenAppeal)?;
        let moves = match appeal_moves(&done, &deposit) {
            AppealMoves::Moves(moves) => moves,
            AppealMoves::AmountTooSmall => return Err(DecideError::AmountTooSmall),
        };
        self.write(done, &deposit, moves).await
    }

    /// An operator rejects the open appeal `id` for `resolution`: nothing moves.
    #[tracing::instrument(skip_all, fields(dispute.id = %id))]
    pub async fn reject(
        &self,
        id: DisputeId,
        resolution: Option<String>,
    ) -> Result<Dispute, DecideError> {
        let (appeal, deposit) = self.open_appeal(id).await?;
        let done = appeal
            .decide(
                DisputeStatus::Rejected,
                appeal.amount,
                resolution,
                self.core.clock.now(),
            )
            .map_err(|_| DecideError::NotOpenAppeal)?;
        self.write(done, &deposit, Vec::new()).await
    }

    /// The open appeal `id` and its deposit.
    async fn open_appeal(&self, id: DisputeId) -> Result<(Dispute, Operation), DecideError> {
        let appeal = self.store.dispute(id).await?.ok_or(DecideError::NotFound)?;
        if !appeal.is_open_appeal() {
            return Err(DecideError::NotOpenAppeal);
        }
        let deposit = self.core.operation(appeal.operation_id).await?;
        if deposit.status() == Status::Processing {
            return Err(DecideError::Unknown(anyhow::anyhow!(
                "appeal {id} of a processing deposit"
            )));
        }
        Ok((appeal, deposit))
    }

    /// Writes `done` with `moves` and its callback; a dispute decided meanwhile is
    /// `NotOpenAppeal`.
    async fn write(
        &self,
        done: Dispute,
        deposit: &Operation,
        moves: Vec<BalanceMove>,
    ) -> Result<Dispute, DecideError> {
        let change = DisputeChangeWrite {
            callback: self.callback(&done, deposit),
            moves,
            dispute: done,
            evidence: None,
            check_at: None,
        };
        match self.store.change_dispute(&change).await {
            Ok(()) => {
                tracing::info!(dispute.id = %change.dispute.id, status = change.dispute.status.as_str(), "dispute decided");
                Ok(change.dispute)
            }
            Err(DisputeChangeError::Decided) => Err(DecideError::NotOpenAppeal),
            Err(DisputeChangeError::InsufficientBalance) => Err(DecideError::InsufficientBalance),
            Err(DisputeChangeError::Store(e)) => Err(e.into()),
        }
    }

    fn callback(
        &self,
        dispute: &Dispute,
        deposit: &Operation,
    ) -> Option<crate::callback::QueuedCallback<Dispute>> {
        dispute_callback_for(
            dispute,
            deposit,
            self.ids.change_id(),
            self.core.callback_format.as_ref(),
        )
    }
}
