use super::*;
use crate::test_support::{deposit, deposit_builder, now, refund, withdrawal};
use domain::operation::{Decline, DeclineCode, Outcome};
use domain::{Currency, Status};
use serde_json::{json, Value};

fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("serializable")
}

#[test]
fn a_redirect_deposit_shows_the_seed_fields_only() {
    let op = deposit(
        Status::Processing,
        Some(Action::Redirect {
            url: "http://gw/pay/1".into(),
        }),
    );
    let view = to_json(&Data {
        data: OperationView::creation(&op, now()),
    });
    assert_eq!(
        view,
        json!({"data": {"operationId": op.id().to_string(), "status": 3, "amount": "100.00",
                        "creditedAmount": "100.00", "currency": "RUB", "fee": "0.00",
                        "redirectUrl": "http://gw/pay/1"}})
    );
}

#[test]
fn requisites_carry_lifetime_beside_them_in_data() {
    let requisites = KeptObject::new().with("qr", "data:image/png;base64,AAAA");
    let op = deposit_builder(Status::Processing, Some(Action::Requisites { requisites }))
        .expires(now().plus_seconds(600))
        .build();
    let view = to_json(&OperationView::creation(&op, now().plus_millis(1_500)));
    assert_eq!(
        view["requisites"],
        json!({"qr": "data:image/png;base64,AAAA"})
    );
    assert_eq!(view["lifetime"], json!(599));
    assert!(view["requisites"].get("lifetime").is_none());
}

#[test]
fn input_instruction_and_confirmation_actions_have_their_shapes() {
    let fields = vec![InputField::select("bank", "Bank", &[("a", "A")])];
    let op = deposit(Status::Processing, Some(Action::InputFields { fields }));
    let view = to_json(&OperationView::creation(&op, now()));
    assert_eq!(
        view["inputFields"],
        json!([{"name": "bank", "label": "Bank", "type": "select", "required": true,
                "options": [{"value": "a", "label": "A"}]}])
    );
    assert!(view.get("lifetime").is_none());

    let steps = vec![InstructionStep {
        title: "Pay".into(),
        description: "Now".into(),
    }];
    let op = deposit(
        Status::Processing,
        Some(Action::Instruction {
            category: "DoPayment".into(),
            steps,
        }),
    );
    let view = to_json(&OperationView::creation(&op, now()));
    assert_eq!(
        view["instruction"],
        json!({"category": "DoPayment", "steps": [{"title": "Pay", "description": "Now"}]})
    );

    let op = deposit(
        Status::Processing,
        Some(Action::Confirmation {
            channels: vec!["sms".into()],
            attempts_left: 3,
        }),
    );
    let view = to_json(&OperationView::creation(&op, now()));
    assert_eq!(view["confirmRequired"], json!(true));
    assert_eq!(view["confirmation"], json!({"channels": ["sms"]}));
    assert!(!view.to_string().contains("attempts"));
}

#[test]
fn a_final_deposit_shows_no_action_and_a_decline_shows_its_code() {
    let op = deposit_builder(
        Status::Declined,
        Some(Action::Redirect {
            url: "http://gw/pay/1".into(),
        }),
    )
    .declined(Decline::new(DeclineCode::CardDeclined))
    .build();
    let view = to_json(&OperationView::creation(&op, now()));
    assert!(view.get("redirectUrl").is_none());
    assert_eq!(view["status"], json!(2));
    assert_eq!(view["errorCode"], json!("CardDeclined"));
    assert_eq!(view["errorMessage"], json!("The card was declined"));
}

#[test]
fn reads_add_the_read_fields_and_omit_absent_ones() {
    let op = deposit(Status::Approved, None);
    let view = to_json(&OperationView::read(&op, &[], &[], now()));
    let keys: Vec<&str> = view
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        vec![
            "amount",
            "createdAt",
            "creditedAmount",
            "currency",
            "disputes",
            "fee",
            "operationId",
            "paymentMethod",
            "refundedAmount",
            "refunds",
            "status",
            "updatedAt",
            "userId"
        ]
    );
    assert_eq!(view["createdAt"], json!("2026-11-21T10:00:00Z"));
    assert_eq!(view["refundedAmount"], json!("0.00"));
    assert_eq!(view["refunds"], json!([]));
    assert_eq!(view["disputes"], json!([]));
    assert!(!view.to_string().contains("null"));
}

