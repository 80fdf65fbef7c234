//! Which callback a final operation or refund, or a dispute's change, queues, written in the
//! same unit of work as the status: one envelope ([`QueuedCallback`]) whatever moved. The body's wire
//! format is the [`CallbackFormat`] port's.

use crate::callback::{
    CallbackBody, CallbackData, DisputeChange, QueuedCallback, RefundCallbackData, Reported,
};
use crate::dispute::Dispute;
use crate::operation::Operation;
use crate::ports::CallbackFormat;
use crate::refund::Refund;
use crate::Direction;

/// The callback for `done`, if it is final and has a `callbackUrl`.
pub fn callback_for(done: &Operation, format: &dyn CallbackFormat) -> Option<QueuedCallback> {
    if !done.status().is_final() {
        return None;
    }
    let envelope = QueuedCallback {
        operation_id: done.id(),
        refund_id: None,
        dispute: None,
        merchant_id: done.merchant_id().clone(),
        direction: done.direction(),
        url: done.urls().callback.clone()?,
        data: CallbackData::of(done),
        body: CallbackBody::default(),
        queued_at: done.updated_at(),
    };
    Some(written(envelope, format))
}

/// The callback for `done`, a refund, if it is final and has a callback URL (its own, or
/// else the deposit's, already filled in when the refund was made). It is signed as its
/// deposit's.
pub fn refund_callback_for(
    done: &Refund,
    format: &dyn CallbackFormat,
) -> Option<QueuedCallback<RefundCallbackData>> {
    if !done.status().is_final() {
        return None;
    }
    let envelope = QueuedCallback {
        operation_id: done.operation_id,
        refund_id: Some(done.id),
        dispute: None,
        merchant_id: done.merchant_id.clone(),
        direction: Direction::Deposit,
        url: done.callback_url.clone()?,
        data: RefundCallbackData::of(done),
        body: CallbackBody::default(),
        queued_at: done.updated_at,
    };
    Some(written(envelope, format))
}

/// The callback for `dispute`'s status now, change `change_id`, to its deposit's callback
/// URL if it has one, signed as its deposit's. Every status a dispute reaches is reported,
/// `open` included.
pub fn dispute_callback_for(
    dispute: &Dispute,
    deposit: &Operation,
    change_id: uuid::Uuid,
    format: &dyn CallbackFormat,
) -> Option<QueuedCallback<Dispute>> {
    let envelope = QueuedCallback {
        operation_id: dispute.operation_id,
        refund_id: None,
        dispute: Some(DisputeChange {
            dispute_id: dispute.id,
            change_id,
        }),
        merchant_id: dispute.merchant_id.clone(),
        direction: Direction::Deposit,
        url: deposit.urls().callback.clone()?,
        data: dispute.clone(),
        body: CallbackBody::default(),
        queued_at: dispute.updated_at,
    };
    Some(written(envelope, format))
}

/// `envelope` with its body written from its data.
fn written<D: Reported>(
    mut envelope: QueuedCallback<D>,
    format: &dyn CallbackFormat,
) -> QueuedCallback<D> {
    envelope.body = envelope.data.body(format);
    envelope
}
