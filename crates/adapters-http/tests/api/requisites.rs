//! Requisites: any object for deposits, the method's fields for withdrawals.

use serde_json::{json, Value};

use crate::fields::{assert_field_error, with};
use crate::helpers::{card_withdrawal, deposit_body, each_backend, sbp_withdrawal, Setup};

#[tokio::test]
async fn deposit_requisites_are_any_object() {
    each_backend(Setup::default(), |app| async move {
        let body = with(
            deposit_body("card", "1.00"),
            "requisites",
            json!({"pan": "4242424242424242", "cvc": "123", "nested": {"a": [1, 2]}}),
        );
        assert_eq!(app.deposit(&body).await.status, 200);
        let body = with(
            deposit_body("card", "1.00"),
            "requisites",
            json!("4242424242424242"),
        );
        assert_field_error(&app.deposit(&body).await, "requisites");
    })
    .await;
}

#[tokio::test]
async fn withdrawal_requisites_follow_their_method() {
    each_backend(Setup::credited("100.00"), |app| async move {
        let post = |body: Value| {
            let app = &app;
            async move { app.withdraw(&body).await }
        };
        for bad in [
            "79001234567",
            "+0123456789",
            "+1234567",
            "+7 900 123",
            "+1234567890123456",
        ] {
            assert_field_error(&post(sbp_withdrawal("1.00", bad)).await, "requisites.phone");
        }
        let sbp = |field: &str, value: Value| {
            let mut body = sbp_withdrawal("1.00", "+79001234567");
            body["requisites"][field] = value;
            body
        };
        assert_field_error(
            &post(sbp("accountName", "".into())).await,
            "requisites.accountName",
        );
        assert_field_error(
            &post(sbp("accountName", "a".repeat(257).into())).await,
            "requisites.accountName",
        );
        assert_field_error(
            &post(sbp("bankName", "b".repeat(129).into())).await,
            "requisites.bankName",
        );
        assert_field_error(
            &post(sbp("bankName", 5.into())).await,
            "requisites.bankName",
        );
        assert_field_error(
            &post(sbp("pan", "4242424242424242".into())).await,
            "requisites.pan",
        );
        assert_eq!(
            post(sbp("accountName", "a".repeat(256).into()))
                .await
                .status,
            200
        );

        for bad in [
            "4242424242424241",
            "424242424242",
            "42424242424242424242",
            "4242 4242 4242 4242",
        ] {
            assert_field_error(&post(card_withdrawal("1.00", bad)).await, "requisites.pan");
        }
        let mut body = card_withdrawal("1.00", "4242424242424242");
        body["requisites"]["cardholderName"] = "c".repeat(129).into();
        assert_field_error(&post(body).await, "requisites.cardholderName");
        let mut body = card_withdrawal("1.00", "4242424242424242");
        body["requisites"] = Value::Null;
        assert_field_error(&post(body).await, "requisites");
        let mut body = card_withdrawal("1.00", "4242424242424242");
        body["requisites"] = json!({"pan": "4242424242424242"});
        assert_field_error(&post(body).await, "requisites.cardholderName");
        for pan in ["4242424242424242", "5555555555554444", "4000000000000002"] {
            assert_eq!(
                post(card_withdrawal("1.00", pan)).await.status,
                200,
                "{pan}"
            );
        }
    })
    .await;
}
