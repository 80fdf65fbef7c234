//! Statuses an acquirer reports of a payment, however they were heard (the creation call's
//! answer, a notification, a read): every one goes through [`Core::apply_payment`]. It
//! applies only to a processing operation and only from its current attempt, a final status
//! is written once (guarded), and a final status that contradicts the operation's own is
//! recorded as a discrepancy, never applied.

use super::core::Core;
use super::recent::Answer;
use super::CompleteError;
use crate::acquirer::{
    next_quiet_read, outcome_of, AcquirerPayment, FailureMeaning, PaymentStatus,
};
use crate::attempt::{Attempt, AttemptState, Discrepancy};
use crate::operation::{Decline, DeclineCode, Operation, Outcome};
use crate::{Direction, OperationId, Timestamp};

/// Where a payment's status was heard from: a read that finds nothing new makes the next
/// quiet read wait longer; anything else starts the quiet schedule again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Heard {
    Creation,
    Notification,
    Read,
}

impl Core {
    /// Applies a payment's status, as its current attempt's acquirer reported it, to the
    /// operation: the attempt learns the acquirer's id, page and failure code; a final status
    /// finishes a processing operation once; one that contradicts a final operation is a
    /// discrepancy. Returns the operation as it now stands.
    pub(super) async fn apply_payment(
        &self,
        operation: &Operation,
        mut attempt: Attempt,
        payment: &AcquirerPayment,
        heard: Heard,
    ) -> Result<Operation, CompleteError> {
        let now = self.clock.now();
        attempt
            .acquirer_id
            .get_or_insert_with(|| payment.id.clone());
        if payment.redirect_url.is_some() {
            attempt.redirect_url.clone_from(&payment.redirect_url);
        }
        if let Some(code) = payment.failure_code() {
            attempt.failure_code = Some(code.to_string());
        }
        // Found at last: from here on the quiet schedule applies, starting afresh.
        let was_unknown = attempt.unknown_since.take().is_some()
            || matches!(attempt.state, AttemptState::Sent | AttemptState::Unknown);
        attempt.updated_at = now;
        if matches!(attempt.state, AttemptState::Sent | AttemptState::Unknown) {
            attempt.state = attempt_state_for(payment, operation.direction());
        }
        let Some(outcome) = self.outcome_for(operation, payment, now) else {
            attempt.reads = if heard == Heard::Read && !was_unknown {
                attempt.reads + 1
            } else {
                0
            };
            attempt.next_check_at = Some(self.quiet_check(operation, now, attempt.reads));
            let answer = attempt.acquirer_id.as_deref().and_then(|known| {
                Answer::of(
                    &attempt.provider,
                    known,
                    payment.status,
                    payment.failure_code(),
                )
            });
            let queued = if heard == Heard::Creation {
                // The operation stays processing, so the merchant's answer does not depend
                // on this write: it is not waited for. Lost with the process, it leaves the
                // attempt `sent`, due at its lease's end, and the reconciler reads it.
                Some(self.store.save_attempt_soon(attempt))
            } else {
                self.store.save_attempt(&attempt).await?;
                None
            };
            self.recent.applied(operation.id(), answer, queued);
            return Ok(operation.clone());
        };
        self.recent.forget(operation.id());
        attempt.next_check_at = None;
        if operation.status().is_final() {
            self.store.save_attempt(&attempt).await?;
            self.check_agreement(operation, &outcome, payment.status, &attempt.provider)
                .await?;
            return Ok(operation.clone());
        }
        self.finish_then_save(operation, &attempt, outcome, payment.status)
            .await
    }

    /// The outcome a payment's status gives `operation` at `now`: as [`outcome_of`] says, except
    /// that `canceled` is `Expired` only for a deposit whose lifetime has passed, and
    /// `Canceled` otherwise (an operator's cancel).
    fn outcome_for(
        &self,
        operation: &Operation,
        payment: &AcquirerPayment,
        now: Timestamp,
    ) -> Option<Outcome> {
        let outcome = outcome_of(payment, operation.direction())?;
        if payment.status != PaymentStatus::Canceled {
            return Some(outcome);
        }
        let lapsed = operation.direction() == Direction::Deposit
            && operation.expires_at().is_some_and(|end| end <= now);
        Some(if lapsed {
            outcome
        } else {
            Outcome::Decline(Decline::new(DeclineCode::Canceled))
        })
    }

