//! Acquirers' notifications: authenticated by the acquirer's protocol, then applied to the
//! payment's current attempt (or to a refund) through the core's guarded steps.

use futures::future::{self, Either};

use super::answers::Answers;
use super::payments::Heard;
use super::recent::{Answer, Repeat, IN_FLIGHT_WAIT};
use super::{CompleteError, NotificationError, ReadError};
use crate::acquirer::{
    AcquirerPayment, AcquirerRefund, Failure, FailureMeaning, Notification, NotificationRefusal,
    NotifiedObject, PaymentStatus, RefundStatus,
};
use crate::attempt::{self, Attempt, AttemptState};
use crate::provider::AcquirerProvider;
use crate::{OperationId, RefundId};

impl Answers {
    /// The acquirer with this name, enabled or not, for checking its notifications.
    pub async fn acquirer_named(&self, name: &str) -> Result<Option<AcquirerProvider>, ReadError> {
        Ok(self.calls.providers.acquirer(name).await?)
    }

    /// The request header `provider`'s notifications carry their signature in.
    pub fn notification_signature_header(&self, provider: &AcquirerProvider) -> &'static str {
        self.calls.acquirer.notification_signature_header(provider)
    }

    /// Authenticates and reads a notification `provider` sent, as its protocol's adapter
    /// does (see [`Acquirer::read_notification`](crate::ports::Acquirer::read_notification)).
    pub fn read_notification(
        &self,
        provider: &AcquirerProvider,
        signature: &str,
        body: &[u8],
    ) -> Result<Notification, NotificationRefusal> {
        self.calls
            .acquirer
            .read_notification(provider, signature, body)
    }

    /// Applies an authenticated notification from `provider`. `NotFound` when its reference
    /// has no attempt at this provider or its id differs from the attempt's acquirer id (the
    /// acquirer retries); once this returns `Ok`, the change is committed. A notification
    /// that repeats the status that leaves the operation processing which this process
    /// applied last to it (same provider, acquirer id and failure code) changes nothing: it
    /// is `Ok` once that status is stored, with nothing read or written (`service::recent`).
    #[tracing::instrument(skip_all, fields(provider = %provider.name, operation.id = %notification.reference))]
    pub async fn apply_notification(
        &self,
        provider: &AcquirerProvider,
        notification: Notification,
    ) -> Result<(), NotificationError> {
        if notification.object == NotifiedObject::Dispute {
            let Some(reported) = notification.dispute.as_ref() else {
                return Err(NotificationError::NotFound);
            };
            let known = self
                .core
                .apply_chargeback(provider.name.as_str(), reported)
                .await?;
            return if known {
                Ok(())
            } else {
                Err(NotificationError::NotFound)
            };
        }
        if notification.object == NotifiedObject::Refund {
            let status = match notification.status {
                PaymentStatus::Pending => Some(RefundStatus::Pending),
                PaymentStatus::Succeeded => Some(RefundStatus::Succeeded),
                PaymentStatus::Failed => Some(RefundStatus::Failed),
                // Not a refund's status: recorded as heard, nothing applied.
                PaymentStatus::ActionRequired | PaymentStatus::Canceled => None,
            };
            let known = self
                .apply_refund_notification(
                    provider.name.as_str(),
                    &notification.id,
                    &notification.reference,
                    status,
                    notification.failure,
                )
                .await?;
            return if known {
                Ok(())
            } else {
                Err(NotificationError::NotFound)
            };
        }
        let Ok(id) = OperationId::parse(&notification.reference) else {
            return Err(NotificationError::NotFound);
        };
        let repeated = Answer::of(
            provider.name.as_str(),
            &notification.id,
            notification.status,
            Failure::code_of(notification.failure.as_ref()),
        );
        let repeat = match repeated {
            Some(answer) => self.repeats_once_answered(id, &answer).await,
            None => Repeat::No,
        };
        let stored = match repeat {
            Repeat::No => false,
            Repeat::Stored => true,
            // The creation's save of this very status, queued: the answer waits for its
            // commit (no statement of its own), and takes the full path if it failed.
            Repeat::Queued(committed) => committed.await,
        };
        if stored {
            // Nothing to read or write: this process applied and stored this very status
            // last, and a status that leaves the operation processing moves no money.
            tracing::debug!(
                status = notification.status.as_str(),
                "notification repeats the status stored last; nothing to write"
            );
            return Ok(());
        }
        let Some((operation, attempts)) = self.core.store.get_with_attempts(id).await? else {
            return Err(NotificationError::NotFound);
        };
        let current_number = attempt::current(&attempts).map(|a| a.number);
        let Some(attempt) = attempts
            .into_iter()
            .rev()
            .find(|a| a.was_tried() && a.provider == provider.name.as_str())
        else {
            return Err(NotificationError::NotFound);
        };
        if attempt
            .acquirer_id
            .as_ref()
            .is_some_and(|known| *known != notification.id)
        {
            return Err(NotificationError::NotFound);
        }
        let payment = AcquirerPayment {
            id: notification.id,
            status: notification.status,
            redirect_url: None,
            failure: notification.failure,
        };
        if Some(attempt.number) != current_number {
            return self.record_on_earlier(attempt, &payment).await;
        }
        let definite_failure = payment.status == PaymentStatus::Failed
            && payment.failure_meaning(operation.direction()) == FailureMeaning::Unavailable;
        if attempt.state == AttemptState::Sent && definite_failure {
            // The creation call is still in flight: it decides what follows a definite failure.
            let mut attempt = attempt;
            attempt.acquirer_id = Some(payment.id.clone());
            attempt.failure_code = payment.failure_code().map(str::to_string);
            self.core.store.save_attempt(&attempt).await?;
            return Ok(());
        }
        self.core
            .apply_payment(&operation, attempt, &payment, Heard::Notification)
            .await?;
        Ok(())
    }

    /// Whether `answer` repeats the latest status applied to `id`. If it does not and the
    /// operation's creation call is in flight, the answer of that call is waited for (for at
    /// most [`IN_FLIGHT_WAIT`]) and compared: a notification sent as the creation was
    /// answered most often repeats that answer.
    async fn repeats_once_answered(&self, id: OperationId, answer: &Answer) -> Repeat {
        let repeat = self.core.recent.repeats(id, answer);
        if !matches!(repeat, Repeat::No) {
            return repeat;
        }
        let Some(answered) = self.core.recent.in_flight(id) else {
            return repeat;
        };
        let waited = future::select(answered, self.core.clock.sleep(IN_FLIGHT_WAIT)).await;
        if matches!(waited, Either::Right(_)) {
            tracing::debug!("creation call still in flight; the notification takes the full path");
        }
        self.core.recent.repeats(id, answer)
    }

    /// A status for an earlier attempt is kept on that attempt only; money it says moved is
    /// a discrepancy (the operation went on elsewhere).
    async fn record_on_earlier(
        &self,
        mut attempt: Attempt,
        payment: &AcquirerPayment,
    ) -> Result<(), NotificationError> {
        attempt
            .acquirer_id
            .get_or_insert_with(|| payment.id.clone());
        if let Some(code) = payment.failure_code() {
            attempt.failure_code = Some(code.to_string());
        }
        attempt.updated_at = self.core.clock.now();
        self.core.store.save_attempt(&attempt).await?;
        if payment.status == PaymentStatus::Succeeded {
            self.core
                .record_discrepancy(attempt.operation_id, &attempt.provider, payment.status)
                .await?;
        }
        Ok(())
    }

    /// Applies an acquirer's notification about a refund: the reference must be a refund at
    /// `provider` (and name its acquirer id, once known), else `Ok(false)`.
    async fn apply_refund_notification(
        &self,
        provider: &str,
        id: &str,
        reference: &str,
        status: Option<RefundStatus>,
        failure: Option<Failure>,
    ) -> Result<bool, CompleteError> {
        let Ok(refund_id) = RefundId::parse(reference) else {
            return Ok(false);
        };
        let Some(refund) = self.core.refunds.refund(refund_id).await? else {
            return Ok(false);
        };
        if refund.provider != provider
            || refund
                .acquirer_id
                .as_deref()
                .is_some_and(|known| known != id)
        {
            return Ok(false);
        }
        let Some(status) = status else {
            return Ok(true);
        };
        let reported = AcquirerRefund {
            id: id.to_string(),
            status,
            failure,
        };
        if refund.status().is_final() {
            return Ok(true);
        }
        self.core.apply_refund(refund, &reported).await?;
        Ok(true)
    }
}
