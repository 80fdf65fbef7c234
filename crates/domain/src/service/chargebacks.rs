//! Chargebacks, however the acquirer's word on them was heard (a notification, an evidence
//! call's answer, the reconciler's read): an `open` one holds its amount; `won` returns it,
//! `lost` removes it. Each status is written once, with its moves and its callback in one
//! unit of work; a decided chargeback never changes again.

use super::callbacks::dispute_callback_for;
use super::core::Core;
use super::{millis, CompleteError};
use crate::acquirer::{AcquirerDispute, AcquirerDisputeStatus, MAX_READ_GAP_SECS};
use crate::dispute::{
    Chargeback, Dispute, DisputeKind, DisputeStatus, EvidenceState, CHARGEBACK_REASON,
};
use crate::ledger::{chargeback_move, BalanceMove, EntryKind};
use crate::operation::Operation;
use crate::ports::{ChargebackInsertError, DisputeChangeError, DisputeChangeWrite, NewChargeback};
use crate::{Direction, OperationId, Status, Timestamp};

/// The gateway's status of a decided acquirer status.
fn decided(status: AcquirerDisputeStatus) -> Option<(DisputeStatus, EntryKind)> {
    match status {
        AcquirerDisputeStatus::Open => None,
        AcquirerDisputeStatus::Won => Some((DisputeStatus::Won, EntryKind::DisputeReturned)),
        AcquirerDisputeStatus::Lost => Some((DisputeStatus::Lost, EntryKind::DisputeLost)),
    }
}

impl Core {
    /// When an undecided chargeback that hears nothing is read: after the quiet while
    /// (`GATEWAY_RECONCILE_AFTER`), at most 5 minutes.
    pub(super) fn chargeback_quiet_read(&self, now: Timestamp) -> Timestamp {
        now.plus_millis(millis(self.reconcile_after).clamp(100, MAX_READ_GAP_SECS * 1000))
    }

    /// Applies what acquirer `provider` reports of a chargeback. `Ok(false)` when its
    /// reference is no approved deposit of that provider (the acquirer retries); a report
    /// about a decided chargeback, or repeating the stored status, changes nothing.
    pub(super) async fn apply_chargeback(
        &self,
        provider: &str,
        reported: &AcquirerDispute,
    ) -> Result<bool, CompleteError> {
        let stored = match self.disputes.chargeback_at(provider, &reported.id).await? {
            Some(stored) => stored,
            None => match self.open_chargeback(provider, reported).await? {
                Opened::Written => return Ok(true),
                Opened::NoDeposit => return Ok(false),
                // Another writer stored it first: what is reported applies to that one.
                Opened::Exists => self
                    .disputes
                    .chargeback_at(provider, &reported.id)
                    .await?
                    .ok_or_else(|| {
                        CompleteError::Unknown(anyhow::anyhow!(
                            "chargeback reported stored but not found"
                        ))
                    })?,
            },
        };
        self.decide_chargeback(stored, reported.status).await?;
        Ok(true)
    }

    /// Writes a stored chargeback's outcome, if `status` is one, with its move and callback;
    /// a decided chargeback (or one decided meanwhile) stays as it is.
    pub(super) async fn decide_chargeback(
        &self,
        stored: Chargeback,
        status: AcquirerDisputeStatus,
    ) -> Result<Dispute, CompleteError> {
        let dispute = stored.dispute;
        if dispute.status.is_final() {
            tracing::debug!(dispute.id = %dispute.id, "chargeback decided already; the report is ignored");
            return Ok(dispute);
        }
        let Some((status, kind)) = decided(status) else {
            return Ok(dispute);
        };
        let now = self.clock.now();
        let Ok(done) = dispute.decide(status, dispute.amount, None, now) else {
            return Ok(dispute);
        };
        let move_ = chargeback_move(&done, kind, now);
        self.change_chargeback(done, vec![move_], None, None).await
    }

    /// Writes a chargeback's change with its moves, callback, evidence state and next read;
    /// one decided meanwhile is returned as it is stored.
    pub(super) async fn change_chargeback(
        &self,
        done: Dispute,
        moves: Vec<BalanceMove>,
        evidence: Option<EvidenceState>,
        check_at: Option<Timestamp>,
    ) -> Result<Dispute, CompleteError> {
        let deposit = self.store.get(done.operation_id).await?.ok_or_else(|| {
            CompleteError::Unknown(anyhow::anyhow!("the disputed deposit vanished"))
        })?;
        let change = DisputeChangeWrite {
            callback: self.chargeback_callback(&done, &deposit),
            moves,
            dispute: done,
            evidence,
            check_at,
        };
        match self.disputes.change_dispute(&change).await {
            Ok(()) => {
                tracing::info!(dispute.id = %change.dispute.id, status = change.dispute.status.as_str(), "chargeback changed");
                Ok(change.dispute)
            }
            Err(DisputeChangeError::Decided) => self
                .disputes
                .dispute(change.dispute.id)
                .await?
                .ok_or_else(|| CompleteError::Unknown(anyhow::anyhow!("a dispute vanished"))),
            Err(DisputeChangeError::InsufficientBalance) => Err(CompleteError::Unknown(
                anyhow::anyhow!("a chargeback's move found the balance too low"),
            )),
            Err(DisputeChangeError::Store(e)) => Err(e.into()),
        }
    }

