//! The [`CallbackLog`] port: a merchant's callbacks, read and requeued by the merchant.

use async_trait::async_trait;

use crate::callback_log::{CallbackOwner, CallbackQuery, LoggedCallback, Requeue};
use crate::Timestamp;

use super::StoreError;

/// A merchant's callbacks in the outbox, as the merchant reads and requeues them.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait CallbackLog: Send + Sync {
    /// Up to `query.limit + 1` of the owner's callbacks that `query` selects, newest first
    /// (by creation time, then id), each with its attempts oldest first.
    async fn callbacks(&self, query: &CallbackQuery) -> Result<Vec<LoggedCallback>, StoreError>;

    /// Sends the owner's callbacks that `which` names again: each becomes pending on a fresh
    /// schedule (no failure in its run), due at `now`, its attempt count going on. A callback
    /// under an attempt now (leased, pending) is left alone. Returns how many were requeued;
    /// `None` when [`Requeue::One`] names no callback of this owner.
    async fn requeue(
        &self,
        owner: &CallbackOwner,
        which: &Requeue,
        now: Timestamp,
    ) -> Result<Option<u64>, StoreError>;
}
