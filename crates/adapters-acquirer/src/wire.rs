//! The Acquirer API's JSON: the creation and refund bodies, and the payment and refund
//! answers.
//!
//! Neither type derives `Debug`: the body carries the full card number or phone, and an
//! answer is never logged as it came.

use domain::acquirer::{
    AcquirerPayment, AcquirerRefund, PaymentOrder, PaymentStatus, RefundOrder, RefundStatus,
};
use domain::{Direction, WithdrawalRequisites};
use serde::{Deserialize, Serialize};

use crate::words;

/// The body of `POST /v1/payments`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateBody<'a> {
    reference: String,
    kind: &'static str,
    method: &'static str,
    amount: i64,
    currency: &'a str,
    notify_url: &'a str,
    not_after: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    return_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payout: Option<Payout<'a>>,
}

/// Where a payout goes, as the acquirer names it.
#[derive(Serialize)]
#[serde(untagged)]
enum Payout<'a> {
    Card {
        pan: &'a str,
        name: &'a str,
    },
    Sbp {
        phone: &'a str,
        name: &'a str,
        bank: &'a str,
    },
}

/// Why a creation body was not built; nothing is sent then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MissingRequisites;

impl<'a> CreateBody<'a> {
    /// The body for `order`: `returnUrl` and `expiresAt` for payins only, `payout` for payouts
    /// only (a payout without requisites is refused).
    pub(crate) fn new(order: &'a PaymentOrder) -> Result<Self, MissingRequisites> {
        let payin = order.direction == Direction::Deposit;
        let payout = match order.direction {
            Direction::Deposit => None,
            Direction::Withdrawal => Some(payout(order.payout.as_ref().ok_or(MissingRequisites)?)),
        };
        Ok(Self {
            reference: order.reference.to_string(),
            kind: kind(order.direction),
            method: order.method.as_str(),
            amount: order.amount.minor(),
            currency: order.currency.as_str(),
            notify_url: &order.notify_url,
            not_after: order.not_after.to_rfc3339(),
            return_url: order.return_url.as_deref().filter(|_| payin),
            expires_at: order.expires_at.filter(|_| payin).map(|at| at.to_rfc3339()),
            payout,
        })
    }

    pub(crate) fn to_json(&self) -> Vec<u8> {
        // Strings, integers and options only: serializing cannot fail.
        serde_json::to_vec(self).unwrap_or_else(|e| unreachable!("creation body: {e}"))
    }
}

fn payout(requisites: &WithdrawalRequisites) -> Payout<'_> {
    match requisites {
        WithdrawalRequisites::Card {
            pan,
            cardholder_name,
        } => Payout::Card {
            pan: pan.expose(),
            name: cardholder_name,
        },
        WithdrawalRequisites::Sbp {
            phone,
            account_name,
            bank_name,
        } => Payout::Sbp {
            phone: phone.as_str(),
            name: account_name,
            bank: bank_name,
        },
    }
}

/// The acquirer's `kind` for a direction.
pub(crate) fn kind(direction: Direction) -> &'static str {
    match direction {
        Direction::Deposit => "payin",
        Direction::Withdrawal => "payout",
    }
}

/// A payment as the acquirer answers it (`method` and `updatedAt` are not used).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PaymentAnswer {
    id: String,
    pub(crate) reference: String,
    pub(crate) kind: String,
    pub(crate) amount: i64,
    pub(crate) currency: String,
    status: String,
    #[serde(default)]
    action: Option<ActionAnswer>,
    #[serde(default)]
    failure_code: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ActionAnswer {
    #[serde(default)]
    redirect_url: Option<String>,
}

impl PaymentAnswer {
    /// Reads an answer body; `None` if it is not a payment (bad JSON, a missing field, an
    /// empty id, an unknown status). `action_required` without a URL still is one: the
    /// gateway reads the payment again for its URL.
    pub(crate) fn parse(body: &[u8]) -> Option<(Self, AcquirerPayment)> {
        let answer: PaymentAnswer = serde_json::from_slice(body).ok()?;
        let status = words::payment_status(&answer.status)?;
        if answer.id.is_empty() {
            return None;
        }
        // Each extra travels only with the status the contract gives it to.
        let redirect_url = match status {
            PaymentStatus::ActionRequired => answer
                .action
                .as_ref()
                .and_then(|action| action.redirect_url.clone()),
            _ => None,
        };
        let failure = match status {
            PaymentStatus::Failed => answer.failure_code.as_deref().map(words::failure),
            _ => None,
        };
        let payment = AcquirerPayment {
            id: answer.id.clone(),
            status,
            redirect_url,
            failure,
        };
        Some((answer, payment))
    }

