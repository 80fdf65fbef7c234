//! Routing an acquirer operation across its candidates: the first route whose provider's
//! circuit lets it through is called; a definite failure (nothing happened at the acquirer)
//! moves on to the next candidate within the same request while the routing budget leaves
//! room for its timeout; a decline or an unknown outcome stops there.
//!
//! Every attempt, tried or passed over, is committed before the call that follows it, so a
//! crash at any point leaves rows the reconciler can finish from, and a provider is tried at
//! most once per operation.

use std::collections::{HashSet, VecDeque};

use super::creation::Creation;
use super::millis;
use super::payments::{unavailable, Heard};
use super::{CompleteError, CreateError, Created};
use crate::acquirer::{
    next_unknown_read, AcquirerPayment, CallResult, FailureMeaning, PaymentStatus,
};
use crate::attempt::{Attempt, AttemptState};
use crate::circuit::{Circuits, Permit, Verdict};
use crate::merchant::Merchant;
use crate::operation::{Decline, DeclineCode, Operation};
use crate::ports::{Chain, NewOperation};
use crate::provider::AcquirerProvider;
use crate::route::Route;
use crate::{Direction, OperationId, Timestamp, WithdrawalRequisites};

/// A route an acquirer operation may be tried on, with its acquirer's record.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    pub route: Route,
    pub acquirer: AcquirerProvider,
}

/// The next call of an operation: its candidate, its attempt (to be committed before the
/// call) and the circuit's permit for it.
pub(super) struct Next {
    candidate: Candidate,
    attempt: Attempt,
    permit: Permit,
}

/// What routing does next: routes passed over, then the one to call, if any is left.
struct Step {
    skipped: Vec<Attempt>,
    next: Option<Next>,
}

/// The candidates left for one operation, and what has been tried.
pub(super) struct Routing {
    operation_id: OperationId,
    queue: VecDeque<Candidate>,
    /// Providers already called for this operation.
    tried: HashSet<String>,
    /// Attempts numbered so far.
    numbered: u32,
    /// When the request arrived: the routing budget counts from here.
    arrival: Timestamp,
    budget_ms: i64,
}

impl Routing {
    pub(super) fn new(
        operation_id: OperationId,
        candidates: Vec<Candidate>,
        arrival: Timestamp,
        budget: std::time::Duration,
    ) -> Self {
        Self {
            operation_id,
            queue: candidates.into(),
            tried: HashSet::new(),
            numbered: 0,
            arrival,
            budget_ms: millis(budget),
        }
    }

    /// Takes candidates until one may be called at `now`: its provider not tried yet for this
    /// operation, its timeout within what is left of the budget (the first call always is),
    /// and its circuit letting it through. The ones passed over are recorded as skipped.
    fn step(&mut self, circuits: &Circuits, now: Timestamp) -> Step {
        let mut skipped = Vec::new();
        while let Some(candidate) = self.queue.pop_front() {
            self.numbered += 1;
            let provider = candidate.acquirer.name.as_str();
            let elapsed = now.millis() - self.arrival.millis();
            let fits = self.tried.is_empty()
                || elapsed + millis(candidate.acquirer.timeout) <= self.budget_ms;
            let permit = if self.tried.contains(provider) {
                None
            } else if !fits {
                tracing::info!(operation.id = %self.operation_id, provider, "no time left in the routing budget for this provider; skipped");
                None
            } else {
                let permit = circuits.admit(provider, now);
                if permit.is_none() {
                    tracing::info!(operation.id = %self.operation_id, provider, "provider's circuit is open; skipped");
                }
                permit
            };
            let route = candidate.route.id;
            let Some(permit) = permit else {
                skipped.push(Attempt::skipped(
                    self.operation_id,
                    self.numbered,
                    route,
                    provider,
                    now,
                ));
                continue;
            };
            self.tried.insert(provider.to_string());
            let lease = millis(candidate.acquirer.lease());
            let attempt = Attempt::sent(
                self.operation_id,
                self.numbered,
                route,
                provider,
                now,
                now.plus_millis(lease),
            );
            return Step {
                skipped,
                next: Some(Next {
                    candidate,
                    attempt,
                    permit,
                }),
            };
        }
        Step {
            skipped,
            next: None,
        }
    }
}

