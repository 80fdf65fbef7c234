//! The [`CallbackFormat`] port: the wire format of callback bodies.

use crate::callback::{CallbackData, RefundCallbackData};
use crate::dispute::Dispute;

/// Writes a callback's body: the wire format of callbacks lives in the callback adapter.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait CallbackFormat: Send + Sync {
    /// The exact body to send and sign for `data`; the same data always gives the same body.
    fn body(&self, data: &CallbackData) -> String;

    /// The exact body of a refund's callback, as [`CallbackFormat::body`] for operations.
    fn refund_body(&self, data: &RefundCallbackData) -> String;

    /// The exact body of a dispute's callback (`type: dispute`), for its status now.
    fn dispute_body(&self, dispute: &Dispute) -> String;
}
