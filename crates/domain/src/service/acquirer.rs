//! Acquirer operations after they are stored: the creation call and its answer, the
//! acquirer's notifications, and the one read a payment page may make (see `pay_pages`).
//!
//! Every status learned from an acquirer goes through [`Gateway::apply_payment`]: it applies
//! only to a processing operation and only from its current attempt, a final status is
//! written once (guarded), and a final status that contradicts the operation's own is
//! recorded as a discrepancy, never applied.

use futures::future::{self, Either};

use super::millis;
use super::recent::{Answer, Repeat, IN_FLIGHT_WAIT};
use super::{CompleteError, Gateway, NotificationError, ReadError};
use crate::acquirer::{
    next_quiet_read, next_unknown_read, outcome_of, AcquirerPayment, CallResult, Failure,
    FailureMeaning, Lookup, Notification, NotificationRefusal, NotifiedObject, PaymentOrder,
    PaymentStatus, RefundStatus, NOT_AFTER_SECS,
};
use crate::attempt::{self, Attempt, AttemptState, Discrepancy};
use crate::operation::{Decline, DeclineCode, Operation, Outcome};
use crate::ports::Chain;
use crate::provider::AcquirerProvider;
use crate::{Direction, OperationId, Timestamp, WithdrawalRequisites};

/// Where a payment's status was heard from: a read that finds nothing new makes the next
/// quiet read wait longer; anything else starts the quiet schedule again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Heard {
    Creation,
    Notification,
    Read,
}

impl Gateway {
    /// The gateway's payment page for a deposit: `{public_url}/pay/{id}`.
    pub fn pay_url(&self, id: OperationId) -> String {
        format!("{}/pay/{id}", self.acquirers.public_url)
    }

    /// Where an acquirer sends the user back after paying.
    fn return_url(&self, id: OperationId) -> String {
        format!("{}/pay/{id}/return", self.acquirers.public_url)
    }

    /// Where an acquirer posts its notifications.
    fn notify_url(&self, provider: &str) -> String {
        format!(
            "{}/providers/{provider}/notifications",
            self.acquirers.public_url
        )
    }

    /// Sends the creation call of a committed attempt, once. Returns what it answered and the
    /// attempt with the call's latency.
    pub(super) async fn call_creation(
        &self,
        operation: &Operation,
        mut attempt: Attempt,
        payout: Option<&WithdrawalRequisites>,
        acquirer: &AcquirerProvider,
    ) -> (CallResult<AcquirerPayment>, Attempt) {
        let is_deposit = operation.direction() == Direction::Deposit;
        let order = PaymentOrder {
            reference: operation.id(),
            direction: operation.direction(),
            method: operation.method(),
            amount: operation.amount(),
            currency: operation.currency(),
            notify_url: self.notify_url(acquirer.name.as_str()),
            not_after: attempt.created_at.plus_seconds(NOT_AFTER_SECS),
            return_url: is_deposit.then(|| self.return_url(operation.id())),
            expires_at: operation.expires_at(),
            payout: payout.cloned(),
        };
        let sent_at = self.ports.clock.now();
        let result = self.ports.acquirer.create(acquirer, &order).await;
        drop(order);
        let now = self.ports.clock.now();
        attempt.latency_ms = Some((now.millis() - sent_at.millis()).max(0));
        attempt.updated_at = now;
        (result, attempt)
    }

