//! What waits in the database's group-commit queues (`crate::group`), one type a queue. They
//! sit below the handle that holds the queues (`crate::database`) and the modules that fill
//! and write them (`crate::directory`, `outbox::grouped`, `store::attempts`), so each of
//! those can name the handle without the handle naming them.

use domain::attempt::Attempt;
use domain::merchant::Merchant;
use domain::ports::StoreError;
use tokio::sync::oneshot;

use crate::rows::MerchantProfile;

/// One request's read of its merchant's secrets, queued for `Database::with_keys_grouped`.
pub(crate) struct KeyJob {
    pub(crate) profile: MerchantProfile,
    pub(crate) reply: oneshot::Sender<Result<Merchant, StoreError>>,
}

/// What one attempt writes: the outbox row's new state (if this owner still holds its lease)
/// and the attempt's log entry.
#[derive(Clone)]
pub(crate) struct Recorded {
    /// The outbox row's key (see `outbox::callback_key`).
    pub(crate) key: String,
    pub(crate) owner: String,
    pub(crate) state: &'static str,
    pub(crate) failed: i32,
    pub(crate) next: Option<i64>,
    pub(crate) error: Option<String>,
    pub(crate) updated_at: i64,
    pub(crate) attempt: i32,
    pub(crate) at: i64,
    pub(crate) duration_ms: i64,
    pub(crate) http_status: Option<i32>,
    pub(crate) attempt_error: Option<String>,
}

/// One queued record and where its answer goes.
pub(crate) struct RecordJob {
    pub(crate) recorded: Recorded,
    pub(crate) reply: oneshot::Sender<Result<bool, StoreError>>,
}

/// A queued attempt save, and where its answer goes.
pub(crate) struct AttemptSave {
    pub(crate) attempt: Attempt,
    pub(crate) reply: oneshot::Sender<Result<(), StoreError>>,
    /// Whether its caller waits for the answer; one that does not may still ask for it later
    /// (see `OperationStore::save_attempt_soon`).
    pub(crate) awaited: bool,
}