    /// The first of `reference`, `kind`, `amount`, `currency` that differs from `order`.
    pub(crate) fn mismatch(&self, order: &PaymentOrder) -> Option<&'static str> {
        if self.reference != order.reference.to_string() {
            Some("reference")
        } else if self.kind != kind(order.direction) {
            Some("kind")
        } else if self.amount != order.amount.minor() {
            Some("amount")
        } else if self.currency != order.currency.as_str() {
            Some("currency")
        } else {
            None
        }
    }
}

/// The body of `POST /v1/payments/{id}/refunds`.
#[derive(Serialize)]
pub(crate) struct RefundBody {
    reference: String,
    amount: i64,
}

impl RefundBody {
    pub(crate) fn new(order: &RefundOrder) -> Self {
        Self {
            reference: order.reference.to_string(),
            amount: order.amount.minor(),
        }
    }

    pub(crate) fn to_json(&self) -> Vec<u8> {
        // A string and an integer: writing them cannot fail.
        serde_json::to_vec(self).unwrap_or_else(|_| unreachable!("plain JSON"))
    }
}

/// A refund as the acquirer answers it (`updatedAt` is not used).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RefundAnswer {
    id: String,
    pub(crate) reference: String,
    pub(crate) payment_id: String,
    pub(crate) amount: i64,
    status: String,
    #[serde(default)]
    failure_code: Option<String>,
}

impl RefundAnswer {
    /// Reads an answer body; `None` if it is not a refund (bad JSON, a missing field, an
    /// empty id, an unknown status).
    pub(crate) fn parse(body: &[u8]) -> Option<(Self, AcquirerRefund)> {
        let answer: RefundAnswer = serde_json::from_slice(body).ok()?;
        let status = words::refund_status(&answer.status)?;
        if answer.id.is_empty() {
            return None;
        }
        let refund = AcquirerRefund {
            id: answer.id.clone(),
            status,
            failure: match status {
                RefundStatus::Failed => answer.failure_code.as_deref().map(words::failure),
                RefundStatus::Pending | RefundStatus::Succeeded => None,
            },
        };
        Some((answer, refund))
    }

    /// The first of `reference`, `paymentId`, `amount` that differs from `order`.
    pub(crate) fn mismatch(&self, order: &RefundOrder) -> Option<&'static str> {
        if self.reference != order.reference.to_string() {
            Some("reference")
        } else if self.payment_id != order.payment_id {
            Some("paymentId")
        } else if self.amount != order.amount.minor() {
            Some("amount")
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn parse(value: Value) -> Option<AcquirerPayment> {
        PaymentAnswer::parse(value.to_string().as_bytes()).map(|(_, payment)| payment)
    }

    fn answer(status: &str) -> Value {
        json!({"id": "acq_1", "reference": "r", "kind": "payin", "method": "card",
               "amount": 100, "currency": "RUB", "status": status,
               "updatedAt": "2026-11-21T10:00:00Z"})
    }

    #[test]
    fn extras_travel_with_their_status_only() {
        let mut value = answer("action_required");
        value["action"] = json!({"redirectUrl": "https://acq/pay/1"});
        value["failureCode"] = json!("declined");
        let payment = parse(value.clone()).expect("a payment");
        assert_eq!(payment.redirect_url.as_deref(), Some("https://acq/pay/1"));
        assert_eq!(payment.failure, None);

        value["status"] = json!("failed");
        let payment = parse(value).expect("a payment");
        assert_eq!(payment.status, PaymentStatus::Failed);
        assert_eq!(payment.redirect_url, None);
        assert_eq!(payment.failure_code(), Some("declined"));
    }

    #[test]
    fn a_failed_payment_may_have_no_code_nor_a_waiting_one_a_url() {
        let payment = parse(answer("failed")).expect("a payment");
        assert_eq!(payment.failure, None);
        let payment = parse(answer("action_required")).expect("a payment");
        assert_eq!(payment.redirect_url, None);
    }

    #[test]
    fn what_is_not_a_payment_is_refused() {
        assert!(parse(answer("refunded")).is_none(), "unknown status");
        let mut value = answer("pending");
        value["amount"] = json!("100");
        assert!(parse(value).is_none(), "amount as text");
        let mut value = answer("pending");
        value["amount"] = json!(100.5);
        assert!(parse(value).is_none(), "fractional amount");
        let mut value = answer("pending");
        value["id"] = json!("");
        assert!(parse(value).is_none(), "empty id");
        let mut value = answer("pending");
        value.as_object_mut().expect("object").remove("currency");
        assert!(parse(value).is_none(), "missing currency");
        assert!(PaymentAnswer::parse(b"<html>").is_none());
    }
}
