//! The [`CallbackFormat`] port: the wire format of callback bodies.

use crate::callback::{CallbackBody, CallbackData, RefundCallbackData};
use crate::dispute::Dispute;

/// Writes a callback's body: the wire format of callbacks lives in the callback adapter.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait CallbackFormat: Send + Sync {
    /// The body to send and sign for `data`, around its sequence number (the outbox draws
    /// it); the same data always gives the same body.
    fn body(&self, data: &CallbackData) -> CallbackBody;

    /// The exact body of a refund's callback, as [`CallbackFormat::body`] for operations.
    fn refund_body(&self, data: &RefundCallbackData) -> CallbackBody;

    /// The exact body of a dispute's callback (`type: dispute`), for its status now.
    fn dispute_body(&self, dispute: &Dispute) -> CallbackBody;
}
