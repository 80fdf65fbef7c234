//! What a call of the Acquirer API creates or reads: a payment or a refund. One trait, so a
//! call is classified, counted and logged the same way whatever it moves.

use domain::acquirer::{
    AcquirerDispute, AcquirerDisputeStatus, AcquirerPayment, AcquirerRefund, Failure, PaymentOrder,
    RefundOrder,
};

use crate::dispute_wire::DisputeAnswer;

use crate::metrics::CallOutcome;
use crate::wire::{PaymentAnswer, RefundAnswer};
use crate::words;

/// An object the acquirer creates on request and finds by reference.
pub(crate) trait Object: Sized {
    /// The answer body as read, before it is checked against the request.
    type Answer;
    /// The request that creates the object.
    type Order;
    /// The object's name in logs.
    const NAME: &'static str;
    /// The log messages of a creating call: answered, definite failure, unknown outcome
    /// (operators search for them: docs/operations.md).
    const ANSWERED: &'static str;
    const NOTHING_DONE: &'static str;
    const UNKNOWN: &'static str;

    /// Reads an answer body; `None` if it is not such an object.
    fn parse(body: &[u8]) -> Option<(Self::Answer, Self)>;
    /// The first field of the answer that differs from `order`.
    fn mismatch(answer: &Self::Answer, order: &Self::Order) -> Option<&'static str>;
    /// The reference the answer carries.
    fn reference(answer: &Self::Answer) -> &str;
    /// How an answered creation counts (`declined` for a decline).
    fn outcome(&self, order: &Self::Order) -> CallOutcome;
    /// The acquirer's id, its status word and its failure code, for logs.
    fn id(&self) -> &str;
    fn status_word(&self) -> &'static str;
    fn failure_code(&self) -> Option<&str>;
}

impl Object for AcquirerPayment {
    type Answer = PaymentAnswer;
    type Order = PaymentOrder;
    const NAME: &'static str = "payment";
    const ANSWERED: &'static str = "acquirer answered the creation";
    const NOTHING_DONE: &'static str = "acquirer unavailable: nothing was created";
    const UNKNOWN: &'static str = "creation outcome unknown: left to reads";

    fn parse(body: &[u8]) -> Option<(PaymentAnswer, Self)> {
        PaymentAnswer::parse(body)
    }

    fn mismatch(answer: &PaymentAnswer, order: &PaymentOrder) -> Option<&'static str> {
        answer.mismatch(order)
    }

    fn reference(answer: &PaymentAnswer) -> &str {
        &answer.reference
    }

    fn outcome(&self, order: &PaymentOrder) -> CallOutcome {
        CallOutcome::of_payment(self, order.direction)
    }

    fn id(&self) -> &str {
        &self.id
    }

    fn status_word(&self) -> &'static str {
        words::payment_status_word(self.status)
    }

    fn failure_code(&self) -> Option<&str> {
        Failure::code_of(self.failure.as_ref())
    }
}

impl Object for AcquirerRefund {
    type Answer = RefundAnswer;
    type Order = RefundOrder;
    const NAME: &'static str = "refund";
    const ANSWERED: &'static str = "acquirer answered the refund";
    const NOTHING_DONE: &'static str = "acquirer unavailable: no refund was made";
    const UNKNOWN: &'static str = "refund outcome unknown: left to reads";

    fn parse(body: &[u8]) -> Option<(RefundAnswer, Self)> {
        RefundAnswer::parse(body)
    }

    fn mismatch(answer: &RefundAnswer, order: &RefundOrder) -> Option<&'static str> {
        answer.mismatch(order)
    }

    fn reference(answer: &RefundAnswer) -> &str {
        &answer.reference
    }

    fn outcome(&self, _order: &RefundOrder) -> CallOutcome {
        CallOutcome::of_refund(self)
    }

    fn id(&self) -> &str {
        &self.id
    }

    fn status_word(&self) -> &'static str {
        words::refund_status_word(self.status)
    }

    fn failure_code(&self) -> Option<&str> {
        Failure::code_of(self.failure.as_ref())
    }
}

/// A dispute's evidence call answers the dispute: its order is the acquirer's id of the
/// dispute it was sent to, and a read finds it by that id.
impl Object for AcquirerDispute {
    type Answer = DisputeAnswer;
    type Order = String;
    const NAME: &'static str = "dispute";
    const ANSWERED: &'static str = "acquirer answered the evidence";
    const NOTHING_DONE: &'static str = "acquirer unavailable: no evidence was taken";
    const UNKNOWN: &'static str = "evidence outcome unknown: left to reads";

    fn parse(body: &[u8]) -> Option<(DisputeAnswer, Self)> {
        DisputeAnswer::parse(body)
    }

    fn mismatch(answer: &DisputeAnswer, order: &String) -> Option<&'static str> {
        (answer.id != *order).then_some("id")
    }

    fn reference(answer: &DisputeAnswer) -> &str {
        &answer.id
    }

    fn outcome(&self, _order: &String) -> CallOutcome {
        CallOutcome::Ok
    }

    fn id(&self) -> &str {
        &self.id
    }

    fn status_word(&self) -> &'static str {
        match self.status {
            AcquirerDisputeStatus::Open => "open",
            AcquirerDisputeStatus::Won => "won",
            AcquirerDisputeStatus::Lost => "lost",
        }
    }

    fn failure_code(&self) -> Option<&str> {
        None
    }
}
