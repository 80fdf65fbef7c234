//! Everything recorded about one operation, for the operator (`gateway operation show`): the
//! operation, its provider attempts, its ledger entries (manual ones that name it included)
//! and its callback deliveries, its refunds' included, and its discrepancies.
//!
//! Nothing here decides anything: these are read-only records, gathered by
//! [`crate::operator::Operator::operation_story`].

use crate::attempt::Attempt;
use crate::callback::{CallbackAttempt, CallbackState};
use crate::discrepancy::RecordedDiscrepancy;
use crate::ledger::{EntryKind, ManualNote};
use crate::operation::Operation;
use crate::{Currency, RefundId, Timestamp};

/// One ledger entry written for an operation (or for one of its refunds), as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    /// The entry's number in the ledger: later entries have larger ones.
    pub id: i64,
    pub kind: EntryKind,
    pub currency: Currency,
    /// Change of the available balance, in minor units.
    pub available: i64,
    /// Change of the held balance, in minor units.
    pub held: i64,
    pub at: Timestamp,
    /// The refund that wrote it, for a refund's entry.
    pub refund_id: Option<RefundId>,
    /// Who made it and why, for a manual entry that names the operation.
    pub note: Option<ManualNote>,
}

/// An operation's callback, or one of its refunds': where it stands in the outbox and each
/// delivery attempt made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackDelivery {
    /// The refund it reports, for a refund's callback; `None` for the operation's own.
    pub refund_id: Option<RefundId>,
    /// The dispute and the change of it it reports, for a dispute's callback.
    pub dispute: Option<crate::callback::DisputeChange>,
    pub url: String,
    pub state: CallbackState,
    /// Attempts made so far over the callback's whole life, operator retries included.
    pub attempts: u32,
    /// When the next attempt is due; `None` once delivered or failed.
    pub next_attempt_at: Option<Timestamp>,
    /// Why the last attempt failed (or why the callback was given up), if it did.
    pub last_error: Option<String>,
    /// When the callback was queued (with the final status it reports).
    pub queued_at: Timestamp,
    pub updated_at: Timestamp,
    /// Every attempt recorded, by number.
    pub deliveries: Vec<CallbackAttempt>,
}

/// One operation and everything recorded about it.
///
/// The parts are read one after another, not as one snapshot: an operation that changes
/// meanwhile may show a ledger entry or a callback its status does not explain yet.
#[derive(Debug, Clone, PartialEq)]
pub struct OperationStory {
    pub operation: Operation,
    /// Its provider attempts, by number (empty for operations made before attempts were
    /// recorded).
    pub attempts: Vec<Attempt>,
    /// Its ledger entries, its refunds' included, oldest first.
    pub ledger: Vec<LedgerEntry>,
    /// Its own callback (none without a `callbackUrl` or while it is processing), then its
    /// refunds' callbacks in the order they were queued.
    pub callbacks: Vec<CallbackDelivery>,
    /// The discrepancies providers reported for it, oldest first, open or resolved.
    pub discrepancies: Vec<RecordedDiscrepancy>,
}