    /// Writes what a creation call answered for `attempt`: the payment's status as the
    /// acquirer gave it, a decline with `ProviderUnavailable` after a definite failure, or an
    /// unknown outcome for the reconciler to read. Returns the operation as it now stands;
    /// any failure to write leaves it processing for the reconciler.
    pub(super) async fn apply_creation(
        &self,
        operation: Operation,
        mut attempt: Attempt,
        result: CallResult<AcquirerPayment>,
        acquirer: &AcquirerProvider,
    ) -> Operation {
        let now = attempt.updated_at;
        if !matches!(result, CallResult::Answered(_)) {
            // No answer: a status a notification applied while the call was in flight no
            // longer describes the attempt, so the next notification takes the full path.
            self.recent.forget(operation.id());
        }
        let applied = match result {
            CallResult::Answered(payment) => {
                self.apply_payment(&operation, attempt, &payment, Heard::Creation)
                    .await
            }
            CallResult::Unavailable(reason) => {
                tracing::warn!(operation.id = %operation.id(), provider = %acquirer.name, %reason, "acquirer unavailable at creation");
                attempt.state = AttemptState::Unavailable;
                attempt.next_check_at = None;
                self.finish_then_save(&operation, &attempt, unavailable(), PaymentStatus::Failed)
                    .await
            }
            CallResult::Unknown(reason) => {
                tracing::warn!(operation.id = %operation.id(), provider = %acquirer.name, %reason, "acquirer outcome unknown at creation; the reconciler reads it");
                attempt.state = AttemptState::Unknown;
                attempt.unknown_since = Some(now);
                attempt.reads = 0;
                attempt.next_check_at = Some(next_unknown_read(now, now));
                self.ports
                    .store
                    .save_attempt(&attempt)
                    .await
                    .map(|()| operation.clone())
                    .map_err(CompleteError::from)
            }
        };
        match applied {
            Ok(current) => current,
            Err(error) => {
                tracing::error!(operation.id = %operation.id(), error = %Chain(&error), "acquirer answer not written; the reconciler reads it");
                operation
            }
        }
    }

    /// Applies a payment's status, as its current attempt's acquirer reported it, to the
    /// operation: the attempt learns the acquirer's id, page and failure code; a final status
    /// finishes a processing operation once; one that contradicts a final operation is a
    /// discrepancy. Returns the operation as it now stands.
    pub(super) async fn apply_payment(
        &self,
        operation: &Operation,
        mut attempt: Attempt,
        payment: &AcquirerPayment,
        heard: Heard,
    ) -> Result<Operation, CompleteError> {
        let now = self.ports.clock.now();
        attempt
            .acquirer_id
            .get_or_insert_with(|| payment.id.clone());
        if payment.redirect_url.is_some() {
            attempt.redirect_url.clone_from(&payment.redirect_url);
        }
        if let Some(code) = payment.failure_code() {
            attempt.failure_code = Some(code.to_string());
        }
        // Found at last: from here on the quiet schedule applies, starting afresh.
        let was_unknown = attempt.unknown_since.take().is_some()
            || matches!(attempt.state, AttemptState::Sent | AttemptState::Unknown);
        attempt.updated_at = now;
        if matches!(attempt.state, AttemptState::Sent | AttemptState::Unknown) {
            attempt.state = attempt_state_for(payment, operation.direction());
        }
        let Some(outcome) = self.outcome_for(operation, payment, now) else {
            attempt.reads = if heard == Heard::Read && !was_unknown {
                attempt.reads + 1
            } else {
                0
            };
            attempt.next_check_at = Some(self.quiet_check(operation, now, attempt.reads));
            let answer = attempt.acquirer_id.as_deref().and_then(|known| {
                Answer::of(
                    &attempt.provider,
                    known,
                    payment.status,
                    payment.failure_code(),
                )
            });
            let queued = if heard == Heard::Creation {
                // The operation stays processing, so the merchant's answer does not depend
                // on this write: it is not waited for. Lost with the process, it leaves the
                // attempt `sent`, due at its lease's end, and the reconciler reads it.
                Some(self.ports.store.save_attempt_soon(attempt))
            } else {
                self.ports.store.save_attempt(&attempt).await?;
                None
            };
            self.recent.applied(operation.id(), answer, queued);
            return Ok(operation.clone());
        };
        self.recent.forget(operation.id());
        attempt.next_check_at = None;
        if operation.status().is_final() {
            self.ports.store.save_attempt(&attempt).await?;
            self.check_agreement(operation, &outcome, payment.status, &attempt.provider)
                .await?;
            return Ok(operation.clone());
        }
        self.finish_then_save(operation, &attempt, outcome, payment.status)
            .await
    }

