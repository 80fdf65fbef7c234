//! Disputes through the simulator: opening, evidence, resolution, the loss at `dueBy`, and
//! their notifications.

use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;

use super::{body_bytes, lock, now, Sim};
use crate::model::{Dispute, DisputeStatus, Outcome};
use crate::notify::Notification;
use crate::store::{DisputeRefused, Evidence, Lapse, NewDispute, Store};

/// How long from now until `at` (zero if it has passed).
fn until(at: OffsetDateTime) -> Duration {
    Duration::try_from((at - now()).max(time::Duration::ZERO)).unwrap_or_default()
}

impl Sim {
    /// Queues the dispute's notification to its payin's `notifyUrl`, under the store's lock
    /// so that no later status is notified first.
    fn notify_dispute(&self, store: &Store, dispute: &Dispute) {
        let Some(url) = store
            .payments()
            .get(&dispute.payment_id)
            .and_then(|payment| payment.order.notify_url.clone())
        else {
            return;
        };
        let notification = Notification {
            object: dispute.id.clone(),
            url,
            body: body_bytes(&dispute.notification()),
            is_final: dispute.status != DisputeStatus::Open,
        };
        drop(self.notifier.send(notification, self.policy()));
    }

    /// Opens a dispute of a succeeded payin, notifies it, and sets its timer at `dueBy`.
    pub fn open_dispute(self: &Arc<Self>, new: NewDispute) -> Result<Dispute, DisputeRefused> {
        let mut store = lock(&self.store);
        let dispute = store.open_dispute(new, now())?;
        tracing::info!(dispute.id = %dispute.id, payment.id = %dispute.payment_id, "dispute opened");
        self.notify_dispute(&store, &dispute);
        self.lapse_at(dispute.id.clone(), dispute.due_by);
        Ok(dispute)
    }

    /// Looks at dispute `id` again at `due_by`.
    fn lapse_at(self: &Arc<Self>, id: String, due_by: OffsetDateTime) {
        self.after(until(due_by), move |sim| sim.lapse_dispute(&id));
    }

    /// At `dueBy`: an open dispute without evidence is lost (and notified).
    fn lapse_dispute(self: &Arc<Self>, id: &str) {
        let mut store = lock(&self.store);
        match store.lapse_dispute(id, now()) {
            Some(Lapse::Lost(dispute)) => {
                tracing::info!(dispute.id = %dispute.id, "dispute lost at dueBy without evidence");
                self.notify_dispute(&store, &dispute);
            }
            Some(Lapse::Early(due_by)) => self.lapse_at(id.to_owned(), due_by),
            Some(Lapse::Stays) | None => {}
        }
    }

    /// Decides an open dispute and notifies it; `None` if unknown, `Err` with the dispute as
    /// it is if it was already decided.
    pub fn resolve_dispute(&self, id: &str, outcome: Outcome) -> Option<Result<Dispute, Dispute>> {
        let mut store = lock(&self.store);
        let resolved = store.resolve_dispute(id, outcome, now())?;
        if let Ok(dispute) = &resolved {
            tracing::info!(dispute.id = %dispute.id, status = ?dispute.status, "dispute resolved");
            self.notify_dispute(&store, dispute);
        }
        Some(resolved)
    }

    /// Counts an evidence call for an open dispute; `None` if unknown. A dispute found past
    /// its `dueBy` without evidence is lost (and notified) instead.
    pub fn add_evidence(&self, id: &str) -> Option<Evidence> {
        let mut store = lock(&self.store);
        let evidence = store.add_evidence(id, now())?;
        if let Evidence::Late(dispute) = &evidence {
            tracing::info!(dispute.id = %dispute.id, "evidence after dueBy: dispute lost");
            self.notify_dispute(&store, dispute);
        }
        Some(evidence)
    }

    /// A dispute by id.
    pub fn dispute(&self, id: &str) -> Option<Dispute> {
        lock(&self.store).disputes().get(id).cloned()
    }
}
