//! Refunds of approved deposits, and the merchant's cancel of what has not happened yet.
//!
//! A refund is committed (processing, with its hold) before its provider hears of it: the
//! sandbox settles it when its time comes; an acquirer is called once, and an answer that
//! was lost is resolved by reading the refund by its reference, never by sending it again.

use super::acquirer::unavailable;
use super::{CancelError, CompleteError, Gateway, ReadError, RefundError};
use crate::acquirer::{
    next_unknown_read, not_found_final_at, refund_outcome_of, AcquirerRefund, CallResult, Failure,
    Lookup, RefundOrder, RefundStatus, MAX_READ_GAP_SECS,
};
use crate::ledger::{moves_on_refund_finish, refund_hold};
use crate::merchant::Merchant;
use crate::operation::{Decline, DeclineCode, Operation, Outcome, State};
use crate::ports::{
    Chain, FinishError, NewRefund, ProviderVerdict, RefundCompletion, RefundInsertError,
};
use crate::provider::AcquirerProvider;
use crate::refund::{Refund, RefundRequest};
use crate::service::callbacks::refund_callback_for;
use crate::signature::Fingerprint;
use crate::{Direction, MerchantRefundId, OperationId, RefundId, Status, Timestamp};

/// Most refunds one pass of [`Gateway::settle_refunds`] claims.
const REFUND_BATCH: u32 = 50;

/// How long a claimed refund is leased: past the longest acquirer call.
const REFUND_LEASE_MS: i64 = 65_000;

/// What a refund request answers: the refund, and whether it is a replay of an earlier one.
#[derive(Debug, Clone, PartialEq)]
pub struct CreatedRefund {
    pub refund: Refund,
    pub replayed: bool,
}

/// Where a new refund is carried out.
enum Carrier {
    Sandbox,
    /// The acquirer of the deposit's current attempt, and the acquirer's id of the payment.
    Acquirer(AcquirerProvider, String),
}

impl Gateway {
    /// Refunds (part of) the merchant's approved deposit `deposit`. Checks, in this order:
    /// the deposit is the merchant's, the merchantRefundId's earlier request (a replay, or
    /// `DuplicateRefund`), the deposit is approved, the refunds stay within its amount, the
    /// balance covers the hold. `canonical` is the canonical JSON of the request body.
    #[tracing::instrument(skip_all, fields(merchant.id = %merchant.id, operation.id = %deposit))]
    pub async fn refund(
        &self,
        merchant: &Merchant,
        deposit: OperationId,
        request: RefundRequest,
        canonical: &[u8],
    ) -> Result<CreatedRefund, RefundError> {
        let deposit = self.read(merchant, Direction::Deposit, deposit).await?;
        let keyed = refund_canonical(deposit.id(), canonical);
        let fingerprint = request
            .merchant_refund_id
            .as_ref()
            .map(|_| Fingerprint::of(merchant.keys(Direction::Deposit).newest(), &keyed));
        let mrid = request.merchant_refund_id.as_ref();
        if let Some(earlier) = self.earlier_refund(merchant, mrid, &keyed).await? {
            return Ok(earlier);
        }
        if deposit.status() != Status::Approved {
            return Err(RefundError::InvalidState);
        }
        let carrier = self.carrier(&deposit).await?;
        let now = self.ports.clock.now();
        let mut refund = Refund {
            id: self.ports.ids.refund_id(),
            operation_id: deposit.id(),
            merchant_id: merchant.id.clone(),
            merchant_refund_id: request.merchant_refund_id,
            amount: request.amount,
            currency: deposit.currency(),
            state: State::Processing,
            callback_url: request
                .callback_url
                .or_else(|| deposit.urls().callback.clone()),
            provider: deposit.provider().to_string(),
            acquirer_id: None,
            check_at: None,
            unknown_since: None,
            created_at: now,
            updated_at: now,
        };
        refund.check_at = Some(match &carrier {
            Carrier::Sandbox => self.ports.provider.start_refund(&refund).await?,
            // If this process dies before the call's answer is written, the reconciler reads
            // the refund once the call's lease has run out.
            Carrier::Acquirer(acquirer, _) => {
                now.plus_millis(super::acquirer::lease_millis(acquirer))
            }
        });
        let new = NewRefund {
            fingerprint,
            hold: refund_hold(&refund),
            refund,
        };
        match self.ports.refunds.insert_refund(&new).await {
            Ok(()) => {}
            Err(RefundInsertError::Duplicate) => {
                return self
                    .earlier_refund(merchant, mrid_of(&new), &keyed)
                    .await?
                    .ok_or_else(|| {
                        RefundError::Unknown(anyhow::anyhow!(
                            "duplicate reported but no refund found"
                        ))
                    })
            }
            Err(RefundInsertError::NotApproved) => return Err(RefundError::InvalidState),
            Err(RefundInsertError::ExceedsAmount) => return Err(RefundError::ExceedsAmount),
            Err(RefundInsertError::InsufficientBalance) => {
                return Err(RefundError::InsufficientBalance)
            }
            Err(RefundInsertError::Store(e)) => return Err(e.into()),
        }
        tracing::info!(refund.id = %new.refund.id, "refund created");
        let refund = match carrier {
            Carrier::Sandbox => new.refund,
            Carrier::Acquirer(acquirer, payment_id) => {
                let committed = new.refund.clone();
                match self
                    .refund_at_acquirer(&acquirer, payment_id, new.refund)
                    .await
                {
                    Ok(refund) => refund,
                    // The refund exists (committed, processing): its answer is written by
                    // the reconciler's read, so the merchant is told of it, not of a failure
                    // that a retry without merchantRefundId would turn into a second refund.
                    Err(error) => {
                        tracing::warn!(refund.id = %committed.id, error = %Chain(&error), "the acquirer's answer to a refund was not written; the reconciler reads it");
                        committed
                    }
                }
            }
        };
        Ok(CreatedRefund {
            refund,
            replayed: false,
        })
    }

