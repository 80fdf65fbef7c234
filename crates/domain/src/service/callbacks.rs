//! Which callback a final operation or refund queues, written in the same unit of work as
//! its final status. The body's wire format is the [`CallbackFormat`] port's.

use crate::callback::{CallbackData, QueuedCallback, RefundCallback, RefundCallbackData};
use crate::operation::Operation;
use crate::ports::CallbackFormat;
use crate::refund::Refund;

/// The callback for `done`, if it is final and has a `callbackUrl`.
pub fn callback_for(done: &Operation, format: &dyn CallbackFormat) -> Option<QueuedCallback> {
    if !done.status().is_final() {
        return None;
    }
    let url = done.urls().callback.clone()?;
    let data = CallbackData::of(done);
    let body = format.body(&data);
    Some(QueuedCallback {
        operation_id: done.id(),
        merchant_id: done.merchant_id().clone(),
        direction: done.direction(),
        url,
        data,
        body,
        queued_at: done.updated_at(),
    })
}

/// The callback for `done`, a refund, if it is final and has a callback URL (its own, or
/// else the deposit's, already filled in when the refund was made).
pub fn refund_callback_for(done: &Refund, format: &dyn CallbackFormat) -> Option<RefundCallback> {
    if !done.status().is_final() {
        return None;
    }
    let url = done.callback_url.clone()?;
    let data = RefundCallbackData::of(done);
    let body = format.refund_body(&data);
    Some(RefundCallback {
        refund_id: done.id,
        operation_id: done.operation_id,
        merchant_id: done.merchant_id.clone(),
        url,
        data,
        body,
        queued_at: done.updated_at,
    })
}