    /// The outcome a payment's status gives `operation` at `now`: as [`outcome_of`] says, except
    /// that `canceled` is `Expired` only for a deposit whose lifetime has passed, and
    /// `Canceled` otherwise (an operator's cancel).
    fn outcome_for(
        &self,
        operation: &Operation,
        payment: &AcquirerPayment,
        now: Timestamp,
    ) -> Option<Outcome> {
        let outcome = outcome_of(payment, operation.direction())?;
        if payment.status != PaymentStatus::Canceled {
            return Some(outcome);
        }
        let lapsed = operation.direction() == Direction::Deposit
            && operation.expires_at().is_some_and(|end| end <= now);
        Some(if lapsed {
            outcome
        } else {
            Outcome::Decline(Decline::new(DeclineCode::Canceled))
        })
    }

    /// Writes the operation's final status (guarded: if another writer finished it first, its
    /// status stands and is checked against `outcome`, as `reported` by the acquirer; if a
    /// later attempt was tried meanwhile, the status is the attempt's alone), then the
    /// attempt. In that order: if the final status cannot be written, the attempt keeps
    /// its due check and the reconciler comes back to it; once it is written, a stale
    /// attempt is cleared by the reconciler's first look.
    async fn finish_then_save(
        &self,
        operation: &Operation,
        attempt: &Attempt,
        outcome: Outcome,
        reported: PaymentStatus,
    ) -> Result<Operation, CompleteError> {
        let finished = self
            .finish_from(operation, outcome.clone(), Some(attempt.number))
            .await;
        let current = match finished {
            Err(CompleteError::InvalidState) => {
                let current = self.operation(operation.id()).await?;
                if current.status().is_final() {
                    self.check_agreement(&current, &outcome, reported, &attempt.provider)
                        .await?;
                } else if reported == PaymentStatus::Succeeded {
                    // Still processing: a later attempt was tried meanwhile, so this one's
                    // money moved beside it.
                    self.record_discrepancy(operation.id(), &attempt.provider, reported)
                        .await?;
                }
                current
            }
            finished => finished?,
        };
        self.ports.store.save_attempt(attempt).await?;
        Ok(current)
    }

    /// Records a discrepancy when a provider's final status contradicts the operation's.
    async fn check_agreement(
        &self,
        operation: &Operation,
        outcome: &Outcome,
        reported: PaymentStatus,
        provider: &str,
    ) -> Result<(), CompleteError> {
        let approved = operation.status() == crate::Status::Approved;
        let contradicts = match outcome {
            Outcome::Approve => !approved,
            Outcome::Decline(_) => approved,
        };
        if contradicts && operation.status().is_final() {
            self.record_discrepancy(operation.id(), provider, reported)
                .await?;
        }
        Ok(())
    }

    async fn record_discrepancy(
        &self,
        id: OperationId,
        provider: &str,
        reported: PaymentStatus,
    ) -> Result<(), CompleteError> {
        tracing::error!(operation.id = %id, provider, reported = reported.as_str(), "provider reports a final status that contradicts the operation's; recorded as a discrepancy");
        let discrepancy = Discrepancy {
            operation_id: id,
            provider: provider.to_string(),
            reported: reported.as_str().to_string(),
            at: self.ports.clock.now(),
        };
        self.ports.store.record_discrepancy(&discrepancy).await?;
        Ok(())
    }

    /// When a quiet processing operation is read next: on the quiet schedule, and for a
    /// deposit no later than its lifetime's end (when the reconciler cancels it).
    pub(super) fn quiet_check(
        &self,
        operation: &Operation,
        now: Timestamp,
        reads: u32,
    ) -> Timestamp {
        let next = next_quiet_read(now, self.acquirers.reconcile_after, reads);
        match operation.expires_at() {
            Some(end) if end > now && operation.direction() == Direction::Deposit => next.min(end),
            _ => next,
        }
    }

    /// The acquirer with this name, enabled or not, for checking its notifications.
    pub async fn acquirer_named(&self, name: &str) -> Result<Option<AcquirerProvider>, ReadError> {
        Ok(self.ports.providers.acquirer(name).await?)
    }

