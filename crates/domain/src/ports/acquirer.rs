//! The [`Acquirer`] port: the Acquirer API, one acquirer per call.

use async_trait::async_trait;

use crate::acquirer::{
    AcquirerDispute, AcquirerPayment, AcquirerRefund, CallResult, Evidence, Lookup, Notification,
    NotificationRefusal, PaymentOrder, RefundOrder,
};
use crate::provider::AcquirerProvider;
use crate::{OperationId, RefundId};

/// The Acquirer API, spoken to one acquirer per call. Every answer comes back classified;
/// nothing here retries a call that may have moved money.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait Acquirer: Send + Sync {
    /// The request header `provider`'s notifications carry their signature in.
    fn notification_signature_header(&self, provider: &AcquirerProvider) -> &'static str;

    /// Reads a notification `provider` sent: `BadSignature` unless `signature` (that
    /// header's value, empty when there is none) signs `body` with the provider's webhook
    /// secret, checked before anything of the body is read; then `BadBody` unless the body
    /// is a notification.
    fn read_notification(
        &self,
        provider: &AcquirerProvider,
        signature: &str,
        body: &[u8],
    ) -> Result<Notification, NotificationRefusal>;

    /// Creates a payment (once: the caller never sends the same order again). An answer
    /// whose reference, kind, amount or currency differ from the order is `Unknown`.
    async fn create(
        &self,
        provider: &AcquirerProvider,
        order: &PaymentOrder,
    ) -> CallResult<AcquirerPayment>;

    /// The payment with this reference, as the acquirer has it now.
    async fn find(
        &self,
        provider: &AcquirerProvider,
        reference: OperationId,
    ) -> Lookup<AcquirerPayment>;

    /// Asks the acquirer to cancel a payment: the payment as it stands afterwards (`canceled`,
    /// or its final status if it already had one), `NotFound`, or `Failed`.
    async fn cancel(
        &self,
        provider: &AcquirerProvider,
        acquirer_id: &str,
    ) -> Lookup<AcquirerPayment>;

    /// Asks the acquirer to refund part of a payment (once: the caller never sends the same
    /// order again). An answer whose amount differs from the order is `Unknown`.
    async fn refund(
        &self,
        provider: &AcquirerProvider,
        order: &RefundOrder,
    ) -> CallResult<AcquirerRefund>;

    /// The refund with this reference, as the acquirer has it now.
    async fn find_refund(
        &self,
        provider: &AcquirerProvider,
        reference: RefundId,
    ) -> Lookup<AcquirerRefund>;

    /// Forwards a chargeback's evidence to the acquirer (once: the caller never sends the
    /// same evidence again; an answer not received is resolved by [`Acquirer::find_dispute`],
    /// whose evidence count says whether it arrived). An answer for another dispute is
    /// `Unknown`.
    async fn submit_evidence(
        &self,
        provider: &AcquirerProvider,
        acquirer_id: &str,
        evidence: &Evidence,
    ) -> CallResult<AcquirerDispute>;

    /// The dispute with this acquirer id, as the acquirer has it now.
    async fn find_dispute(
        &self,
        provider: &AcquirerProvider,
        acquirer_id: &str,
    ) -> Lookup<AcquirerDispute>;
}
