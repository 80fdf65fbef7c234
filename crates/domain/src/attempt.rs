//! Provider attempts: each call that starts an operation at a provider, recorded before the
//! call and completed after it, and what the reconciler keeps on it.

use crate::names::names;
use crate::{OperationId, Timestamp};

names! {
    /// Where an attempt stands.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum AttemptState {
        /// Committed before the call; its answer is not written yet.
        Sent = "sent",
        /// The provider took the operation (it may still be processing there).
        Ok = "ok",
        /// The bank or the user declined it.
        Declined = "declined",
        /// A definite failure: nothing happened at the provider.
        Unavailable = "unavailable",
        /// No usable answer: the payment may or may not exist; resolved by reading.
        Unknown = "unknown",
        /// Not tried: its provider was already tried for the operation, its circuit was open, or
        /// its timeout no longer fit the routing budget.
        Skipped = "skipped",
    }
}

/// One attempt of an operation at a provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub operation_id: OperationId,
    /// 1, 2, ... in the order tried; the last one tried is the operation's current attempt.
    pub number: u32,
    pub route_id: i64,
    pub provider: String,
    pub state: AttemptState,
    /// The acquirer's payment id, once known.
    pub acquirer_id: Option<String>,
    /// The provider's raw failure code, as reported.
    pub failure_code: Option<String>,
    /// The acquirer's page for the user (deposits), once known.
    pub redirect_url: Option<String>,
    /// How long the creation call took, once it ended.
    pub latency_ms: Option<i64>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// When the reconciler looks at it next; `None`: nothing left to do.
    pub next_check_at: Option<Timestamp>,
    /// Since when its outcome is unknown: set while the acquirer has not been found to know
    /// the payment (an unanswered creation), cleared once a read finds it.
    pub unknown_since: Option<Timestamp>,
    /// Reads since the current schedule started (unknown outcome, or quiet operation).
    pub reads: u32,
}

impl Attempt {
    /// The first attempt of a new operation, committed with it before the provider is called.
    /// The reconciler looks at it at `check_at` (the call's end at the latest) if its answer
    /// was never written.
    pub fn sent(
        operation_id: OperationId,
        number: u32,
        route_id: i64,
        provider: &str,
        at: Timestamp,
        check_at: Timestamp,
    ) -> Self {
        Self {
            operation_id,
            number,
            route_id,
            provider: provider.to_string(),
            state: AttemptState::Sent,
            acquirer_id: None,
            failure_code: None,
            redirect_url: None,
            latency_ms: None,
            created_at: at,
            updated_at: at,
            next_check_at: Some(check_at),
            unknown_since: None,
            reads: 0,
        }
    }
}

impl Attempt {
    /// A route passed over (its provider already tried, its circuit open, or no time left in
    /// the routing budget): recorded, never called.
    pub fn skipped(
        operation_id: OperationId,
        number: u32,
        route_id: i64,
        provider: &str,
        at: Timestamp,
    ) -> Self {
        Self {
            state: AttemptState::Skipped,
            next_check_at: None,
            ..Self::sent(operation_id, number, route_id, provider, at, at)
        }
    }

    /// Whether the provider was called for it.
    pub fn was_tried(&self) -> bool {
        self.state != AttemptState::Skipped
    }
}

/// The operation's current attempt among its `attempts` (by number): the last one tried.
/// Statuses a provider reports apply to the operation only from this attempt.
pub fn current(attempts: &[Attempt]) -> Option<&Attempt> {
    attempts.iter().rev().find(|a| a.was_tried())
}

/// A final status reported by a provider that contradicts the operation's own: recorded
/// and counted, never corrected by the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discrepancy {
    pub operation_id: OperationId,
    pub provider: String,
    /// The status the provider reported (its own word, e.g. `succeeded`).
    pub reported: String,
    pub at: Timestamp,
}