    /// Where the deposit's refunds go: the sandbox, or the acquirer that took the payment
    /// (whose id of the payment must be known).
    async fn carrier(&self, deposit: &Operation) -> Result<Carrier, RefundError> {
        if deposit.is_sandbox() {
            return Ok(Carrier::Sandbox);
        }
        let unavailable = |why: &str| RefundError::Unavailable(why.to_string().into());
        let attempt = self
            .current_attempt(deposit.id())
            .await?
            .ok_or_else(|| unavailable("the deposit has no provider attempt"))?;
        let payment_id = attempt
            .acquirer_id
            .ok_or_else(|| unavailable("the acquirer's id of the payment is not known"))?;
        let acquirer = self
            .ports
            .providers
            .acquirer(&attempt.provider)
            .await?
            .ok_or_else(|| unavailable("the deposit's provider is no longer configured"))?;
        Ok(Carrier::Acquirer(acquirer, payment_id))
    }

    /// The refund an earlier request with this merchantRefundId made: a replay if the request
    /// is the same (`keyed`, hashed with the secret that keyed the earlier one), `DuplicateRefund`
    /// if not, `None` if there is none.
    async fn earlier_refund(
        &self,
        merchant: &Merchant,
        mrid: Option<&MerchantRefundId>,
        keyed: &[u8],
    ) -> Result<Option<CreatedRefund>, RefundError> {
        let Some(mrid) = mrid else {
            return Ok(None);
        };
        match self
            .ports
            .refunds
            .find_by_merchant_refund_id(&merchant.id, mrid)
            .await?
        {
            None => Ok(None),
            Some((refund, Some(stored)))
                if self
                    .keyed_by(merchant, Direction::Deposit, &stored)
                    .await?
                    .matches(&stored, keyed) =>
            {
                Ok(Some(CreatedRefund {
                    refund,
                    replayed: true,
                }))
            }
            Some(_) => Err(RefundError::DuplicateRefund),
        }
    }

    /// Calls the acquirer once for a committed refund and writes what it answered: a final
    /// status, the acquirer's id of a pending refund, or, for a lost answer, the schedule of
    /// reads that will find out.
    async fn refund_at_acquirer(
        &self,
        acquirer: &AcquirerProvider,
        payment_id: String,
        mut refund: Refund,
    ) -> Result<Refund, CompleteError> {
        let order = RefundOrder {
            payment_id,
            reference: refund.id,
            amount: refund.amount,
        };
        let result = self.ports.acquirer.refund(acquirer, &order).await;
        let now = self.ports.clock.now();
        match result {
            CallResult::Answered(reported) => self.apply_refund(refund, &reported).await,
            CallResult::Unavailable(reason) => {
                tracing::warn!(refund.id = %refund.id, provider = %acquirer.name, %reason, "refund call failed; nothing happened at the acquirer");
                self.finish_refund(&refund, unavailable()).await
            }
            CallResult::Unknown(reason) => {
                tracing::warn!(refund.id = %refund.id, provider = %acquirer.name, %reason, "refund outcome unknown; the reconciler reads it");
                refund.unknown_since = Some(now);
                refund.check_at = Some(next_unknown_read(now, now));
                refund.updated_at = now;
                self.save_refund(refund).await
            }
        }
    }

