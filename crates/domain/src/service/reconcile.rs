//! The reconciler: reads acquirer operations whose outcome is unknown or that have been
//! quiet too long, and cancels acquirer deposits whose lifetime has passed. Its work is
//! leased across processes; it never creates or re-sends a payment.

use super::answers::Answers;
use super::calls::lease_millis;
use super::payments::{same_payment, unavailable, Heard};
use super::CompleteError;
use crate::acquirer::{next_unknown_read, not_found_final_at, Lookup, PaymentStatus};
use crate::attempt::{Attempt, AttemptState};
use crate::operation::{Operation, Outcome};
use crate::ports::Chain;
use crate::provider::AcquirerProvider;
use crate::{Direction, Timestamp};

/// Most attempts one claim takes: few, so each is worked on well inside its lease.
const CLAIM_BATCH: u32 = 4;

/// How long one pass keeps claiming at one provider before it moves on to the next.
const PASS_BUDGET_MS: i64 = 2_000;

impl Answers {
    /// One pass of the reconciler as `owner` (this process's id): at each acquirer, claims the
    /// attempts that are due, a few at a time, and reads, or cancels, each once; a claimed
    /// attempt whose lease no longer covers a whole call is left for the next claim. Returns
    /// how many it looked at.
    pub async fn reconcile(&self, owner: &str) -> Result<usize, CompleteError> {
        let mut looked_at = 0;
        for acquirer in self.calls.providers.acquirers().await? {
            let started = self.core.clock.now();
            let call = super::millis(acquirer.timeout);
            loop {
                let now = self.core.clock.now();
                let lease_until = now.plus_millis(lease_millis(&acquirer));
                let due = self
                    .core
                    .store
                    .claim_checks(acquirer.name.as_str(), owner, now, lease_until, CLAIM_BATCH)
                    .await?;
                let claimed = due.len();
                for attempt in due {
                    if self.core.clock.now().plus_millis(call) > lease_until {
                        break;
                    }
                    looked_at += 1;
                    let id = attempt.operation_id;
                    if let Err(error) = self.check(&acquirer, attempt).await {
                        tracing::warn!(operation.id = %id, provider = %acquirer.name, error = %Chain(&error), "reconciler check failed; it is retried when the lease ends");
                    }
                }
                let spent = self.core.clock.now().millis() - started.millis();
                if claimed < CLAIM_BATCH as usize || spent > PASS_BUDGET_MS {
                    break;
                }
            }
        }
        Ok(looked_at)
    }

    /// Looks at one claimed attempt: a deposit past its lifetime is cancelled at the
    /// acquirer, anything else is read.
    async fn check(
        &self,
        acquirer: &AcquirerProvider,
        mut attempt: Attempt,
    ) -> Result<(), CompleteError> {
        let now = self.core.clock.now();
        let operation = match self.core.store.get(attempt.operation_id).await? {
            Some(operation) if !operation.status().is_final() => operation,
            _ => {
                attempt.next_check_at = None;
                self.core.store.save_attempt(&attempt).await?;
                return Ok(());
            }
        };
        if attempt.state == AttemptState::Sent {
            // The creating process never wrote the answer (it died or lost it): from the end
            // of its lease the outcome is unknown, and it is read on that schedule.
            let since = attempt.next_check_at.unwrap_or(now);
            attempt.state = AttemptState::Unknown;
            attempt.unknown_since = Some(since);
            attempt.reads = 0;
            attempt.next_check_at = Some(next_unknown_read(since, since));
            attempt.updated_at = now;
            self.core.store.save_attempt(&attempt).await?;
            return Ok(());
        }
        let expired = operation.direction() == Direction::Deposit
            && operation.expires_at().is_some_and(|end| end <= now);
        if expired {
            self.cancel_expired(acquirer, &operation, attempt, now)
                .await
        } else {
            self.read_payment(acquirer, &operation, attempt, now).await
        }
    }

    /// Reads the attempt's payment by reference and applies it.
    async fn read_payment(
        &self,
        acquirer: &AcquirerProvider,
        operation: &Operation,
        attempt: Attempt,
        now: Timestamp,
    ) -> Result<(), CompleteError> {
        match self.calls.acquirer.find(acquirer, operation.id()).await {
            Lookup::Found(payment) if same_payment(&attempt, &payment) => {
                self.core
                    .apply_payment(operation, attempt, &payment, Heard::Read)
                    .await?;
                Ok(())
            }
            Lookup::Found(payment) => {
                tracing::error!(operation.id = %operation.id(), provider = %acquirer.name, found = %payment.id, "the acquirer's payment for this reference has another id than the attempt's; nothing applied");
                self.read_later(operation, attempt, now).await
            }
            Lookup::NotFound => self.not_found(operation, attempt, now, unavailable()).await,
            Lookup::Failed(reason) => {
                tracing::debug!(operation.id = %operation.id(), %reason, "reconciler read failed");
                self.read_later(operation, attempt, now).await
            }
        }
    }

