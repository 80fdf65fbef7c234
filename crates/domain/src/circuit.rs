//! The circuit breaker: per process and provider, over creation calls only.
//!
//! After [`FAILURES_TO_OPEN`] definite failures or unknown outcomes in a row the provider is
//! skipped for [`OPEN_FOR_MILLIS`]; then exactly one creation may try it (the trial) while
//! every other skips it. An answer that is neither (a decline included) closes the circuit
//! and resets the count; a failure opens it again. `issuer_unavailable` is neutral: it
//! neither adds to nor resets the count, and as the trial's answer it leaves the circuit
//! half-open for the next creation to try. Reads, cancels and notifications never pass
//! through it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::acquirer::{
    failure_meaning, AcquirerPayment, CallResult, Failure, FailureMeaning, FailureReason,
    PaymentStatus,
};
use crate::{Direction, Timestamp};

/// Failures in a row that open a closed circuit.
pub const FAILURES_TO_OPEN: u32 = 5;

/// How long an open circuit skips its provider before one trial may pass.
pub const OPEN_FOR_MILLIS: i64 = 30_000;

/// What a creation call's result tells the circuit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The provider answered (created, pending, declined by the bank or the user).
    Answered,
    /// A definite failure or an unknown outcome.
    Failed,
    /// Counts neither way (`issuer_unavailable`, or a call that never ended).
    Neutral,
}

impl Verdict {
    /// The verdict on a creation call's result for an operation in `direction`.
    pub fn of(result: &CallResult<AcquirerPayment>, direction: Direction) -> Verdict {
        match result {
            CallResult::Unavailable(_) | CallResult::Unknown(_) => Verdict::Failed,
            CallResult::Answered(payment) if payment.status == PaymentStatus::Failed => {
                let reason = Failure::reason_of(payment.failure.as_ref());
                match failure_meaning(reason, direction) {
                    FailureMeaning::Unavailable if reason == FailureReason::IssuerUnavailable => {
                        Verdict::Neutral
                    }
                    FailureMeaning::Unavailable => Verdict::Failed,
                    FailureMeaning::Declined(_) => Verdict::Answered,
                }
            }
            CallResult::Answered(_) => Verdict::Answered,
        }
    }
}

/// Where one provider's circuit stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CircuitState {
    /// Calls pass; `failures` in a row so far.
    Closed { failures: u32 },
    /// Calls are skipped until `until`.
    Open { until: Timestamp },
    /// One trial may pass; `trial` while it is under way.
    HalfOpen { trial: bool },
}

impl CircuitState {
    /// `closed`, `open` or `half_open`.
    pub fn name(self) -> &'static str {
        match self {
            CircuitState::Closed { .. } => "closed",
            CircuitState::Open { .. } => "open",
            CircuitState::HalfOpen { .. } => "half_open",
        }
    }

    /// Whether the provider is out of normal use: open (skipped), or half-open (skipped but
    /// for one trial).
    pub fn is_open(self) -> bool {
        !matches!(self, CircuitState::Closed { .. })
    }

    /// The state as time passes: an open circuit whose time is up is half-open.
    fn at(self, now: Timestamp) -> CircuitState {
        match self {
            CircuitState::Open { until } if now >= until => CircuitState::HalfOpen { trial: false },
            other => other,
        }
    }
}

/// One provider's circuit as a process reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circuit {
    pub provider: String,
    pub state: CircuitState,
}

/// The circuits of this process, one per provider it has called. Cheap to clone: clones
/// share the circuits.
#[derive(Debug, Clone, Default)]
pub struct Circuits {
    states: Arc<Mutex<BTreeMap<String, CircuitState>>>,
}

impl Circuits {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, CircuitState>> {
        // A panic while holding the lock leaves plain data behind; keep using it.
        self.states
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether a creation may call `provider` now: `Some(permit)` to call it (and report its
    /// result through the permit), `None` to skip it.
    pub fn admit(&self, provider: &str, now: Timestamp) -> Option<Permit> {
        let mut states = self.lock();
        let state = states
            .entry(provider.to_string())
            .or_insert(CircuitState::Closed { failures: 0 });
        *state = state.at(now);
        let trial = match *state {
            CircuitState::Closed { .. } => false,
            CircuitState::Open { .. } | CircuitState::HalfOpen { trial: true } => return None,
            CircuitState::HalfOpen { trial: false } => {
                *state = CircuitState::HalfOpen { trial: true };
                true
            }
        };
        Some(Permit {
            circuits: self.clone(),
            provider: provider.to_string(),
            trial,
            done: false,
        })
    }

    /// Every circuit of this process as it stands at `now`, by provider.
    pub fn snapshot(&self, now: Timestamp) -> Vec<Circuit> {
        self.lock()
            .iter()
            .map(|(provider, state)| Circuit {
                provider: provider.clone(),
                state: state.at(now),
            })
            .collect()
    }

    fn record(&self, provider: &str, trial: bool, verdict: Verdict, now: Timestamp) {
        let mut states = self.lock();
        let Some(state) = states.get_mut(provider) else {
            return;
        };
        let current = state.at(now);
        *state = match (current, verdict) {
            // While open or half-open, only the trial speaks for the provider: a late answer
            // to a call let through before the circuit opened changes nothing.
            (CircuitState::Open { .. } | CircuitState::HalfOpen { .. }, _) if !trial => current,
            (_, Verdict::Answered) => CircuitState::Closed { failures: 0 },
            (CircuitState::Closed { failures }, Verdict::Failed) => {
                let failures = failures + 1;
                if failures >= FAILURES_TO_OPEN {
                    tracing::warn!(provider, failures, "circuit opened");
                    CircuitState::Open {
                        until: now.plus_millis(OPEN_FOR_MILLIS),
                    }
                } else {
                    CircuitState::Closed { failures }
                }
            }
            (CircuitState::HalfOpen { .. }, Verdict::Failed) if trial => {
                tracing::warn!(provider, "circuit trial failed; open again");
                CircuitState::Open {
                    until: now.plus_millis(OPEN_FOR_MILLIS),
                }
            }
            (CircuitState::HalfOpen { .. }, Verdict::Neutral) if trial => {
                CircuitState::HalfOpen { trial: false }
            }
            (other, _) => other,
        };
    }
}

/// Leave to call a provider through its circuit. Report the call's verdict with
/// [`Permit::finish`]; a permit dropped unreported (a call that never ended) is neutral, so a
/// half-open circuit's trial slot is never lost.
#[derive(Debug)]
pub struct Permit {
    circuits: Circuits,
    provider: String,
    trial: bool,
    done: bool,
}

impl Permit {
    /// Whether this call is the single trial of a half-open circuit.
    pub fn is_trial(&self) -> bool {
        self.trial
    }

    /// Reports the call's verdict at `now`.
    pub fn finish(mut self, verdict: Verdict, now: Timestamp) {
        self.done = true;
        self.circuits
            .record(&self.provider, self.trial, verdict, now);
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if !self.done {
            // No clock here: a neutral verdict does not depend on the time.
            self.circuits.record(
                &self.provider,
                self.trial,
                Verdict::Neutral,
                Timestamp::from_millis(0),
            );
        }
    }
}

#[cfg(test)]
mod tests;
