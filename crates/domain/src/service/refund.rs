//! Refunds of approved deposits (the merchant's cancel of what has not happened yet is in
//! `cancel`).
//!
//! A refund is committed (processing, with its hold) before its provider hears of it: the
//! sandbox settles it when its time comes; an acquirer is called once, and an answer that
//! was lost is resolved by reading the refund by its reference, never by sending it again.

use std::sync::Arc;

use super::calls::{lease_millis, Calls};
use super::core::Core;
use super::keys::KeyCheck;
use super::payments::unavailable;
use super::{CompleteError, ReadError, RefundError};
use crate::acquirer::{next_unknown_read, CallResult, RefundOrder};
use crate::fee::{Fee, FeeDirection};
use crate::ledger::refund_hold;
use crate::merchant::Merchant;
use crate::operation::{Operation, State};
use crate::ports::{
    Chain, IdGenerator, MerchantDirectory, NewRefund, RefundInsertError, TariffKey, TariffStore,
};
use crate::provider::AcquirerProvider;
use crate::refund::{Refund, RefundRequest};
use crate::signature::Fingerprint;
use crate::{Direction, MerchantRefundId, OperationId, RefundId, Status, ValidationErrors};

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

/// Refunds of approved deposits, and the merchant's cancel of an operation that has not
/// happened yet (or an operator's, at the provider).
#[derive(Clone)]
pub struct Refunds {
    pub(super) core: Arc<Core>,
    pub(super) calls: Arc<Calls>,
    /// The merchants' secrets, read again when a rotation keyed a stored request anew.
    pub(super) merchants: Arc<dyn MerchantDirectory>,
    /// The merchants' tariffs: a refund's fee is fixed when it is created.
    pub(super) tariffs: Arc<dyn TariffStore>,
    pub(super) ids: Arc<dyn IdGenerator>,
}

impl Refunds {
    /// Refunds (part of) the merchant's approved deposit `deposit`. Checks, in this order:
    /// the deposit is the merchant's, the amount has its currency's fraction digits, the
    /// merchantRefundId's earlier request (a replay, or
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
        let deposit = self
            .core
            .read(merchant, Direction::Deposit, deposit)
            .await?;
        let amount = request
            .amount
            .in_currency(deposit.currency())
            .map_err(|why| {
                let mut errors = ValidationErrors::default();
                errors.push("amount", why.0);
                RefundError::Invalid(errors)
            })?;
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
        let key = TariffKey {
            merchant_id: merchant.id.clone(),
            direction: FeeDirection::Refund,
            method: deposit.method(),
            currency: deposit.currency(),
        };
        let fee = Fee::of(self.tariffs.terms(&key).await?, amount);
        let now = self.core.clock.now();
        let mut refund = Refund {
            id: self.ids.refund_id(),
            operation_id: deposit.id(),
            merchant_id: merchant.id.clone(),
            merchant_refund_id: request.merchant_refund_id,
            amount,
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
            fee,
        };
        refund.check_at = Some(match &carrier {
            Carrier::Sandbox => self.calls.provider.start_refund(&refund).await?,
            // If this process dies before the call's answer is written, the reconciler reads
            // the refund once the call's lease has run out.
            Carrier::Acquirer(acquirer, _) => now.plus_millis(lease_millis(acquirer)),
        });
        let new = NewRefund {
            fingerprint,
            hold: refund_hold(&refund),
            refund,
        };
        match self.core.refunds.insert_refund(&new).await {
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
            .core
            .current_attempt(deposit.id())
            .await?
            .ok_or_else(|| unavailable("the deposit has no provider attempt"))?;
        let payment_id = attempt
            .acquirer_id
            .ok_or_else(|| unavailable("the acquirer's id of the payment is not known"))?;
        let acquirer = self
            .calls
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
            .core
            .refunds
            .find_by_merchant_refund_id(&merchant.id, mrid)
            .await?
        {
            None => Ok(None),
            Some((refund, Some(stored)))
                if KeyCheck::of(
                    self.merchants.as_ref(),
                    merchant,
                    Direction::Deposit,
                    &stored,
                )
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
        let result = self.calls.acquirer.refund(acquirer, &order).await;
        let now = self.core.clock.now();
        match result {
            CallResult::Answered(reported) => self.core.apply_refund(refund, &reported).await,
            CallResult::Unavailable(reason) => {
                tracing::warn!(refund.id = %refund.id, provider = %acquirer.name, %reason, "refund call failed; nothing happened at the acquirer");
                self.core.finish_refund(&refund, unavailable()).await
            }
            CallResult::Unknown(reason) => {
                tracing::warn!(refund.id = %refund.id, provider = %acquirer.name, %reason, "refund outcome unknown; the reconciler reads it");
                refund.unknown_since = Some(now);
                refund.check_at = Some(next_unknown_read(now, now));
                refund.updated_at = now;
                self.core.save_refund(refund).await
            }
        }
    }

    /// The merchant's refund `refund` of its deposit `deposit`; any other is `NotFound`.
    pub async fn read_refund(
        &self,
        merchant: &Merchant,
        deposit: OperationId,
        refund: RefundId,
    ) -> Result<Refund, ReadError> {
        let deposit = self
            .core
            .read(merchant, Direction::Deposit, deposit)
            .await?;
        match self.core.refunds.refund(refund).await? {
            Some(found) if found.operation_id == deposit.id() => Ok(found),
            _ => Err(ReadError::NotFound),
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