    /// The request header `provider`'s notifications carry their signature in.
    pub fn notification_signature_header(&self, provider: &AcquirerProvider) -> &'static str {
        self.ports.acquirer.notification_signature_header(provider)
    }

    /// Authenticates and reads a notification `provider` sent, as its protocol's adapter
    /// does (see [`Acquirer::read_notification`](crate::ports::Acquirer::read_notification)).
    pub fn read_notification(
        &self,
        provider: &AcquirerProvider,
        signature: &str,
        body: &[u8],
    ) -> Result<Notification, NotificationRefusal> {
        self.ports
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
        let Some((operation, attempts)) = self.ports.store.get_with_attempts(id).await? else {
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
            self.ports.store.save_attempt(&attempt).await?;
            return Ok(());
        }
        self.apply_payment(&operation, attempt, &payment, Heard::Notification)
            .await?;
        Ok(())
    }

    /// Whether `answer` repeats the latest status applied to `id`. If it does not and the
    /// operation's creation call is in flight, the answer of that call is waited for (for at
    /// most [`IN_FLIGHT_WAIT`]) and compared: a notification sent as the creation was
    /// answered most often repeats that answer.
    async fn repeats_once_answered(&self, id: OperationId, answer: &Answer) -> Repeat {
        let repeat = self.recent.repeats(id, answer);
        if !matches!(repeat, Repeat::No) {
            return repeat;
        }
        let Some(answered) = self.recent.in_flight(id) else {
            return repeat;
        };
        let waited = future::select(answered, self.ports.clock.sleep(IN_FLIGHT_WAIT)).await;
        if matches!(waited, Either::Right(_)) {
            tracing::debug!("creation call still in flight; the notification takes the full path");
        }
        self.recent.repeats(id, answer)
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
        attempt.updated_at = self.ports.clock.now();
        self.ports.store.save_attempt(&attempt).await?;
        if payment.status == PaymentStatus::Succeeded {
            self.record_discrepancy(attempt.operation_id, &attempt.provider, payment.status)
                .await?;
        }
        Ok(())
    }

    /// The operation's current attempt: the last one tried.
    pub(super) async fn current_attempt(
        &self,
        id: OperationId,
    ) -> Result<Option<Attempt>, crate::ports::StoreError> {
        Ok(attempt::current(&self.ports.store.attempts(id).await?).cloned())
    }

    /// Whether `id` is an acquirer deposit.
    pub async fn acquirer_deposit(&self, id: OperationId) -> Result<Operation, ReadError> {
        let operation = self.operation(id).await?;
        if operation.is_sandbox() || operation.direction() != Direction::Deposit {
            return Err(ReadError::NotFound);
        }
        Ok(operation)
    }

    /// Reads the payment of `attempt` once and applies what is found; any failure leaves the
    /// operation as it was (the reconciler reads it later).
    pub(super) async fn read_once(
        &self,
        operation: Operation,
        attempt: Attempt,
    ) -> Result<Operation, ReadError> {
        let Some(acquirer) = self.ports.providers.acquirer(&attempt.provider).await? else {
            return Ok(operation);
        };
        match self.ports.acquirer.find(&acquirer, operation.id()).await {
            Lookup::Found(payment) if same_payment(&attempt, &payment) => {
                match self
                    .apply_payment(&operation, attempt, &payment, Heard::Notification)
                    .await
                {
                    Ok(current) => Ok(current),
                    Err(error) => {
                        tracing::warn!(operation.id = %operation.id(), error = %Chain(&error), "payment read but not applied");
                        Ok(operation)
                    }
                }
            }
            _ => Ok(operation),
        }
    }
}

/// Whether `payment` is the attempt's (its acquirer id, once known, names it).
pub(super) fn same_payment(attempt: &Attempt, payment: &AcquirerPayment) -> bool {
    attempt
        .acquirer_id
        .as_ref()
        .is_none_or(|known| *known == payment.id)
}

/// The attempt state a payment's status gives an attempt whose answer was not known.
fn attempt_state_for(payment: &AcquirerPayment, direction: Direction) -> AttemptState {
    if payment.status != PaymentStatus::Failed {
        return AttemptState::Ok;
    }
    match payment.failure_meaning(direction) {
        FailureMeaning::Unavailable => AttemptState::Unavailable,
        FailureMeaning::Declined(_) => AttemptState::Declined,
    }
}

/// The outcome of a definite failure.
pub(super) fn unavailable() -> Outcome {
    Outcome::Decline(Decline::new(DeclineCode::ProviderUnavailable))
}

/// Milliseconds of a provider's lease, for the reconciler's claims.
pub(super) fn lease_millis(acquirer: &AcquirerProvider) -> i64 {
    millis(acquirer.lease())
}

