//! Refunds through the simulator: creation, settling after `--settle-ms`, reads.

use std::sync::Arc;

use super::{body_bytes, lock, now, Sim};
use crate::model::{FailureCode, Refund, RefundStatus};
use crate::notify::Notification;
use crate::rules;
use crate::store::{Created, NewRefund, RefundRefused, Store};

impl Sim {
    fn notify_refund(&self, store: &Store, refund: &Refund) {
        let Some(url) = store
            .payments()
            .get(&refund.payment_id)
            .and_then(|p| p.order.notify_url.clone())
        else {
            return;
        };
        let notification = Notification {
            object: refund.id.clone(),
            url,
            body: body_bytes(&refund.notification()),
            is_final: refund.progress.status != RefundStatus::Pending,
        };
        drop(self.notifier.send(notification, self.policy()));
    }

    /// Creates a refund (or answers the existing one).
    pub fn create_refund(
        self: &Arc<Self>,
        payment_id: &str,
        new: NewRefund,
    ) -> Result<Created<Refund>, RefundRefused> {
        let mut store = lock(&self.store);
        let created = store.create_refund(payment_id, new, now(), || self.injected_decline())?;
        if let Created::New(refund) = &created {
            self.notify_refund(&store, refund);
            if refund.progress.status == RefundStatus::Pending {
                let (id, failure) = (refund.id.clone(), rules::refund_outcome(refund.amount));
                self.after(self.settings.settle, move |sim| {
                    sim.settle_refund(&id, failure)
                });
            }
        }
        Ok(created)
    }

    fn settle_refund(&self, id: &str, failure: Option<FailureCode>) {
        let mut store = lock(&self.store);
        if let Some(refund) = store.settle::<Refund>(id, failure, now()) {
            self.notify_refund(&store, &refund);
        }
    }

    /// A refund by id.
    pub fn refund(&self, id: &str) -> Option<Refund> {
        lock(&self.store).refunds().get(id).cloned()
    }

    /// A refund by reference.
    pub fn refund_by_reference(&self, reference: &str) -> Option<Refund> {
        lock(&self.store).refunds().by_reference(reference).cloned()
    }
}