    /// Writes the operation's final status (guarded: if another writer finished it first, its
    /// status stands and is checked against `outcome`, as `reported` by the acquirer; if a
    /// later attempt was tried meanwhile, the status is the attempt's alone), then the
    /// attempt. In that order: if the final status cannot be written, the attempt keeps
    /// its due check and the reconciler comes back to it; once it is written, a stale
    /// attempt is cleared by the reconciler's first look.
    pub(super) async fn finish_then_save(
        &self,
        operation: &Operation,
        attempt: &Attempt,
        outcome: Outcome,
        reported: PaymentStatus,
    ) -> Result<Operation, CompleteError> {
        let finished = self
            .finish_from(operation, outcome.clone(), Some(attempt.number))
            .await;
        let current = match finished {
            Err(CompleteError::InvalidState) => {
                let current = self.operation(operation.id()).await?;
                if current.status().is_final() {
                    self.check_agreement(&current, &outcome, reported, &attempt.provider)
                        .await?;
                } else if reported == PaymentStatus::Succeeded {
                    // Still processing: a later attempt was tried meanwhile, so this one's
                    // money moved beside it.
                    self.record_discrepancy(operation.id(), &attempt.provider, reported)
                        .await?;
                }
                current
            }
            finished => finished?,
        };
        self.store.save_attempt(attempt).await?;
        Ok(current)
    }

    /// Records a discrepancy when a provider's final status contradicts the operation's.
    async fn check_agreement(
        &self,
        operation: &Operation,
        outcome: &Outcome,
        reported: PaymentStatus,
        provider: &str,
    ) -> Result<(), CompleteError> {
        let approved = operation.status() == crate::Status::Approved;
        let contradicts = match outcome {
            Outcome::Approve => !approved,
            Outcome::Decline(_) => approved,
        };
        if contradicts && operation.status().is_final() {
            self.record_discrepancy(operation.id(), provider, reported)
                .await?;
        }
        Ok(())
    }

    pub(super) async fn record_discrepancy(
        &self,
        id: OperationId,
        provider: &str,
        reported: PaymentStatus,
    ) -> Result<(), CompleteError> {
        tracing::error!(operation.id = %id, provider, reported = reported.as_str(), "provider reports a final status that contradicts the operation's; recorded as a discrepancy");
        let discrepancy = Discrepancy {
            operation_id: id,
            provider: provider.to_string(),
            reported: reported.as_str().to_string(),
            at: self.clock.now(),
        };
        self.store.record_discrepancy(&discrepancy).await?;
        Ok(())
    }

    /// When a quiet processing operation is read next: on the quiet schedule, and for a
    /// deposit no later than its lifetime's end (when the reconciler cancels it).
    pub(super) fn quiet_check(
        &self,
        operation: &Operation,
        now: Timestamp,
        reads: u32,
    ) -> Timestamp {
        let next = next_quiet_read(now, self.reconcile_after, reads);
        match operation.expires_at() {
            Some(end) if end > now && operation.direction() == Direction::Deposit => next.min(end),
            _ => next,
        }
    }
}

/// Whether `payment` is the attempt's (its acquirer id, once known, names it).
pub(super) fn same_payment(attempt: &Attempt, payment: &AcquirerPayment) -> bool {
    attempt
        .acquirer_id
        .as_ref()
        .is_none_or(|known| *known == payment.id)
}

/// The attempt state a payment's status gives an attempt whose answer was not known.
fn attempt_state_for(payment: &AcquirerPayment, direction: Direction) -> AttemptState {
    if payment.status != PaymentStatus::Failed {
        return AttemptState::Ok;
    }
    match payment.failure_meaning(direction) {
        FailureMeaning::Unavailable => AttemptState::Unavailable,
        FailureMeaning::Declined(_) => AttemptState::Declined,
    }
}

/// The outcome of a definite failure.
pub(super) fn unavailable() -> Outcome {
    Outcome::Decline(Decline::new(DeclineCode::ProviderUnavailable))
}
