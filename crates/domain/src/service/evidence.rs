//! A chargeback's evidence: stored first (committed, `pending`), then forwarded to the
//! acquirer once. An answer not received is never sent again: the reconciler reads the
//! dispute, whose evidence count says whether it arrived.

use super::calls::lease_millis;
use super::dispute::Disputes;
use super::DisputeError;
use crate::acquirer::{AcquirerDisputeStatus, CallResult, Evidence};
use crate::dispute::{Dispute, DisputeKind, DisputeStatus, EvidenceRequest, EvidenceState};
use crate::merchant::Merchant;
use crate::ports::{EvidenceInsertError, NewEvidence};
use crate::DisputeId;

impl Disputes {
    /// The merchant sends evidence for its open chargeback `id`: `NotFound` for another
    /// merchant's or none, `InvalidState` for an appeal, a decided chargeback or one whose
    /// evidence is forwarded or pending. Answered: the chargeback is `under_review`;
    /// nothing happened at the acquirer: `Unavailable` (it may be sent again); an unknown
    /// outcome: the chargeback as it stands, left to the reconciler's read.
    #[tracing::instrument(skip_all, fields(merchant.id = %merchant.id, dispute.id = %id))]
    pub async fn evidence(
        &self,
        merchant: &Merchant,
        id: DisputeId,
        request: EvidenceRequest,
    ) -> Result<Dispute, DisputeError> {
        let dispute = self.read(merchant, id).await?;
        if dispute.kind != DisputeKind::Chargeback || dispute.status != DisputeStatus::Open {
            return Err(DisputeError::InvalidState);
        }
        let chargeback = self
            .store
            .chargeback(id)
            .await?
            .ok_or(DisputeError::InvalidState)?;
        if !chargeback.takes_evidence() {
            return Err(DisputeError::InvalidState);
        }
        let unavailable = |why: &str| DisputeError::Unavailable(why.to_string().into());
        let acquirer = self
            .calls
            .providers
            .acquirer(&chargeback.provider)
            .await?
            .ok_or_else(|| unavailable("the chargeback's provider is no longer configured"))?;
        let now = self.core.clock.now();
        let evidence = Evidence {
            key: self.ids.change_id(),
            text: request.text,
            files: request.files,
        };
        let new = NewEvidence {
            dispute_id: id,
            key: evidence.key,
            text: evidence.text.clone(),
            files: evidence.files.clone(),
            at: now,
            // If this process dies before the answer is written, the reconciler reads the
            // dispute once the call's lease has run out.
            check_at: now.plus_millis(lease_millis(&acquirer)),
        };
        match self.store.insert_evidence(&new).await {
            Ok(()) => {}
            Err(EvidenceInsertError::NotTaken) => return Err(DisputeError::InvalidState),
            Err(EvidenceInsertError::Store(e)) => return Err(e.into()),
        }
        tracing::info!(files = new.files.len(), "evidence stored; forwarding it");
        let result = self
            .calls
            .acquirer
            .submit_evidence(&acquirer, &chargeback.acquirer_id, &evidence)
            .await;
        match result {
            CallResult::Answered(reported) if reported.id == chargeback.acquirer_id => {
                if reported.status == AcquirerDisputeStatus::Open {
                    let now = self.core.clock.now();
                    let Ok(review) =
                        dispute.decide(DisputeStatus::UnderReview, dispute.amount, None, now)
                    else {
                        return Ok(dispute);
                    };
                    let next = self.core.chargeback_quiet_read(now);
                    Ok(self
                        .core
                        .change_chargeback(
                            review,
                            Vec::new(),
                            Some(EvidenceState::Forwarded),
                            Some(next),
                        )
                        .await?)
                } else {
                    let stored = crate::dispute::Chargeback {
                        dispute,
                        ..chargeback
                    };
                    Ok(self.core.decide_chargeback(stored, reported.status).await?)
                }
            }
            CallResult::Answered(_) => {
                tracing::error!("the acquirer answered the evidence for another dispute; the reconciler reads it");
                Ok(dispute)
            }
            CallResult::Unavailable(reason) => {
                tracing::warn!(%reason, "evidence call failed; nothing reached the acquirer");
                let next = self.core.chargeback_quiet_read(self.core.clock.now());
                self.store
                    .postpone_chargeback(id, Some(EvidenceState::Failed), next)
                    .await?;
                Err(unavailable("the acquirer could not take the evidence"))
            }
            CallResult::Unknown(reason) => {
                tracing::warn!(%reason, "evidence outcome unknown; the reconciler reads the dispute");
                Ok(dispute)
            }
        }
    }
}
