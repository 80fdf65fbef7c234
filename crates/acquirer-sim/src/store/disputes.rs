//! Disputes in the store: opening one on a succeeded payin, evidence, resolution, and the
//! loss at `dueBy` of one without evidence.

use std::collections::BTreeMap;

use time::{Duration, OffsetDateTime};

use super::Store;
use crate::model::{to_millis, Dispute, DisputeStatus, Kind, Outcome, Status};

/// `dueBy` when the opening names none: 7 days after it.
pub const DEFAULT_DUE_IN: Duration = Duration::days(7);

/// The longest `dueInSeconds` accepted: about ten years.
pub const MAX_DUE_IN: Duration = Duration::days(3650);

/// A parsed `POST /_sim/payments/{reference}/dispute`.
#[derive(Debug, Clone)]
pub struct NewDispute {
    /// The disputed payin's reference.
    pub reference: String,
    /// Minor units; `None` disputes the payin's whole amount.
    pub amount: Option<i64>,
    /// Seconds from the opening to `dueBy`; `None` is [`DEFAULT_DUE_IN`].
    pub due_in_seconds: Option<i64>,
}

/// Why a dispute was not opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DisputeRefused {
    /// No payment under that reference.
    #[error("no such payment")]
    NoPayment,
    /// Only a succeeded payin can be disputed.
    #[error("only a succeeded payin can be disputed")]
    NotDisputable,
    /// The amount is not between 1 and the payin's amount.
    #[error("amount must be between 1 and the payment's amount")]
    BadAmount,
    /// `dueInSeconds` is negative or beyond [`MAX_DUE_IN`].
    #[error("dueInSeconds must be between 0 and 315360000")]
    BadDueIn,
}

/// The answer to an evidence call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// Counted; the dispute stays open (and is no longer lost by itself at `dueBy`).
    Accepted(Dispute),
    /// Already won or lost: the dispute as it is, nothing counted.
    Closed(Dispute),
    /// Open without evidence past its `dueBy`: lost now, nothing counted.
    Late(Dispute),
}

/// What the timer at a dispute's `dueBy` finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lapse {
    /// Open without evidence at `dueBy`: lost now.
    Lost(Dispute),
    /// Woken before `dueBy` (which it answers): look again then.
    Early(OffsetDateTime),
    /// Has evidence, or is already decided: nothing happens.
    Stays,
}

/// Every dispute, by id.
#[derive(Debug, Default)]
pub struct Disputes {
    by_id: BTreeMap<String, Dispute>,
}

impl Disputes {
    /// A dispute by id.
    pub fn get(&self, id: &str) -> Option<&Dispute> {
        self.by_id.get(id)
    }

    /// Every dispute.
    pub fn iter(&self) -> impl Iterator<Item = &Dispute> {
        self.by_id.values()
    }
}

impl Dispute {
    /// Loses an open dispute that has no evidence at or after its `dueBy`; whether it did.
    fn lose_if_due(&mut self, now: OffsetDateTime) -> bool {
        let due = self.status == DisputeStatus::Open && self.evidence == 0 && now >= self.due_by;
        if due {
            self.status = DisputeStatus::Lost;
            self.updated_at = to_millis(now);
        }
        due
    }
}

impl Store {
    /// Opens a dispute of a succeeded payin, `open` until `now` plus its `dueInSeconds`.
    pub fn open_dispute(
        &mut self,
        new: NewDispute,
        now: OffsetDateTime,
    ) -> Result<Dispute, DisputeRefused> {
        let payment = (self.payments)
            .by_reference(&new.reference)
            .ok_or(DisputeRefused::NoPayment)?;
        if payment.order.kind != Kind::Payin || payment.progress.status != Status::Succeeded {
            return Err(DisputeRefused::NotDisputable);
        }
        let amount = new.amount.unwrap_or(payment.order.amount);
        if !(1..=payment.order.amount).contains(&amount) {
            return Err(DisputeRefused::BadAmount);
        }
        let due_in = new.due_in_seconds.map_or(DEFAULT_DUE_IN, Duration::seconds);
        if due_in.is_negative() || due_in > MAX_DUE_IN {
            return Err(DisputeRefused::BadDueIn);
        }
        let now = to_millis(now);
        let dispute = Dispute {
            id: format!("dsp_{}", uuid::Uuid::new_v4().simple()),
            payment_id: payment.id.clone(),
            reference: payment.order.reference.clone(),
            amount,
            currency: payment.order.currency.clone(),
            status: DisputeStatus::Open,
            due_by: now + due_in,
            evidence: 0,
            updated_at: now,
        };
        (self.disputes.by_id).insert(dispute.id.clone(), dispute.clone());
        Ok(dispute)
    }

    /// Decides an open dispute (whatever its `dueBy`); `Err` with the dispute as it is when it
    /// was already decided.
    pub fn resolve_dispute(
        &mut self,
        id: &str,
        outcome: Outcome,
        now: OffsetDateTime,
    ) -> Option<Result<Dispute, Dispute>> {
        let dispute = self.disputes.by_id.get_mut(id)?;
        if dispute.status != DisputeStatus::Open {
            return Some(Err(dispute.clone()));
        }
        dispute.status = outcome.into();
        dispute.updated_at = to_millis(now);
        Some(Ok(dispute.clone()))
    }

    /// Counts an evidence call for an open dispute.
    pub fn add_evidence(&mut self, id: &str, now: OffsetDateTime) -> Option<Evidence> {
        let dispute = self.disputes.by_id.get_mut(id)?;
        if dispute.lose_if_due(now) {
            return Some(Evidence::Late(dispute.clone()));
        }
        if dispute.status != DisputeStatus::Open {
            return Some(Evidence::Closed(dispute.clone()));
        }
        dispute.evidence += 1;
        Some(Evidence::Accepted(dispute.clone()))
    }

    /// What the timer at a dispute's `dueBy` does: loses it if it is open without evidence.
    pub fn lapse_dispute(&mut self, id: &str, now: OffsetDateTime) -> Option<Lapse> {
        let dispute = self.disputes.by_id.get_mut(id)?;
        if dispute.lose_if_due(now) {
            return Some(Lapse::Lost(dispute.clone()));
        }
        let waiting = dispute.status == DisputeStatus::Open && dispute.evidence == 0;
        Some(if waiting {
            Lapse::Early(dispute.due_by)
        } else {
            Lapse::Stays
        })
    }

    /// Every dispute, by id.
    pub fn disputes(&self) -> &Disputes {
        &self.disputes
    }
}