/// Why an operator's cancel at the provider did not cancel.
#[derive(Debug, thiserror::Error)]
pub enum CancelError {
    #[error("operation not found")]
    NotFound,
    /// Already final (or the provider had already finished it: that status now applies).
    #[error("the operation is already final")]
    Final(Box<Operation>),
    /// The sandbox's operations are not canceled at a provider.
    #[error("only operations at an acquirer are canceled at their provider")]
    NotAtAcquirer,
    /// The acquirer could not be asked, or its answer is not known: nothing changed; retry.
    #[error("the acquirer's answer is not known; nothing changed")]
    Unavailable(String),
    #[error(transparent)]
    Complete(#[from] CompleteError),
}

impl From<ReadError> for CancelError {
    fn from(error: ReadError) -> Self {
        CancelError::Complete(error.into())
    }
}

impl From<crate::ports::StoreError> for CancelError {
    fn from(error: crate::ports::StoreError) -> Self {
        CancelError::Complete(error.into())
    }
}

impl Gateway {
    /// Asks the acquirer to cancel a processing operation (after resolving the acquirer's id by
    /// reference when it is not known) and applies its answer: `canceled` declines it as
    /// `Canceled`; a final status the payment already had applies as it is (and is `Final`).
    /// No operator action sets a status directly.
    #[tracing::instrument(skip(self), fields(operation.id = %id))]
    pub async fn cancel_at_provider(&self, id: OperationId) -> Result<Operation, CancelError> {
        let operation = self.operation(id).await.map_err(|error| match error {
            ReadError::NotFound => CancelError::NotFound,
            other => other.into(),
        })?;
        if operation.status().is_final() {
            return Err(CancelError::Final(Box::new(operation)));
        }
        if operation.is_sandbox() {
            return Err(CancelError::NotAtAcquirer);
        }
        let attempt = self
            .current_attempt(id)
            .await?
            .ok_or(CancelError::NotAtAcquirer)?;
        let acquirer = self
            .ports
            .providers
            .acquirer(&attempt.provider)
            .await?
            .ok_or(CancelError::NotAtAcquirer)?;
        let now = self.ports.clock.now();
        let acquirer_id = match &attempt.acquirer_id {
            Some(known) => known.clone(),
            None => match self.ports.acquirer.find(&acquirer, id).await {
                Lookup::Found(payment) if payment.status.is_final() => {
                    let current = self
                        .apply_payment(&operation, attempt, &payment, Heard::Read)
                        .await?;
                    return Err(CancelError::Final(Box::new(current)));
                }
                Lookup::Found(payment) => payment.id,
                Lookup::NotFound
                    if now >= crate::acquirer::not_found_final_at(attempt.created_at) =>
                {
                    let done = self
                        .finish(
                            &operation,
                            Outcome::Decline(Decline::new(DeclineCode::Canceled)),
                        )
                        .await?;
                    return Ok(done);
                }
                Lookup::NotFound => {
                    return Err(CancelError::Unavailable(
                        "the acquirer does not know the payment yet".into(),
                    ))
                }
                Lookup::Failed(reason) => return Err(CancelError::Unavailable(reason)),
            },
        };
        match self.ports.acquirer.cancel(&acquirer, &acquirer_id).await {
            Lookup::Found(payment) if payment.id == acquirer_id => {
                let canceled = payment.status == PaymentStatus::Canceled;
                let current = self
                    .apply_payment(&operation, attempt, &payment, Heard::Read)
                    .await?;
                if !current.status().is_final() {
                    Err(CancelError::Unavailable(format!(
                        "the acquirer answered {} and did not cancel",
                        payment.status.as_str()
                    )))
                } else if canceled && current.status() != crate::Status::Approved {
                    Ok(current)
                } else {
                    Err(CancelError::Final(Box::new(current)))
                }
            }
            Lookup::Found(_) => Err(CancelError::Unavailable(
                "the acquirer answered for another payment".into(),
            )),
            Lookup::NotFound => Err(CancelError::Unavailable(
                "the acquirer does not know the payment".into(),
            )),
            Lookup::Failed(reason) => Err(CancelError::Unavailable(reason)),
        }
    }
}
