//! Reading chargebacks the acquirer has not spoken of for a while, or whose evidence's
//! answer was lost: a dropped `won` or `lost` is found this way, and evidence whose call went
//! unanswered is known to have arrived (the acquirer counts it) or not.

use super::answers::Answers;
use super::CompleteError;
use crate::acquirer::{AcquirerDisputeStatus, Lookup};
use crate::dispute::{Chargeback, DisputeStatus, EvidenceState};
use crate::ports::Chain;

/// Most chargebacks one pass of [`Answers::check_chargebacks`] claims.
const CHARGEBACK_BATCH: u32 = 50;

/// How long a claimed chargeback is leased: past the longest acquirer call.
const CHARGEBACK_LEASE_MS: i64 = 65_000;

/// How soon a read that got no answer is made again.
const RETRY_READ_MS: i64 = 5_000;

impl Answers {
    /// One pass over the undecided chargebacks whose read is due, as `owner` (this process's
    /// id). Leased, so several processes may run it at once. Returns how many it looked at.
    pub async fn check_chargebacks(&self, owner: &str) -> Result<usize, CompleteError> {
        let now = self.core.clock.now();
        let due = self
            .core
            .disputes
            .claim_due_chargebacks(
                owner,
                now,
                now.plus_millis(CHARGEBACK_LEASE_MS),
                CHARGEBACK_BATCH,
            )
            .await?;
        let looked_at = due.len();
        for chargeback in due {
            let id = chargeback.dispute.id;
            if let Err(error) = self.check_chargeback(chargeback).await {
                tracing::warn!(dispute.id = %id, error = %Chain(&error), "chargeback check failed; it is retried when the lease ends");
            }
        }
        Ok(looked_at)
    }

    /// Reads one claimed chargeback and applies what the acquirer says.
    async fn check_chargeback(&self, chargeback: Chargeback) -> Result<(), CompleteError> {
        let id = chargeback.dispute.id;
        let now = self.core.clock.now();
        let Some(acquirer) = self.calls.providers.acquirer(&chargeback.provider).await? else {
            let next = self.core.chargeback_quiet_read(now);
            self.core
                .disputes
                .postpone_chargeback(id, None, next)
                .await?;
            return Ok(());
        };
        let found = self
            .calls
            .acquirer
            .find_dispute(&acquirer, &chargeback.acquirer_id)
            .await;
        let reported = match found {
            Lookup::Found(reported) if reported.id == chargeback.acquirer_id => reported,
            Lookup::Failed(reason) => {
                tracing::debug!(dispute.id = %id, %reason, "chargeback read failed");
                let next = now.plus_millis(RETRY_READ_MS);
                self.core
                    .disputes
                    .postpone_chargeback(id, None, next)
                    .await?;
                return Ok(());
            }
            Lookup::Found(_) | Lookup::NotFound => {
                // Nothing to apply: read again after the quiet while, not at once.
                tracing::error!(dispute.id = %id, provider = %acquirer.name, "the acquirer does not find a chargeback it notified; nothing applied");
                let next = self.core.chargeback_quiet_read(now);
                self.core
                    .disputes
                    .postpone_chargeback(id, None, next)
                    .await?;
                return Ok(());
            }
        };
        if reported.status != AcquirerDisputeStatus::Open {
            self.core
                .decide_chargeback(chargeback, reported.status)
                .await?;
            return Ok(());
        }
        let next = self.core.chargeback_quiet_read(now);
        if chargeback.evidence != Some(EvidenceState::Pending) {
            self.core
                .disputes
                .postpone_chargeback(id, None, next)
                .await?;
            return Ok(());
        }
        if reported.evidence == 0 {
            // Claimed only once the call's lease has passed: the call is over, and the
            // acquirer never processed it.
            tracing::warn!(dispute.id = %id, "the evidence never reached the acquirer; the merchant may send it again");
            self.core
                .disputes
                .postpone_chargeback(id, Some(EvidenceState::Failed), next)
                .await?;
            return Ok(());
        }
        let dispute = chargeback.dispute;
        let Ok(review) = dispute.decide(DisputeStatus::UnderReview, dispute.amount, None, now)
        else {
            return Ok(());
        };
        self.core
            .change_chargeback(
                review,
                Vec::new(),
                Some(EvidenceState::Forwarded),
                Some(next),
            )
            .await?;
        Ok(())
    }
}
