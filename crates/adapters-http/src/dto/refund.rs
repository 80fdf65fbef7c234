//! Refunds at the edge: the body of `POST /deposits/{id}/refunds`, the `Refund` answer, and
//! the `{}` body of a cancel.

use domain::refund::{Refund, RefundRequest};
use domain::{AmountText, HttpUrl, MerchantRefundId, ValidationErrors};
use serde::Serialize;
use serde_json::{Map, Value};

use super::create::{string, unknown_fields};
use super::movement::{DeclineFields, Money, Movement, Side};

/// The fields a refund body may have.
const KNOWN_FIELDS: [&str; 3] = ["amount", "merchantRefundId", "callbackUrl"];

/// A valid refund request from a parsed body, or every invalid field: `amount` as a
/// deposit's, `merchantRefundId` as a merchantOperationId, `callbackUrl` as a creation's.
pub fn request(body: &Map<String, Value>) -> Result<RefundRequest, ValidationErrors> {
    let mut edge = ValidationErrors::default();
    unknown_fields(body, &KNOWN_FIELDS, "", &mut edge);
    let amount = string(body, "amount", &mut edge);
    let merchant_refund_id = string(body, "merchantRefundId", &mut edge);
    let callback_url = string(body, "callbackUrl", &mut edge);
    // A field refused for its type is not refused again for its value.
    let mut values = ValidationErrors::default();
    let amount = values.required("amount", amount, AmountText::parse);
    let merchant_refund_id = values.optional(
        "merchantRefundId",
        merchant_refund_id,
        MerchantRefundId::parse,
    );
    let callback_url = values.optional("callbackUrl", callback_url, HttpUrl::parse);
    edge.extend_unreported(values);
    match amount {
        // Without an amount, `edge` names it (its type, its absence or its value).
        Some(amount) if edge.is_empty() => Ok(RefundRequest {
            amount,
            merchant_refund_id,
            callback_url,
        }),
        _ => Err(edge),
    }
}

/// The body of a cancel: exactly `{}`; every key is refused by name.
pub fn cancel(body: &Map<String, Value>) -> Result<(), ValidationErrors> {
    let mut errors = ValidationErrors::default();
    unknown_fields(body, &[], "", &mut errors);
    errors.into_result()
}

/// A refund as answered (`Refund` of docs/openapi.yaml); optional fields left out, never `null`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RefundView<'a> {
    refund_id: String,
    operation_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    merchant_refund_id: Option<&'a str>,
    #[serde(flatten)]
    money: Money<'a>,
    status: u8,
    #[serde(flatten)]
    decline: DeclineFields<'a>,
    fee: String,
    created_at: String,
    updated_at: String,
}

impl<'a> RefundView<'a> {
    pub fn new(refund: &'a Refund) -> Self {
        let Movement {
            money,
            decline,
            fee,
        } = Movement::new(
            refund.amount,
            &refund.currency,
            refund.fee.amount,
            Side::Debited,
            refund.decline(),
        );
        Self {
            refund_id: refund.id.to_string(),
            operation_id: refund.operation_id.to_string(),
            merchant_refund_id: refund.merchant_refund_id.as_ref().map(|m| m.as_str()),
            money,
            status: refund.status().number(),
            decline,
            fee,
            created_at: refund.created_at.to_rfc3339(),
            updated_at: refund.updated_at.to_rfc3339(),
        }
    }
}

#[cfg(test)]
#[path = "refund_tests.rs"]
mod tests;
