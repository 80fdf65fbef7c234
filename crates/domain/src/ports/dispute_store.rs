//! The [`DisputeStore`] port: disputes, their files, decisions and the moves they make.

use async_trait::async_trait;

use crate::callback::QueuedCallback;
use crate::dispute::{Chargeback, Dispute, DisputeFile, DisputeFilter, EvidenceState};
use crate::ledger::BalanceMove;
use crate::{DisputeId, OperationId, Timestamp};

use super::StoreError;

/// A new appeal, its receipt and its `open` callback, in one unit of work.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAppeal {
    pub dispute: Dispute,
    pub receipt: Option<DisputeFile>,
    pub callback: Option<QueuedCallback<Dispute>>,
}

/// Why a new appeal was not stored; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum AppealInsertError {
    /// The deposit has an open or an accepted appeal (even a concurrent insert's).
    #[error("the deposit has an open or accepted appeal")]
    OpenExists,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A dispute's new status, with its moves and callback, in one unit of work.
#[derive(Debug, Clone, PartialEq)]
pub struct DisputeChangeWrite {
    /// The dispute after the change; stored only if the stored one is still undecided.
    pub dispute: Dispute,
    pub moves: Vec<BalanceMove>,
    pub callback: Option<QueuedCallback<Dispute>>,
    /// A chargeback's evidence's new state; `None` leaves it as it is.
    pub evidence: Option<EvidenceState>,
    /// When the reconciler reads a chargeback next (`None`: never, as for a decided one or
    /// an appeal); any lease on it ends.
    pub check_at: Option<Timestamp>,
}

/// A chargeback the acquirer notified, with its moves and callbacks, in one unit of work.
#[derive(Debug, Clone, PartialEq)]
pub struct NewChargeback {
    /// Its dispute, as it stands after everything notified (open, or already decided when
    /// the `open` was not heard).
    pub dispute: Dispute,
    /// The acquirer's name and its id of the dispute: unique among chargebacks.
    pub provider: String,
    pub acquirer_id: String,
    /// The hold, and the outcome's move for a dispute decided already.
    pub moves: Vec<BalanceMove>,
    /// One callback per status it took (`open`, then its outcome), in that order.
    pub callbacks: Vec<QueuedCallback<Dispute>>,
    /// When the reconciler reads it if nothing is heard; `None` once decided.
    pub check_at: Option<Timestamp>,
}

/// Why a new chargeback was not stored; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ChargebackInsertError {
    /// A chargeback with this provider and acquirer id is stored (even a concurrent one).
    #[error("the chargeback is stored already")]
    Exists,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A chargeback's evidence, stored before it is forwarded.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvidence {
    pub dispute_id: DisputeId,
    /// The submission's id: the forwarding call's `Idempotency-Key`.
    pub key: uuid::Uuid,
    pub text: Option<String>,
    /// Numbered after the dispute's stored files.
    pub files: Vec<DisputeFile>,
    pub at: Timestamp,
    /// When the reconciler reads the dispute if the call's answer is never written: once the
    /// call's lease has passed.
    pub check_at: Timestamp,
}

/// Why evidence was not stored; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceInsertError {
    /// The dispute is not an open chargeback, or its evidence is forwarded or pending.
    #[error("the dispute takes no evidence now")]
    NotTaken,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a dispute's change was not written; nothing was.
#[derive(Debug, thiserror::Error)]
pub enum DisputeChangeError {
    /// The stored dispute is decided already (another writer came first).
    #[error("the dispute is decided already")]
    Decided,
    /// A move taking from the available balance found it too low.
    #[error("insufficient balance")]
    InsufficientBalance,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Disputes of deposits: appeals and chargebacks, beside the operations they dispute.
///
/// Every method is one transaction: it either writes everything or nothing.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait DisputeStore: Send + Sync {
    /// Stores a new appeal with its receipt and callback. MUST return `OpenExists` (writing
    /// nothing) if the deposit has an open or an accepted appeal, even one inserted
    /// concurrently: an accepted appeal corrected the deposit once and for all.
    async fn insert_appeal(&self, new: &NewAppeal) -> Result<(), AppealInsertError>;

    /// Writes a dispute's new status with its moves and callback, guarded so that a decided
    /// dispute never changes: MUST return `Decided` (writing nothing) if the stored dispute
    /// is final, and `InsufficientBalance` (writing nothing) if a move would take more from
    /// the available balance than it holds.
    async fn change_dispute(&self, change: &DisputeChangeWrite) -> Result<(), DisputeChangeError>;

    /// The dispute with this id; `Ok(None)` if there is none.
    async fn dispute(&self, id: DisputeId) -> Result<Option<Dispute>, StoreError>;

    /// The disputes of deposit `id`, oldest first (ties by id).
    async fn disputes_of(&self, id: OperationId) -> Result<Vec<Dispute>, StoreError>;

    /// The disputes `filter` selects, newest first (ties by id), at most its limit (capped
    /// at 500).
    async fn list_disputes(&self, filter: &DisputeFilter) -> Result<Vec<Dispute>, StoreError>;

    /// The files of dispute `id` (an appeal's receipt), in the order they came.
    async fn dispute_files(&self, id: DisputeId) -> Result<Vec<DisputeFile>, StoreError>;

    /// Stores a chargeback the acquirer notified with its moves and callbacks. MUST return
    /// `Exists` (writing nothing) if a chargeback with this provider and acquirer id is
    /// stored, even one inserted concurrently. Its `dispute_hold` applies even when it takes
    /// the available balance below zero.
    async fn insert_chargeback(&self, new: &NewChargeback) -> Result<(), ChargebackInsertError>;

    /// The chargeback with this provider and acquirer id; `Ok(None)` if there is none.
    async fn chargeback_at(
        &self,
        provider: &str,
        acquirer_id: &str,
    ) -> Result<Option<Chargeback>, StoreError>;

    /// The chargeback with this id; `Ok(None)` if there is none or it is an appeal.
    async fn chargeback(&self, id: DisputeId) -> Result<Option<Chargeback>, StoreError>;

    /// Stores a chargeback's evidence (text and files) as `pending`, to be read at its
    /// `check_at`. Guarded: MUST return `NotTaken` (writing nothing) unless the dispute is an
    /// open chargeback whose evidence is none or `failed`, even against a concurrent call.
    async fn insert_evidence(&self, new: &NewEvidence) -> Result<(), EvidenceInsertError>;

    /// Sets an undecided chargeback's evidence state (`None` leaves it) and next read, and
    /// ends any lease on it; a decided one is left as it is.
    async fn postpone_chargeback(
        &self,
        id: DisputeId,
        evidence: Option<EvidenceState>,
        check_at: Timestamp,
    ) -> Result<(), StoreError>;

    /// Leases to `owner` until `lease_until` up to `limit` undecided chargebacks whose
    /// `check_at` has come by `now`, not leased or whose lease ended, oldest `check_at`
    /// first. Each is claimed by one caller only, even with several processes on one
    /// database.
    async fn claim_due_chargebacks(
        &self,
        owner: &str,
        now: Timestamp,
        lease_until: Timestamp,
        limit: u32,
    ) -> Result<Vec<Chargeback>, StoreError>;
}
