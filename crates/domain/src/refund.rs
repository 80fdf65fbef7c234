//! Refunds: money sent back for an approved deposit. A refund is its own record, not a field
//! of the deposit: it has its own id, status, ledger moves (a hold, then paid or released)
//! and callback.

use crate::fee::Fee;
use crate::operation::{Decline, NotProcessing, Outcome, State};
use crate::{
    Amount, AmountText, Currency, HttpUrl, MerchantId, MerchantRefundId, OperationId, RefundId,
    Status, Timestamp,
};

/// What a merchant asks to refund, once its fields passed the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundRequest {
    /// Read in the deposit's currency once the deposit is found.
    pub amount: AmountText,
    pub merchant_refund_id: Option<MerchantRefundId>,
    /// Where the refund's callback goes; `None` takes the deposit's.
    pub callback_url: Option<HttpUrl>,
}

/// A refund of (part of) an approved deposit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refund {
    pub id: RefundId,
    /// The deposit it refunds.
    pub operation_id: OperationId,
    pub merchant_id: MerchantId,
    pub merchant_refund_id: Option<MerchantRefundId>,
    pub amount: Amount,
    pub currency: Currency,
    pub state: State,
    pub callback_url: Option<HttpUrl>,
    /// Where it is carried out: the deposit's provider (`sandbox` or an acquirer's name).
    pub provider: String,
    /// The acquirer's id of the refund, once it answered.
    pub acquirer_id: Option<String>,
    /// While processing: when it is next looked at (the sandbox settles it then; an acquirer's
    /// is read then). `None` once final.
    pub check_at: Option<Timestamp>,
    /// When the acquirer's answer became unknown (a lost answer), while that lasts: the
    /// reconciler's reads are scheduled from it.
    pub unknown_since: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// What it pays the operator, fixed at creation with the refund tariff's terms.
    pub fee: Fee,
}

impl Refund {
    pub fn status(&self) -> Status {
        self.state.status()
    }

    pub fn decline(&self) -> Option<&Decline> {
        self.state.decline()
    }

    /// Whether it is with the built-in sandbox.
    pub fn is_sandbox(&self) -> bool {
        self.provider == crate::provider::SANDBOX
    }

    /// Whether its amount still counts against the deposit's (processing or approved).
    pub fn counts(&self) -> bool {
        self.status() != Status::Declined
    }

    /// The refund made final with `outcome` at `at`; a final one refuses.
    pub fn finish(&self, outcome: &Outcome, at: Timestamp) -> Result<Refund, NotProcessing> {
        if self.status().is_final() {
            return Err(NotProcessing(self.status()));
        }
        Ok(Refund {
            state: outcome.state(),
            check_at: None,
            unknown_since: None,
            updated_at: at,
            ..self.clone()
        })
    }
}

/// The sum, in minor units, of the approved refunds among `refunds` (a deposit's
/// `refundedAmount`).
pub fn refunded_minor(refunds: &[Refund]) -> i64 {
    refunds
        .iter()
        .filter(|r| r.status() == Status::Approved)
        .map(|r| r.amount.minor())
        .sum()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::operation::DeclineCode;
    use crate::testkit::at;

    fn refund(minor: i64) -> Refund {
        let deposit = crate::testkit::OperationBuilder::deposit(crate::PaymentMethod::Card)
            .merchant("m-1")
            .build();
        crate::testkit::refund_of(7, &deposit, minor, Fee::NONE)
    }

    #[test]
    fn a_refund_finishes_once() {
        let done = refund(100).finish(&Outcome::Approve, at(5)).unwrap();
        assert_eq!(done.status(), Status::Approved);
        assert_eq!(done.check_at, None);
        assert_eq!(done.updated_at, at(5));
        assert_eq!(
            done.finish(&Outcome::expired(), at(6)),
            Err(NotProcessing(Status::Approved))
        );
    }

    #[test]
    fn only_approved_refunds_are_refunded_and_declined_ones_stop_counting() {
        let approved = refund(100).finish(&Outcome::Approve, at(1)).unwrap();
        let declined = refund(30)
            .finish(
                &Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined)),
                at(1),
            )
            .unwrap();
        let waiting = refund(20);
        assert_eq!(
            refunded_minor(&[approved.clone(), declined.clone(), waiting.clone()]),
            100
        );
        assert!(approved.counts() && waiting.counts() && !declined.counts());
    }
}
