//! Settling refunds whose time has come: the sandbox's are settled, an acquirer's are read
//! by their reference (a lost answer is never sent again).

use super::answers::Answers;
use super::CompleteError;
use crate::acquirer::{next_unknown_read, not_found_final_at, Lookup, MAX_READ_GAP_SECS};
use crate::operation::Outcome;
use crate::ports::{Chain, ProviderVerdict};
use crate::refund::Refund;

/// Most refunds one pass of [`Answers::settle_refunds`] claims.
const REFUND_BATCH: u32 = 50;

/// How long a claimed refund is leased: past the longest acquirer call.
const REFUND_LEASE_MS: i64 = 65_000;

impl Answers {
    /// One pass over the processing refunds whose time has come, as `owner` (this process's
    /// id): the sandbox's are settled, an acquirer's are read. Leased, so several processes
    /// may run it at once. Returns how many it looked at.
    pub async fn settle_refunds(&self, owner: &str) -> Result<usize, CompleteError> {
        let now = self.core.clock.now();
        let due = self
            .core
            .refunds
            .claim_due_refunds(owner, now, now.plus_millis(REFUND_LEASE_MS), REFUND_BATCH)
            .await?;
        let looked_at = due.len();
        for refund in due {
            let id = refund.id;
            if let Err(error) = self.check_refund(refund).await {
                tracing::warn!(refund.id = %id, error = %Chain(&error), "refund check failed; it is retried when the lease ends");
            }
        }
        Ok(looked_at)
    }

    async fn check_refund(&self, mut refund: Refund) -> Result<Refund, CompleteError> {
        let now = self.core.clock.now();
        if refund.is_sandbox() {
            return match self.calls.provider.poll_refund(&refund, now).await? {
                ProviderVerdict::Approve => {
                    self.core.finish_refund(&refund, Outcome::Approve).await
                }
                ProviderVerdict::Decline(decline) => {
                    self.core
                        .finish_refund(&refund, Outcome::Decline(decline))
                        .await
                }
                ProviderVerdict::Pending(next) => {
                    refund.check_at = Some(next);
                    self.core.save_refund(refund).await
                }
            };
        }
        let Some(acquirer) = self.calls.providers.acquirer(&refund.provider).await? else {
            refund.check_at = Some(now.plus_seconds(MAX_READ_GAP_SECS));
            return self.core.save_refund(refund).await;
        };
        let since = refund.unknown_since.unwrap_or(refund.created_at);
        match self.calls.acquirer.find_refund(&acquirer, refund.id).await {
            Lookup::Found(reported)
                if refund
                    .acquirer_id
                    .as_deref()
                    .is_none_or(|known| known == reported.id) =>
            {
                self.core.apply_refund(refund, &reported).await
            }
            lookup => {
                // A refund request carries no deadline after which the acquirer refuses it,
                // so a refund it does not know may still be carried out: it is never declined
                // on a 404, only read again (an operator resolves one that stays unknown).
                if matches!(lookup, Lookup::NotFound)
                    && now >= not_found_final_at(refund.created_at)
                {
                    tracing::error!(refund.id = %refund.id, provider = %acquirer.name, "the acquirer does not know a refund sent to it; it stays processing until an operator resolves it");
                } else if matches!(lookup, Lookup::Found(_)) {
                    tracing::error!(refund.id = %refund.id, provider = %acquirer.name, "the acquirer answered for another refund; nothing applied");
                }
                refund.unknown_since = Some(since);
                refund.check_at = Some(next_unknown_read(since, now));
                self.core.save_refund(refund).await
            }
        }
    }
}