/// Whether a creation call's result is a definite failure: nothing happened at the acquirer,
/// so another provider may be tried.
fn is_definite_failure(result: &CallResult<AcquirerPayment>, direction: Direction) -> bool {
    match result {
        CallResult::Unavailable(_) => true,
        CallResult::Answered(payment) => {
            payment.status == PaymentStatus::Failed
                && payment.failure_meaning(direction) == FailureMeaning::Unavailable
        }
        CallResult::Unknown(_) => false,
    }
}

impl Creation {
    /// Stores `new` as processing with its first attempts (routes passed over, then the one
    /// to call), then calls the acquirers in turn as [`Routing`] says. Once stored, the
    /// merchant gets the operation (200), whatever becomes of the calls. With no candidate
    /// whose circuit lets it through, the operation is stored declined with
    /// `ProviderUnavailable` and no provider is called.
    pub(super) async fn create_at_acquirers(
        &self,
        merchant: &Merchant,
        canonical: &[u8],
        mut new: NewOperation,
        payout: Option<WithdrawalRequisites>,
        candidates: Vec<Candidate>,
    ) -> Result<Created, CreateError> {
        let arrival = new.operation.created_at();
        let mut routing = Routing::new(
            new.operation.id(),
            candidates,
            arrival,
            self.calls.settings.routing_budget,
        );
        let Step { skipped, next } = routing.step(&self.calls.circuits, arrival);
        new.attempts = skipped;
        let Some(next) = next else {
            tracing::warn!(operation.id = %new.operation.id(), "every candidate provider's circuit is open; declined with no provider called");
            self.decline_at_creation(&mut new, Decline::new(DeclineCode::ProviderUnavailable))?;
            return self.store_new(merchant, new, canonical).await;
        };
        new.attempts.push(next.attempt.clone());
        new.operation = new.operation.routed_to(
            next.candidate.route.id,
            next.candidate.acquirer.name.as_str(),
        );
        let created = self.store_new(merchant, new, canonical).await?;
        if created.replayed {
            return Ok(created);
        }
        let operation = self
            .try_candidates(created.operation, next, routing, payout)
            .await;
        Ok(Created {
            operation,
            replayed: false,
        })
    }

    /// Calls the committed attempt `next`; after a definite failure, commits the next
    /// attempts and calls the next candidate, until one answers, the outcome is unknown or
    /// no candidate is left. Returns the operation as it now stands; any failure after the
    /// first commit leaves it processing for the reconciler.
    async fn try_candidates(
        &self,
        mut operation: Operation,
        mut next: Next,
        mut routing: Routing,
        payout: Option<WithdrawalRequisites>,
    ) -> Operation {
        let direction = operation.direction();
        // Until its answer is applied (when this returns), a notification for the operation
        // waits for the call rather than reading and writing the attempt beside it.
        let _sending = self.core.recent.sending(operation.id());
        loop {
            let Next {
                candidate,
                attempt,
                permit,
            } = next;
            let acquirer = &candidate.acquirer;
            let (result, mut attempt) = self
                .calls
                .call_creation(&operation, attempt, payout.as_ref(), acquirer)
                .await;
            let now = self.core.clock.now();
            permit.finish(Verdict::of(&result, direction), now);
            if !is_definite_failure(&result, direction) {
                return self
                    .apply_creation(operation, attempt, result, acquirer)
                    .await;
            }
            let step = routing.step(&self.calls.circuits, now);
            let Some(following) = step.next else {
                if !step.skipped.is_empty() {
                    if let Err(error) = self.core.store.add_attempts(&attempt, &step.skipped).await
                    {
                        tracing::warn!(operation.id = %operation.id(), error = %Chain(&error), "routes passed over not recorded");
                    }
                }
                return self
                    .apply_creation(operation, attempt, result, acquirer)
                    .await;
            };
            failed_over(&mut attempt, &result);
            let mut added = step.skipped;
            added.push(following.attempt.clone());
            match self.core.store.add_attempts(&attempt, &added).await {
                Ok(true) => {
                    tracing::info!(operation.id = %operation.id(), provider = %acquirer.name, next = %following.candidate.acquirer.name, "definite failure; trying the next provider");
                    // Whatever was heard for the attempt left behind describes it no more.
                    self.core.recent.forget(operation.id());
                    let route = &following.candidate.route;
                    operation = operation.routed_to(route.id, &route.provider);
                    next = following;
                }
                Ok(false) => {
                    // Something else was heard for this attempt (a notification or a read
                    // found the payment), or the operation was finished: no other provider
                    // is called, and what was heard stands.
                    tracing::warn!(operation.id = %operation.id(), provider = %acquirer.name, "definite failure at creation, but the attempt has moved on; no failover");
                    return match self.core.operation(operation.id()).await {
                        Ok(current) => current,
                        Err(_) => operation,
                    };
                }
                Err(error) => {
                    // No next attempt is committed, so none is called: the definite failure
                    // stands as the operation's answer (a guarded decline).
                    tracing::error!(operation.id = %operation.id(), error = %Chain(&error), "next attempt not committed; no failover");
                    return self
                        .apply_creation(operation, attempt, result, acquirer)
                        .await;
                }
            }
        }
    }

