//! The callback body on the wire: `{"data": {...}}` with the API's field names (the fields
//! of a money movement written by the same [`Movement`] as the API's answers), keys in
//! alphabetical order, `merchantOperationId`, `merchantRefundId`, `errorCode` and
//! `errorMessage` left out when there are none (never `null`), the status as its number
//! (1 approved, 2 declined), and `sequence`, the callback's number among its operation's,
//! which the outbox fills in as it queues the callback.

use domain::callback::{CallbackBody, CallbackData, RefundCallbackData};
use domain::ports::CallbackFormat;
use serde::Serialize;

use super::dispute::DisputeView;
use super::movement::{Movement, Side};

/// Writes callback bodies as JSON.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonCallbackFormat;

/// An operation's callback: the movement, the operation's ids, method, status, user and
/// `type` (`deposit` or `withdrawal`). Fields in alphabetical order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OperationData<'a> {
    #[serde(flatten)]
    movement: Movement<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    merchant_operation_id: Option<&'a str>,
    operation_id: String,
    payment_method: &'static str,
    sequence: u64,
    status: u8,
    #[serde(rename = "type")]
    kind: &'static str,
    updated_at: String,
    user_id: &'a str,
}

/// A refund's callback: the movement, the refund's and its deposit's ids, its status, `type`
/// `refund`. Fields in alphabetical order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RefundData<'a> {
    #[serde(flatten)]
    movement: Movement<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    merchant_refund_id: Option<&'a str>,
    operation_id: String,
    refund_id: String,
    sequence: u64,
    status: u8,
    #[serde(rename = "type")]
    kind: &'static str,
    updated_at: String,
}

/// `{"data": ...}`, the envelope of every callback body.
#[derive(Serialize)]
struct Body<T> {
    data: T,
}

/// The number written where the sequence goes, then cut out: no other field is a number
/// this large, and a string's quotes are escaped, so `"sequence":` followed by it is found
/// once, at the sequence.
const SEQUENCE_MARK: u64 = u64::MAX;

/// `{"data": data}` around its sequence number; `data`'s fields are declared in
/// alphabetical order (the movement's first), the order the body has always been written
/// in, and its `sequence` is [`SEQUENCE_MARK`].
fn body_of(data: impl Serialize) -> CallbackBody {
    // Only strings and integers: writing them to a String cannot fail.
    let text = serde_json::to_string(&Body { data }).unwrap_or_else(|_| unreachable!("plain JSON"));
    let mark = format!("\"sequence\":{SEQUENCE_MARK}");
    match text.find(&mark) {
        Some(at) => {
            let number = at + mark.len() - SEQUENCE_MARK.to_string().len();
            CallbackBody::around(&text[..number], &text[at + mark.len()..])
        }
        None => unreachable!("every callback body has a sequence"),
    }
}

impl CallbackFormat for JsonCallbackFormat {
    fn body(&self, data: &CallbackData) -> CallbackBody {
        body_of(OperationData {
            movement: Movement::new(
                data.amount,
                &data.currency,
                data.fee,
                Side::of(data.direction),
                data.decline.as_ref(),
            ),
            merchant_operation_id: data.merchant_operation_id.as_ref().map(|m| m.as_str()),
            operation_id: data.operation_id.to_string(),
            payment_method: data.method.as_str(),
            sequence: SEQUENCE_MARK,
            status: data.status.number(),
            kind: data.direction.as_str(),
            updated_at: data.updated_at.to_rfc3339(),
            user_id: data.user_id.as_str(),
        })
    }

    fn refund_body(&self, data: &RefundCallbackData) -> CallbackBody {
        body_of(RefundData {
            movement: Movement::new(
                data.amount,
                &data.currency,
                data.fee,
                Side::Debited,
                data.decline.as_ref(),
            ),
            merchant_refund_id: data.merchant_refund_id.as_ref().map(|m| m.as_str()),
            operation_id: data.operation_id.to_string(),
            refund_id: data.refund_id.to_string(),
            sequence: SEQUENCE_MARK,
            status: data.status.number(),
            kind: "refund",
            updated_at: data.updated_at.to_rfc3339(),
        })
    }

