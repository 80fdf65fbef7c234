use super::*;
use crate::test_support::{now, object, refund};
use domain::operation::{Decline, DeclineCode, Outcome};
use domain::MerchantRefundId;
use serde_json::json;

fn fields(errors: &ValidationErrors) -> Vec<(&str, &str)> {
    errors
        .0
        .iter()
        .map(|e| (e.field.as_str(), e.message.as_str()))
        .collect()
}

fn refused(body: Value) -> Vec<String> {
    let errors = request(&object(body)).expect_err("invalid");
    errors.0.into_iter().map(|e| e.field).collect()
}

#[test]
fn a_full_refund_request_parses_and_nulls_mean_absent() {
    let body = json!({"amount": "30.00", "merchantRefundId": "r-1",
                      "callbackUrl": "https://shop.example/refunds"});
    let parsed = request(&object(body)).expect("valid");
    assert_eq!(parsed.amount.as_str(), "30.00");
    assert_eq!(
        parsed.merchant_refund_id,
        Some(MerchantRefundId::parse("r-1").expect("valid"))
    );
    assert_eq!(
        parsed.callback_url.as_ref().map(|u| u.as_str()),
        Some("https://shop.example/refunds")
    );
    let body = json!({"amount": "0.01", "merchantRefundId": null, "callbackUrl": null});
    let parsed = request(&object(body)).expect("valid");
    assert_eq!(parsed.merchant_refund_id, None);
    assert_eq!(parsed.callback_url, None);
}

/// The edge refuses what is no amount in any currency; the digits of the deposit's currency
/// are checked once the deposit is found (`30` is yen, `1.005` dinars).
#[test]
fn the_amount_is_required_and_is_a_decimal_of_some_currency() {
    let errors = request(&object(json!({}))).expect_err("invalid");
    assert_eq!(fields(&errors), vec![("amount", "is required")]);
    for good in ["30", "30.00", "1.005"] {
        let parsed = request(&object(json!({"amount": good}))).expect("a decimal");
        assert_eq!(parsed.amount.as_str(), good);
    }
    for bad in [
        json!("0.00"),
        json!("0"),
        json!("-1.00"),
        json!("1.00000"),
        json!("01.00"),
        json!("1e3"),
        json!(""),
    ] {
        assert_eq!(refused(json!({"amount": bad})), vec!["amount"], "{bad}");
    }
    let errors = request(&object(json!({"amount": 30}))).expect_err("invalid");
    assert_eq!(fields(&errors), vec![("amount", "must be a string")]);
}

#[test]
fn unknown_keys_and_every_bad_field_are_reported_together() {
    let body = json!({"amount": "1.", "merchantRefundId": "has space",
                      "callbackUrl": "ftp://shop.example/cb", "currency": "RUB", "reason": "x"});
    assert_eq!(
        refused(body),
        vec![
            "currency",
            "reason",
            "amount",
            "merchantRefundId",
            "callbackUrl"
        ]
    );
    let errors = request(&object(json!({"amount": "1.00", "amout": "1.00"}))).expect_err("bad");
    assert_eq!(fields(&errors), vec![("amout", "is not a known field")]);
    let long = "r".repeat(129);
    assert_eq!(
        refused(json!({"amount": "1.00", "merchantRefundId": long})),
        vec!["merchantRefundId"]
    );
    assert_eq!(
        refused(json!({"amount": "1.00", "merchantRefundId": 7, "callbackUrl": true})),
        vec!["merchantRefundId", "callbackUrl"]
    );
}

#[test]
fn a_cancel_takes_exactly_an_empty_object() {
    assert_eq!(cancel(&object(json!({}))), Ok(()));
    let errors = cancel(&object(json!({"reason": "x", "amount": null}))).expect_err("keys");
    assert_eq!(
        fields(&errors),
        vec![
            ("amount", "is not a known field"),
            ("reason", "is not a known field")
        ]
    );
}

#[test]
fn a_processing_refund_leaves_its_optional_fields_out() {
    let view = serde_json::to_value(RefundView::new(&refund(1, 3_000))).expect("JSON");
    assert_eq!(
        view,
        json!({"refundId": "7e5d0000-0000-4000-8000-000000000001",
               "operationId": "6f1c0000-0000-4000-8000-000000000001",
               "amount": "30.00", "currency": "RUB", "debitedAmount": "30.00",
               "fee": "0.00", "status": 3,
               "createdAt": "2026-11-21T10:00:01Z", "updatedAt": "2026-11-21T10:00:01Z"})
    );
}

#[test]
fn a_final_refund_shows_its_status_and_a_decline_its_code() {
    let mut with_id = refund(2, 1_050);
    with_id.merchant_refund_id = Some(MerchantRefundId::parse("r-2").expect("valid"));
    let approved = with_id
        .finish(&Outcome::Approve, now().plus_seconds(90))
        .expect("processing");
    let view = serde_json::to_value(RefundView::new(&approved)).expect("JSON");
    assert_eq!(view["status"], 1);
    assert_eq!(view["merchantRefundId"], "r-2");
    assert_eq!(view["amount"], "10.50");
    assert_eq!(view["updatedAt"], "2026-11-21T10:01:30Z");
    assert!(view.get("errorCode").is_none() && view.get("errorMessage").is_none());

    let declined = refund(3, 100)
        .finish(
            &Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined)),
            now().plus_seconds(90),
        )
        .expect("processing");
    let view = serde_json::to_value(RefundView::new(&declined)).expect("JSON");
    assert_eq!(view["status"], 2);
    assert_eq!(view["errorCode"], "ProviderDeclined");
    assert!(view["errorMessage"].is_string());
    assert!(!view.to_string().contains("null"));
}

/// The keys of the JSON object `text` in the order the text writes them (top level only:
/// the objects here hold no nested object before their last key).
fn keys_as_written(text: &str) -> Vec<String> {
    let object: serde_json::Map<String, Value> = serde_json::from_str(text).expect("an object");
    let mut keys: Vec<String> = object.keys().cloned().collect();
    keys.sort_by_key(|key| text.find(&format!("\"{key}\":")).expect("written"));
    keys
}

#[test]
fn a_refund_is_written_in_the_order_it_always_was() {
    let mut declined = refund(3, 100)
        .finish(
            &Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined)),
            now().plus_seconds(90),
        )
        .expect("processing");
    declined.merchant_refund_id = Some(MerchantRefundId::parse("r-3").expect("valid"));
    let text = serde_json::to_string(&RefundView::new(&declined)).expect("JSON");
    assert_eq!(
        keys_as_written(&text),
        [
            "refundId",
            "operationId",
            "merchantRefundId",
            "amount",
            "currency",
            "debitedAmount",
            "status",
            "errorCode",
            "errorMessage",
            "fee",
            "createdAt",
            "updatedAt"
        ],
        "{text}"
    );
}