    /// Writes what a creation call answered for `attempt`: the payment's status as the
    /// acquirer gave it, a decline with `ProviderUnavailable` after a definite failure, or an
    /// unknown outcome for the reconciler to read. Returns the operation as it now stands;
    /// any failure to write leaves it processing for the reconciler.
    async fn apply_creation(
        &self,
        operation: Operation,
        mut attempt: Attempt,
        result: CallResult<AcquirerPayment>,
        acquirer: &AcquirerProvider,
    ) -> Operation {
        let now = attempt.updated_at;
        if !matches!(result, CallResult::Answered(_)) {
            // No answer: a status a notification applied while the call was in flight no
            // longer describes the attempt, so the next notification takes the full path.
            self.core.recent.forget(operation.id());
        }
        let applied = match result {
            CallResult::Answered(payment) => {
                self.core
                    .apply_payment(&operation, attempt, &payment, Heard::Creation)
                    .await
            }
            CallResult::Unavailable(reason) => {
                tracing::warn!(operation.id = %operation.id(), provider = %acquirer.name, %reason, "acquirer unavailable at creation");
                attempt.state = AttemptState::Unavailable;
                attempt.next_check_at = None;
                self.core
                    .finish_then_save(&operation, &attempt, unavailable(), PaymentStatus::Failed)
                    .await
            }
            CallResult::Unknown(reason) => {
                tracing::warn!(operation.id = %operation.id(), provider = %acquirer.name, %reason, "acquirer outcome unknown at creation; the reconciler reads it");
                attempt.state = AttemptState::Unknown;
                attempt.unknown_since = Some(now);
                attempt.reads = 0;
                attempt.next_check_at = Some(next_unknown_read(now, now));
                self.core
                    .store
                    .save_attempt(&attempt)
                    .await
                    .map(|()| operation.clone())
                    .map_err(CompleteError::from)
            }
        };
        match applied {
            Ok(current) => current,
            Err(error) => {
                tracing::error!(operation.id = %operation.id(), error = %Chain(&error), "acquirer answer not written; the reconciler reads it");
                operation
            }
        }
    }
}

/// Marks `attempt` as a definite failure that the operation moved on from.
fn failed_over(attempt: &mut Attempt, result: &CallResult<AcquirerPayment>) {
    attempt.state = AttemptState::Unavailable;
    attempt.next_check_at = None;
    if let CallResult::Answered(payment) = result {
        attempt
            .acquirer_id
            .get_or_insert_with(|| payment.id.clone());
        attempt.failure_code = payment.failure_code().map(str::to_string);
    }
}
