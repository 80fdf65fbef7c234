//! One delivery: the merchant's newest secret, the signed POST, the attempt recorded; or, for
//! a disabled merchant, the callback held until the merchant is enabled again.

use std::collections::HashMap;
use std::sync::Arc;

use domain::callback::CallbackAttempt;
use domain::merchant::Merchant;
use domain::ports::{AttemptResult, Chain, HoldOutcome, PendingCallback};
use domain::MerchantId;
use tracing::{error, info, warn};

use super::Inner;
use crate::decide::decide;
use crate::notifier::SendOutcome;

/// The merchant a claimed callback is signed for, as read when its batch was claimed.
pub(super) enum Signer {
    /// Read with the batch, milliseconds before the send: the merchant, or `None` if unknown.
    Read(Option<Arc<Merchant>>),
    /// The batch's read failed: the delivery reads its merchant itself.
    Unread,
}

impl Inner {
    /// The merchants of `claimed`, with their current secrets, in one read; if that read
    /// fails each delivery reads its own merchant, so one merchant's failing read holds up
    /// only its own callbacks.
    pub(super) async fn signers(
        &self,
        claimed: Vec<PendingCallback>,
    ) -> Vec<(PendingCallback, Signer)> {
        let mut ids: Vec<MerchantId> = claimed.iter().map(|c| c.merchant_id.clone()).collect();
        ids.sort();
        ids.dedup();
        let found = match self.merchants.merchants(&ids).await {
            Ok(found) => found,
            Err(e) => {
                warn!(error = %Chain(&e), merchants = ids.len(), "reading the batch's merchants failed; each delivery reads its own");
                return claimed.into_iter().map(|c| (c, Signer::Unread)).collect();
            }
        };
        let found: HashMap<MerchantId, Arc<Merchant>> = found
            .into_iter()
            .map(|m| (m.id.clone(), Arc::new(m)))
            .collect();
        claimed
            .into_iter()
            .map(|c| {
                let merchant = found.get(&c.merchant_id).cloned();
                (c, Signer::Read(merchant))
            })
            .collect()
    }

    /// Puts `callback`, whose merchant was read disabled, on hold: no attempt is made or
    /// counted. `true` if it is to be sent after all: the store read the merchant enabled
    /// (enabled since the read, which may be a few seconds old); the lease is still ours.
    async fn hold(&self, callback: &PendingCallback) -> bool {
        let at = self.clock.now();
        match self.outbox.hold(&self.owner, callback, at).await {
            Ok(HoldOutcome::Held) => {
                self.metrics.held.inc();
                info!("callback held: its merchant is disabled");
                false
            }
            Ok(HoldOutcome::MerchantEnabled) => {
                info!("the merchant was enabled meanwhile; sending the callback");
                true
            }
            Ok(HoldOutcome::NotLeased) => {
                warn!("the lease ended before the callback was held; another process owns it now");
                false
            }
            Err(e) => {
                error!(error = %Chain(&e), "holding the callback failed; it comes back when its lease ends");
                false
            }
        }
    }

    /// Makes one attempt and records it; returns what was recorded, if anything. A callback
    /// of a disabled merchant is held instead (see [`Inner::hold`]): nothing is recorded.
    #[tracing::instrument(
        name = "callback.deliver",
        skip_all,
        fields(
            operation.id = %callback.operation_id,
            refund.id = callback.refund_id.map(tracing::field::display),
            merchant.id = %callback.merchant_id,
            attempt = callback.attempt,
            http.status,
            duration_ms,
        )
    )]
    pub(super) async fn deliver(
        &self,
        callback: PendingCallback,
        signer: Signer,
    ) -> Option<AttemptResult> {
        let at = self.clock.now();
        let merchant = match signer {
            Signer::Read(merchant) => Ok(merchant),
            Signer::Unread => self
                .merchants
                .merchant(&callback.merchant_id)
                .await
                .map(|m| m.map(Arc::new)),
        };
        let outcome = match merchant {
            Err(e) => {
                warn!(error = %Chain(&e), "merchant lookup failed; the callback comes back when its lease ends");
                return None;
            }
            Ok(None) => {
                SendOutcome::refused(format!("merchant {} not found", callback.merchant_id))
            }
            Ok(Some(merchant)) => {
                if !merchant.enabled && !self.hold(&callback).await {
                    return None;
                }
                self.notifier
                    .send(
                        &callback,
                        merchant.keys(callback.direction),
                        self.clock.now(),
                    )
                    .await
            }
        };
        let span = tracing::Span::current();
        if let Some(status) = outcome.http_status {
            span.record("http.status", status);
        }
        span.record("duration_ms", outcome.duration_ms);

        let result = decide(
            &callback,
            &outcome.verdict,
            self.clock.now(),
            &self.config.schedule,
        );
        let error = outcome.error().map(str::to_owned);
        match (&result, &error) {
            (AttemptResult::Delivered, _) => info!("callback delivered"),
            (AttemptResult::RetryAt(next), Some(e)) => {
                info!(error = %e, next_attempt_at = %next, "callback attempt failed; will retry")
            }
            (AttemptResult::RetryAt(next), None) => {
                info!(next_attempt_at = %next, "callback retry")
            }
            (AttemptResult::Failed(reason), _) => warn!(reason = %reason, "callback failed"),
        }
        let attempt = CallbackAttempt {
            operation_id: callback.operation_id,
            refund_id: callback.refund_id,
            dispute: callback.dispute,
            attempt: callback.attempt,
            at,
            duration_ms: outcome.duration_ms,
            http_status: outcome.http_status,
            error,
        };
        match self
            .outbox
            .record_attempt(&self.owner, &attempt, &result)
            .await
        {
            Ok(true) => {
                self.metrics.observe(&result);
                Some(result)
            }
            Ok(false) => {
                warn!("the lease ended before the attempt was recorded; another process owns the callback now");
                None
            }
            Err(e) => {
                error!(error = %Chain(&e), "recording the attempt failed; the callback comes back when its lease ends");
                None
            }
        }
    }
}