    fn dispute_body(&self, dispute: &domain::dispute::Dispute) -> CallbackBody {
        body_of(DisputeView {
            sequence: Some(SEQUENCE_MARK),
            ..DisputeView::reported(dispute)
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use domain::callback::CallbackData;
    use domain::operation::{Decline, DeclineCode, Outcome};
    use domain::testkit::{id, OperationBuilder, T0};
    use domain::PaymentMethod;
    use domain::Status;

    use super::*;

    fn body(data: &CallbackData) -> serde_json::Value {
        serde_json::from_str(&JsonCallbackFormat.body(data).with_sequence(1)).unwrap()
    }

    #[test]
    fn an_approved_deposit_has_exactly_the_contract_fields_in_alphabetical_order() {
        let done = OperationBuilder::deposit(PaymentMethod::Card)
            .id(id(1))
            .user("user-7")
            .merchant_operation_id("order-1")
            .build()
            .finish(&Outcome::Approve, T0)
            .unwrap();

        let text = JsonCallbackFormat
            .body(&CallbackData::of(&done))
            .with_sequence(7);

        assert_eq!(
            text,
            format!(
                "{{\"data\":{{\"amount\":\"100.00\",\"creditedAmount\":\"100.00\",\
                 \"currency\":\"RUB\",\"fee\":\"0.00\",\"merchantOperationId\":\"order-1\",\"operationId\":\"{}\",\
                 \"paymentMethod\":\"card\",\"sequence\":7,\"status\":1,\"type\":\"deposit\",\
                 \"updatedAt\":\"2026-11-21T10:00:00Z\",\"userId\":\"user-7\"}}}}",
                id(1)
            )
        );
    }

    #[test]
    fn a_declined_payout_adds_error_code_and_message() {
        let decline = Decline::new(DeclineCode::RecipientNotFound);
        let done = OperationBuilder::payout(PaymentMethod::Sbp)
            .amount("250.00")
            .build()
            .finish(&Outcome::Decline(decline), T0)
            .unwrap();

        let data = body(&CallbackData::of(&done))["data"].clone();

        assert_eq!(data["type"], "withdrawal");
        assert_eq!(data["status"], 2);
        assert_eq!(data["amount"], "250.00");
        assert_eq!(data["errorCode"], "RecipientNotFound");
        assert_eq!(
            data["errorMessage"],
            DeclineCode::RecipientNotFound.message()
        );
    }

    #[test]
    fn a_deposit_with_a_fee_is_credited_its_amount_less_the_fee_and_a_payout_debited_more() {
        let fee = domain::fee::Fee {
            amount: 1_500,
            terms: None,
        };
        let deposit = OperationBuilder::deposit(PaymentMethod::Card)
            .fee(fee)
            .build()
            .finish(&Outcome::Approve, T0)
            .unwrap();
        let payout = OperationBuilder::payout(PaymentMethod::Card)
            .amount("1000.00")
            .fee(fee)
            .build();

        let deposit = body(&CallbackData::of(&deposit))["data"].clone();
        let payout = body(&CallbackData::of(&payout))["data"].clone();

        assert_eq!(
            (
                &deposit["fee"],
                &deposit["creditedAmount"],
                &deposit["debitedAmount"]
            ),
            (&"15.00".into(), &"85.00".into(), &serde_json::Value::Null)
        );
        assert_eq!(
            (
                &payout["fee"],
                &payout["debitedAmount"],
                &payout["creditedAmount"]
            ),
            (&"15.00".into(), &"1015.00".into(), &serde_json::Value::Null)
        );
    }

    #[test]
    fn absent_values_are_left_out_not_null() {
        let done = OperationBuilder::deposit(PaymentMethod::Sbp)
            .build()
            .finish(&Outcome::Approve, T0)
            .unwrap();

        let body = body(&CallbackData::of(&done));

        let data = body["data"].as_object().unwrap();
        let keys: Vec<&str> = data.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "amount",
                "creditedAmount",
                "currency",
                "fee",
                "operationId",
                "paymentMethod",
                "sequence",
                "status",
                "type",
                "updatedAt",
                "userId"
            ]
        );
        assert!(data.values().all(|v| !v.is_null()));
        assert_eq!(body.as_object().unwrap().len(), 1, "only `data`");
    }

    #[test]
    fn a_refund_callback_names_its_refund_and_deposit_and_leaves_out_what_it_lacks() {
        use domain::callback::RefundCallbackData;
        use domain::testkit::refund_id;
        let declined = RefundCallbackData {
            refund_id: refund_id(1),
            merchant_refund_id: None,
            operation_id: id(1),
            status: Status::Declined,
            amount: domain::Amount::from_minor(3_005).unwrap(),
            currency: domain::Currency::RUB,
            updated_at: T0,
            decline: Some(Decline::new(DeclineCode::ProviderDeclined)),
            fee: 50,
        };
        let text = JsonCallbackFormat.refund_body(&declined).with_sequence(2);
        let body: serde_json::Value = serde_json::from_str(&text).unwrap();
        let data = body["data"].as_object().unwrap();
        let keys: Vec<&str> = data.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "amount",
                "currency",
                "debitedAmount",
                "errorCode",
                "errorMessage",
                "fee",
                "operationId",
                "refundId",
                "sequence",
                "status",
                "type",
                "updatedAt"
            ]
        );
        assert_eq!(data["type"], "refund");
        assert_eq!(data["refundId"], refund_id(1).to_string());
        assert_eq!(data["operationId"], id(1).to_string());
        assert_eq!(
            (&data["amount"], &data["status"]),
            (&"30.05".into(), &2.into())
        );
        assert_eq!(
            (&data["fee"], &data["debitedAmount"]),
            (&"0.50".into(), &"30.55".into())
        );
        assert_eq!(data["errorCode"], "ProviderDeclined");
        let with_id = RefundCallbackData {
            merchant_refund_id: Some(domain::MerchantRefundId::parse("r-1").unwrap()),
            ..declined
        };
        let body: serde_json::Value =
            serde_json::from_str(&JsonCallbackFormat.refund_body(&with_id).with_sequence(2))
                .unwrap();
        assert_eq!(body["data"]["merchantRefundId"], "r-1");
    }

    /// The keys of `body`'s `data` in the order the text has them.
    fn keys_as_written(body: &str) -> Vec<String> {
        let data: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str::<serde_json::Value>(body).unwrap()["data"]
                .as_object()
                .unwrap()
                .clone();
        let mut keys: Vec<String> = data.keys().cloned().collect();
        keys.sort_by_key(|key| body.find(&format!("\"{key}\":")).unwrap());
        keys
    }

    #[test]
    fn every_optional_field_present_still_writes_the_keys_in_alphabetical_order() {
        use domain::callback::RefundCallbackData;
        use domain::testkit::refund_id;
        let payout = OperationBuilder::payout(PaymentMethod::Sbp)
            .merchant_operation_id("order-2")
            .build()
            .finish(
                &Outcome::Decline(Decline::new(DeclineCode::RecipientNotFound)),
                T0,
            )
            .unwrap();
        let refund = RefundCallbackData {
            refund_id: refund_id(1),
            merchant_refund_id: Some(domain::MerchantRefundId::parse("r-1").unwrap()),
            operation_id: id(1),
            status: Status::Declined,
            amount: domain::Amount::from_minor(3_005).unwrap(),
            currency: domain::Currency::RUB,
            updated_at: T0,
            decline: Some(Decline::new(DeclineCode::ProviderDeclined)),
            fee: 0,
        };
        for text in [
            JsonCallbackFormat
                .body(&CallbackData::of(&payout))
                .with_sequence(1),
            JsonCallbackFormat.refund_body(&refund).with_sequence(1),
        ] {
            let written = keys_as_written(&text);
            let mut sorted = written.clone();
            sorted.sort();
            assert_eq!(written, sorted, "{text}");
            assert!(written.contains(&"errorMessage".to_string()), "{text}");
            assert!(text.starts_with("{\"data\":{\"amount\":"), "{text}");
        }
    }
}