    /// Stores a chargeback first heard of now, with its hold and, if the acquirer decided it
    /// already (its `open` was not heard), its outcome, all in one unit of work.
    async fn open_chargeback(
        &self,
        provider: &str,
        reported: &AcquirerDispute,
    ) -> Result<Opened, CompleteError> {
        let Some(deposit) = self.disputed_deposit(provider, &reported.reference).await? else {
            tracing::warn!(provider, acquirer.id = %reported.id, "a chargeback of no approved deposit at this provider");
            return Ok(Opened::NoDeposit);
        };
        self.warn_if_over_refundable(&deposit, reported).await?;
        let now = self.clock.now();
        let opened = Dispute {
            id: self.ids.dispute_id(),
            kind: DisputeKind::Chargeback,
            operation_id: deposit.id(),
            merchant_id: deposit.merchant_id().clone(),
            status: DisputeStatus::Open,
            reason: CHARGEBACK_REASON.to_string(),
            amount: reported.amount,
            currency: deposit.currency(),
            comment: None,
            due_by: reported.due_by,
            resolution: None,
            created_at: now,
            updated_at: now,
        };
        let mut moves = vec![chargeback_move(&opened, EntryKind::DisputeHold, now)];
        let mut callbacks: Vec<_> = self
            .chargeback_callback(&opened, &deposit)
            .into_iter()
            .collect();
        let mut dispute = opened.clone();
        if let Some((status, kind)) = decided(reported.status) {
            if let Ok(done) = opened.decide(status, opened.amount, None, now) {
                moves.push(chargeback_move(&done, kind, now));
                callbacks.extend(self.chargeback_callback(&done, &deposit));
                dispute = done;
            }
        }
        let new = NewChargeback {
            check_at: (!dispute.status.is_final()).then(|| self.chargeback_quiet_read(now)),
            provider: provider.to_string(),
            acquirer_id: reported.id.clone(),
            moves,
            callbacks,
            dispute,
        };
        match self.disputes.insert_chargeback(&new).await {
            Ok(()) => {
                tracing::info!(dispute.id = %new.dispute.id, operation.id = %deposit.id(), status = new.dispute.status.as_str(), "chargeback opened");
                Ok(Opened::Written)
            }
            Err(ChargebackInsertError::Exists) => Ok(Opened::Exists),
            Err(ChargebackInsertError::Store(e)) => Err(e.into()),
        }
    }

    /// The approved deposit `reference` names whose current attempt is at `provider`.
    async fn disputed_deposit(
        &self,
        provider: &str,
        reference: &str,
    ) -> Result<Option<Operation>, CompleteError> {
        let Ok(id) = OperationId::parse(reference) else {
            return Ok(None);
        };
        Ok(self.store.get(id).await?.filter(|op| {
            op.direction() == Direction::Deposit
                && op.status() == Status::Approved
                && op.provider() == provider
        }))
    }

    /// The bank decides a chargeback's amount: one above what the deposit has left after its
    /// approved refunds is still recorded, and logged.
    async fn warn_if_over_refundable(
        &self,
        deposit: &Operation,
        reported: &AcquirerDispute,
    ) -> Result<(), CompleteError> {
        let refunded: i64 = self
            .refunds
            .refunds_of(deposit.id())
            .await?
            .iter()
            .filter(|r| r.status() == Status::Approved)
            .map(|r| r.amount.minor())
            .sum();
        if reported.amount.minor() > deposit.amount().minor() - refunded {
            tracing::warn!(operation.id = %deposit.id(), acquirer.id = %reported.id, "the chargeback exceeds what the deposit has left after its refunds; recorded as the bank decided it");
        }
        Ok(())
    }

    fn chargeback_callback(
        &self,
        dispute: &Dispute,
        deposit: &Operation,
    ) -> Option<crate::callback::QueuedCallback<Dispute>> {
        dispute_callback_for(
            dispute,
            deposit,
            self.ids.change_id(),
            self.callback_format.as_ref(),
        )
    }
}

/// What storing a chargeback first heard of did.
enum Opened {
    Written,
    /// Its reference is no approved deposit of the provider: nothing written.
    NoDeposit,
    /// It is stored already (a doubled notification, a concurrent one).
    Exists,
}