    /// Cancels a deposit whose lifetime has passed at the acquirer and applies the answer:
    /// `canceled` declines it as `Expired`, a final status it already had applies as it is.
    async fn cancel_expired(
        &self,
        acquirer: &AcquirerProvider,
        operation: &Operation,
        attempt: Attempt,
        now: Timestamp,
    ) -> Result<(), CompleteError> {
        let acquirer_id = match &attempt.acquirer_id {
            Some(id) => id.clone(),
            None => match self.calls.acquirer.find(acquirer, operation.id()).await {
                Lookup::Found(payment) if payment.status.is_final() => {
                    self.core
                        .apply_payment(operation, attempt, &payment, Heard::Read)
                        .await?;
                    return Ok(());
                }
                Lookup::Found(payment) => payment.id,
                Lookup::NotFound => {
                    return self
                        .not_found(operation, attempt, now, Outcome::expired())
                        .await
                }
                Lookup::Failed(_) => return self.read_later(operation, attempt, now).await,
            },
        };
        match self.calls.acquirer.cancel(acquirer, &acquirer_id).await {
            Lookup::Found(payment) if payment.id == acquirer_id => {
                if payment.status == PaymentStatus::Canceled {
                    tracing::info!(operation.id = %operation.id(), "expired deposit cancelled at the acquirer");
                }
                self.core
                    .apply_payment(operation, attempt, &payment, Heard::Read)
                    .await?;
                Ok(())
            }
            Lookup::Found(_) | Lookup::Failed(_) => self.read_later(operation, attempt, now).await,
            Lookup::NotFound => {
                self.not_found(operation, attempt, now, Outcome::expired())
                    .await
            }
        }
    }

    /// The acquirer knows no payment with this reference. Only once the creation's
    /// `notAfter` has passed by the grace can it never appear: then the operation ends with
    /// `never_created`; before that it waits.
    async fn not_found(
        &self,
        operation: &Operation,
        mut attempt: Attempt,
        now: Timestamp,
        never_created: Outcome,
    ) -> Result<(), CompleteError> {
        if attempt.acquirer_id.is_some() {
            tracing::error!(operation.id = %operation.id(), provider = %attempt.provider, "the acquirer no longer finds a payment it answered for; nothing applied");
            return self.read_later(operation, attempt, now).await;
        }
        if now < not_found_final_at(attempt.created_at) {
            return self.read_later(operation, attempt, now).await;
        }
        tracing::warn!(operation.id = %operation.id(), provider = %attempt.provider, "the acquirer never created the payment");
        if never_created == unavailable() {
            attempt.state = AttemptState::Unavailable;
        }
        attempt.unknown_since = None;
        attempt.next_check_at = None;
        attempt.updated_at = now;
        // The final status first: if it cannot be written, the attempt keeps its due check.
        match self.core.finish(operation, never_created).await {
            Ok(_) | Err(CompleteError::InvalidState) => {}
            Err(error) => return Err(error),
        }
        self.core.store.save_attempt(&attempt).await?;
        Ok(())
    }

    /// Nothing learned: the attempt is looked at again on its schedule (the unknown-outcome
    /// one while the payment was never found, with a read at the 404 rule's threshold; the
    /// quiet one otherwise).
    async fn read_later(
        &self,
        operation: &Operation,
        mut attempt: Attempt,
        now: Timestamp,
    ) -> Result<(), CompleteError> {
        attempt.reads += 1;
        let next = match attempt.unknown_since {
            Some(since) => {
                let threshold = not_found_final_at(attempt.created_at);
                let next = next_unknown_read(since, now);
                if threshold > now {
                    next.min(threshold)
                } else {
                    next
                }
            }
            None => self.core.quiet_check(operation, now, attempt.reads),
        };
        attempt.next_check_at = Some(next.max(now.plus_millis(100)));
        self.core.store.save_attempt(&attempt).await?;
        Ok(())
    }
}