    /// Applies what the acquirer reports of a refund: a final status finishes it; `pending`
    /// records the acquirer's id and reads it again after a quiet while.
    async fn apply_refund(
        &self,
        mut refund: Refund,
        reported: &AcquirerRefund,
    ) -> Result<Refund, CompleteError> {
        refund.acquirer_id = Some(reported.id.clone());
        if let Some(outcome) = refund_outcome_of(reported) {
            return self.finish_refund(&refund, outcome).await;
        }
        let now = self.ports.clock.now();
        refund.unknown_since = None;
        let quiet = super::millis(self.acquirers.reconcile_after);
        refund.check_at = Some(now.plus_millis(quiet.min(MAX_READ_GAP_SECS * 1000)));
        refund.updated_at = now;
        self.save_refund(refund).await
    }

    /// Writes a processing refund's new state; if it became final meanwhile, the stored one.
    async fn save_refund(&self, refund: Refund) -> Result<Refund, CompleteError> {
        match self.ports.refunds.save_refund(&refund).await {
            Ok(()) => Ok(refund),
            Err(FinishError::NotProcessing) => self.stored_refund(refund.id).await,
            Err(e) => Err(e.into()),
        }
    }

    /// Writes a refund's final status with its moves and callback. If another writer
    /// finished it first, its status stands and is returned.
    async fn finish_refund(
        &self,
        refund: &Refund,
        outcome: Outcome,
    ) -> Result<Refund, CompleteError> {
        let now = self.ports.clock.now();
        let Ok(done) = refund.finish(&outcome, now) else {
            return Ok(refund.clone());
        };
        let completion = RefundCompletion {
            moves: moves_on_refund_finish(&done),
            callback: refund_callback_for(&done, self.ports.callback_format.as_ref()),
            refund: done,
        };
        match self.ports.refunds.finish_refund(&completion).await {
            Ok(()) => {
                tracing::info!(refund.id = %completion.refund.id, status = completion.refund.status().name(), "refund final");
                Ok(completion.refund)
            }
            Err(FinishError::NotProcessing) => self.stored_refund(refund.id).await,
            Err(e) => Err(e.into()),
        }
    }

    async fn stored_refund(&self, id: RefundId) -> Result<Refund, CompleteError> {
        self.ports
            .refunds
            .refund(id)
            .await?
            .ok_or_else(|| CompleteError::Unknown(anyhow::anyhow!("refund {id} vanished")))
    }

    /// The merchant's refund `refund` of its deposit `deposit`; any other is `NotFound`.
    pub async fn read_refund(
        &self,
        merchant: &Merchant,
        deposit: OperationId,
        refund: RefundId,
    ) -> Result<Refund, ReadError> {
        let deposit = self.read(merchant, Direction::Deposit, deposit).await?;
        match self.ports.refunds.refund(refund).await? {
            Some(found) if found.operation_id == deposit.id() => Ok(found),
            _ => Err(ReadError::NotFound),
        }
    }

    /// The refunds of `operation`, oldest first: only an approved deposit can have any, so
    /// nothing is read for any other.
    pub async fn refunds_of(&self, operation: &Operation) -> Result<Vec<Refund>, ReadError> {
        if operation.direction() != Direction::Deposit || operation.status() != Status::Approved {
            return Ok(Vec::new());
        }
        Ok(self.ports.refunds.refunds_of(operation.id()).await?)
    }

    /// One pass over the processing refunds whose time has come, as `owner` (this process's
    /// id): the sandbox's are settled, an acquirer's are read. Leased, so several processes
    /// may run it at once. Returns how many it looked at.
    pub async fn settle_refunds(&self, owner: &str) -> Result<usize, CompleteError> {
        let now = self.ports.clock.now();
        let due = self
            .ports
            .refunds
            .claim_due_refunds(owner, now, now.plus_millis(REFUND_LEASE_MS), REFUND_BATCH)
            .await?;
        let looked_at = due.len();
        for refund in due {
            let id = refund.id;
            if let Err(error) = self.check_refund(refund).await {
                tracing::warn!(refund.id = %id, error = %Chain(&error), "refund check failed; it is retried when the lease ends");
            }
        }
        Ok(looked_at)
    }