#[test]
fn a_deposit_read_sums_its_approved_refunds_and_lists_them_all_in_order() {
    let op = deposit(Status::Approved, None);
    let approved = |n, minor| {
        refund(n, minor)
            .finish(&Outcome::Approve, now().plus_seconds(60))
            .expect("processing")
    };
    let declined = refund(2, 500)
        .finish(
            &Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined)),
            now().plus_seconds(60),
        )
        .expect("processing");
    let refunds = [
        approved(1, 3_000),
        declined,
        refund(3, 700),
        approved(4, 1_050),
    ];
    let view = to_json(&OperationView::read(&op, &refunds, &[], now()));
    assert_eq!(view["refundedAmount"], json!("40.50"));
    let amounts: Vec<&Value> = view["refunds"]
        .as_array()
        .expect("an array")
        .iter()
        .map(|r| &r["amount"])
        .collect();
    assert_eq!(
        amounts,
        [
            &json!("30.00"),
            &json!("5.00"),
            &json!("7.00"),
            &json!("10.50")
        ]
    );
    assert_eq!(view["refunds"][1]["errorCode"], json!("ProviderDeclined"));
    assert_eq!(view["refunds"][2]["status"], json!(3));
}

#[test]
fn creations_and_withdrawals_carry_no_refund_fields() {
    let op = deposit(Status::Approved, None);
    let creation = to_json(&OperationView::creation(&op, now()));
    assert!(creation.get("refunds").is_none() && creation.get("refundedAmount").is_none());
    let payout = withdrawal(Status::Approved);
    let read = to_json(&OperationView::read(&payout, &[], &[], now()));
    assert!(read.get("refunds").is_none() && read.get("refundedAmount").is_none());
}

#[test]
fn a_withdrawal_read_carries_its_masked_requisites() {
    let op = withdrawal(Status::Processing);
    let creation = to_json(&OperationView::creation(&op, now()));
    assert!(creation.get("requisites").is_none());
    let read = to_json(&OperationView::read(&op, &[], &[], now()));
    assert_eq!(read["requisites"]["pan"], json!("424242******4242"));
    assert_eq!(read["merchantOperationId"], json!("order-1"));
    assert_eq!(read["paymentMethod"], json!("card"));
}

#[test]
fn balances_are_two_digit_strings() {
    let balances = [Balance {
        currency: Currency::RUB,
        available: 10_000,
        held: 505,
    }];
    assert_eq!(
        to_json(&Data {
            data: Balances::new(&balances)
        }),
        json!({"data": {"balances": [{"currency": "RUB", "available": "100.00", "held": "5.05"}]}})
    );
}

#[test]
fn the_public_read_shape_is_the_read_answer() {
    let op = withdrawal(Status::Approved);
    let shape = crate::read_shape(&op, &[], &[], now()).expect("serializable");
    assert_eq!(shape, to_json(&OperationView::read(&op, &[], &[], now())));
    assert_eq!(shape["operationId"], json!(op.id().to_string()));
    assert!(shape["requisites"].is_object(), "{shape}");

    let op = deposit(Status::Approved, None);
    let refunds = [refund(1, 3_000)];
    let shape = crate::read_shape(&op, &refunds, &[], now()).expect("serializable");
    assert_eq!(
        shape,
        to_json(&OperationView::read(&op, &refunds, &[], now()))
    );
    assert_eq!(shape["refunds"][0]["amount"], json!("30.00"), "{shape}");
}

#[test]
fn a_declined_creation_is_written_in_the_order_it_always_was() {
    let op = deposit_builder(Status::Declined, None)
        .declined(Decline::new(DeclineCode::CardDeclined))
        .build();
    let text = serde_json::to_string(&OperationView::creation(&op, now())).expect("JSON");
    let object: serde_json::Map<String, Value> = serde_json::from_str(&text).expect("object");
    let mut keys: Vec<&String> = object.keys().collect();
    keys.sort_by_key(|key| text.find(&format!("\"{key}\":")).expect("written"));
    assert_eq!(
        keys,
        [
            "operationId",
            "status",
            "amount",
            "creditedAmount",
            "currency",
            "errorCode",
            "errorMessage",
            "fee"
        ],
        "{text}"
    );
}
