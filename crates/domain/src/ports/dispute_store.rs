//! The [`DisputeStore`] port: disputes, their files, decisions and the moves they make.

use async_trait::async_trait;

use crate::callback::QueuedCallback;
use crate::dispute::{Dispute, DisputeFile, DisputeFilter};
use crate::ledger::BalanceMove;
use crate::{DisputeId, OperationId};

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
}