    async fn check_refund(&self, mut refund: Refund) -> Result<Refund, CompleteError> {
        let now = self.ports.clock.now();
        if refund.is_sandbox() {
            return match self.ports.provider.poll_refund(&refund, now).await? {
                ProviderVerdict::Approve => self.finish_refund(&refund, Outcome::Approve).await,
                ProviderVerdict::Decline(decline) => {
                    self.finish_refund(&refund, Outcome::Decline(decline)).await
                }
                ProviderVerdict::Pending(next) => {
                    refund.check_at = Some(next);
                    self.save_refund(refund).await
                }
            };
        }
        let Some(acquirer) = self.ports.providers.acquirer(&refund.provider).await? else {
            refund.check_at = Some(now.plus_seconds(MAX_READ_GAP_SECS));
            return self.save_refund(refund).await;
        };
        let since = refund.unknown_since.unwrap_or(refund.created_at);
        match self.ports.acquirer.find_refund(&acquirer, refund.id).await {
            Lookup::Found(reported)
                if refund
                    .acquirer_id
                    .as_deref()
                    .is_none_or(|known| known == reported.id) =>
            {
                self.apply_refund(refund, &reported).await
            }
            lookup => {
                // A refund request carries no deadline after which the acquirer refuses it,
                // so a refund it does not know may still be carried out: it is never declined
                // on a 404, only read again (an operator resolves one that stays unknown).
                if matches!(lookup, Lookup::NotFound)
                    && now >= not_found_final_at(refund.created_at)
                {
                    tracing::error!(refund.id = %refund.id, provider = %acquirer.name, "the acquirer does not know a refund sent to it; it stays processing until an operator resolves it");
                } else if matches!(lookup, Lookup::Found(_)) {
                    tracing::error!(refund.id = %refund.id, provider = %acquirer.name, "the acquirer answered for another refund; nothing applied");
                }
                refund.unknown_since = Some(since);
                refund.check_at = Some(next_unknown_read(since, now));
                self.save_refund(refund).await
            }
        }
    }

    /// Applies an acquirer's notification about a refund: the reference must be a refund at
    /// `provider` (and name its acquirer id, once known), else `Ok(false)`.
    pub(super) async fn apply_refund_notification(
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
        let Some(refund) = self.ports.refunds.refund(refund_id).await? else {
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
        self.apply_refund(refund, &reported).await?;
        Ok(true)
    }

    /// The merchant's cancel of its operation `id` that has not happened yet: a waiting
    /// deposit, or a payout its provider has not executed, becomes Declined `Canceled` (a
    /// payout's hold released) with its callback. Final already, or executed meanwhile (it
    /// then takes that status): `Final`.
    #[tracing::instrument(skip(self, merchant), fields(merchant.id = %merchant.id, operation.id = %id))]
    pub async fn cancel(
        &self,
        merchant: &Merchant,
        direction: Direction,
        id: OperationId,
    ) -> Result<Operation, CancelError> {
        let operation = self
            .read(merchant, direction, id)
            .await
            .map_err(|error| match error {
                ReadError::NotFound => CancelError::NotFound,
                other => other.into(),
            })?;
        if operation.status().is_final() {
            return Err(CancelError::Final(Box::new(operation)));
        }
        if !operation.is_sandbox() {
            return self.cancel_at_provider(id).await;
        }
        let now = self.ports.clock.now();
        if direction == Direction::Withdrawal && operation.due_at().is_some_and(|due| due <= now) {
            // Its settle time has passed: the sandbox has executed it.
            if let Some(outcome) = self.settled_outcome(&operation, now).await? {
                let done = self.settle_or_stored(&operation, outcome).await?;
                return Err(CancelError::Final(Box::new(done)));
            }
        }
        let canceled = Outcome::Decline(Decline::new(DeclineCode::Canceled));
        match self.finish(&operation, canceled).await {
            Ok(done) => Ok(done),
            Err(CompleteError::InvalidState) => {
                Err(CancelError::Final(Box::new(self.operation(id).await?)))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// What the sandbox decided of a payout whose settle time has come; `None` if nothing yet.
    async fn settled_outcome(
        &self,
        payout: &Operation,
        now: Timestamp,
    ) -> Result<Option<Outcome>, CompleteError> {
        Ok(match self.ports.provider.poll_payout(payout, now).await? {
            ProviderVerdict::Approve => Some(Outcome::Approve),
            ProviderVerdict::Decline(decline) => Some(Outcome::Decline(decline)),
            ProviderVerdict::Pending(_) => None,
        })
    }

    /// Finishes `operation` with `outcome`, or, if another writer finished it first, the
    /// stored operation.
    async fn settle_or_stored(
        &self,
        operation: &Operation,
        outcome: Outcome,
    ) -> Result<Operation, CompleteError> {
        match self.finish(operation, outcome).await {
            Ok(done) => Ok(done),
            Err(CompleteError::InvalidState) => Ok(self.operation(operation.id()).await?),
            Err(e) => Err(e),
        }
    }
}

fn mrid_of(new: &NewRefund) -> Option<&MerchantRefundId> {
    new.refund.merchant_refund_id.as_ref()
}

/// What a refund's fingerprint covers: the deposit's id, then the canonical body, so the same
/// merchantRefundId on another deposit is another request.
fn refund_canonical(deposit: OperationId, canonical: &[u8]) -> Vec<u8> {
    let mut bytes = deposit.to_string().into_bytes();
    bytes.push(b'\n');
    bytes.extend_from_slice(canonical);
    bytes
}
