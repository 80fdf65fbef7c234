//! The field rules of docs/api.md: every rule with good and bad values, and bodies as a whole.

use serde_json::{json, Value};

use crate::helpers::{deposit_body, each_backend, sbp_withdrawal, Answer, Setup};

/// `body` with `field` set to `value`.
pub(crate) fn with(mut body: Value, field: &str, value: Value) -> Value {
    body[field] = value;
    body
}

#[track_caller]
pub(crate) fn assert_field_error(answer: &Answer, field: &str) {
    answer.assert_error(400, "InvalidRequest");
    assert_eq!(
        answer.detail_fields(),
        vec![field.to_string()],
        "{}",
        answer.text
    );
    let message = answer.body["errorMessage"].as_str().unwrap_or("");
    assert!(message.starts_with(&format!("{field}: ")), "{message}");
}

#[tokio::test]
async fn amounts_are_two_digit_decimal_strings_above_zero() {
    each_backend(Setup::default(), |app| async move {
        for bad in [
            "100", "100.0", "-1.00", "0.00", "1e2", "01.00", "100.000", " 1.00", ".50", "",
        ] {
            let answer = app
                .deposit(&with(deposit_body("card", "1.00"), "amount", bad.into()))
                .await;
            assert_field_error(&answer, "amount");
        }
        for raw in ["100.00", "100", "1e2", "true", "[\"1.00\"]", "{}"] {
            let body = deposit_body("card", "1.00")
                .to_string()
                .replace("\"1.00\"", raw);
            let answer = app.post("/api/v1/deposits", &body).await;
            assert_field_error(&answer, "amount");
            assert_eq!(answer.body["details"][0]["message"], "must be a string");
        }
        for good in ["0.01", "1.00", "100.50", "10000000.00"] {
            let answer = app.deposit(&deposit_body("card", good)).await;
            assert_eq!(answer.status, 200, "{good}: {}", answer.text);
            assert_eq!(answer.data()["amount"], good);
        }
        app.assert_deposit_refused(&deposit_body("card", "10000000.01"), 422, "NoRouteFound")
            .await;
    })
    .await;
}

#[tokio::test]
async fn currencies_are_three_capitals_and_only_rub_has_routes() {
    each_backend(Setup::default(), |app| async move {
        for bad in ["rub", "RU", "RUBL", "", "R1B"] {
            let answer = app
                .deposit(&with(deposit_body("card", "1.00"), "currency", bad.into()))
                .await;
            assert_field_error(&answer, "currency");
        }
        for other in ["USD", "EUR"] {
            let answer = app
                .deposit(&with(
                    deposit_body("card", "1.00"),
                    "currency",
                    other.into(),
                ))
                .await;
            answer.assert_error(422, "NoRouteFound");
            app.credit("10.00").await;
            let payout = with(
                sbp_withdrawal("1.00", "+79001234567"),
                "currency",
                other.into(),
            );
            app.assert_withdrawal_refused(&payout, 422, "NoRouteFound")
                .await;
        }
    })
    .await;
}

#[tokio::test]
async fn payment_methods_depend_on_the_direction() {
    each_backend(Setup::default(), |app| async move {
        for bad in ["cash", "CARD", "", "sbp-qr"] {
            assert_field_error(
                &app.deposit(&deposit_body(bad, "1.00")).await,
                "paymentMethod",
            );
        }
        app.credit("10.00").await;
        for bad in ["sbp_qr", "bank_a_pay", "bank_b_pay", "bank_c_pay", "cash"] {
            let body = with(
                sbp_withdrawal("1.00", "+79001234567"),
                "paymentMethod",
                bad.into(),
            );
            let answer = app.withdraw(&body).await;
            answer.assert_error(400, "InvalidRequest");
            assert!(
                answer
                    .detail_fields()
                    .contains(&"paymentMethod".to_string()),
                "{}",
                answer.text
            );
        }
    })
    .await;
}

#[tokio::test]
async fn user_ids_and_merchant_operation_ids_have_their_lengths_and_characters() {
    each_backend(Setup::default(), |app| async move {
        for bad in [String::new(), "u".repeat(129)] {
            let answer = app
                .deposit(&with(deposit_body("card", "1.00"), "userId", bad.into()))
                .await;
            assert_field_error(&answer, "userId");
        }
        for good in ["u".repeat(128), "ж".repeat(128), "user 1".into()] {
            let answer = app
                .deposit(&with(deposit_body("card", "1.00"), "userId", good.into()))
                .await;
            answer.assert_ok();
        }
        for bad in [
            String::new(),
            "a b".into(),
            "é".into(),
            "m".repeat(129),
            "tab\t".into(),
        ] {
            let body = with(
                deposit_body("card", "1.00"),
                "merchantOperationId",
                bad.into(),
            );
            assert_field_error(&app.deposit(&body).await, "merchantOperationId");
        }
        for good in [
            "!~#$%&'()*+,-./:;<=>?@[\\]^_`{|}".to_string(),
            "m".repeat(128),
        ] {
            let body = with(
                deposit_body("card", "1.00"),
                "merchantOperationId",
                good.into(),
            );
            assert_eq!(app.deposit(&body).await.status, 200);
        }
    })
    .await;
}

#[tokio::test]
async fn urls_are_absolute_http_or_https_up_to_2048_characters() {
    each_backend(Setup::default(), |app| async move {
        let long = format!("https://shop.example/{}", "x".repeat(2030));
        for field in ["callbackUrl", "successUrl", "failUrl", "processingUrl"] {
            for bad in [
                "ftp://shop.example/cb",
                "/relative",
                "shop.example",
                "javascript:alert(1)",
                &long,
            ] {
                let body = with(deposit_body("card", "1.00"), field, bad.into());
                assert_field_error(&app.deposit(&body).await, field);
            }
            for good in ["https://shop.example/cb?x=1", "http://127.0.0.1:9000/"] {
                let body = with(deposit_body("card", "1.00"), field, good.into());
                assert_eq!(app.deposit(&body).await.status, 200, "{field} {good}");
            }
        }
        app.credit("10.00").await;
        let body = with(
            sbp_withdrawal("1.00", "+79001234567"),
            "successUrl",
            "https://a.example".into(),
        );
        let answer = app.withdraw(&body).await;
        assert_field_error(&answer, "successUrl");
    })
    .await;
}

#[tokio::test]
async fn user_data_checks_email_and_ip_and_keeps_other_strings() {
    each_backend(Setup::default(), |app| async move {
        let user = |data: Value| with(deposit_body("card", "1.00"), "userData", data);
        for bad in ["user", "user@", "@example.com", "a b@example.com"] {
            assert_field_error(
                &app.deposit(&user(json!({"email": bad}))).await,
                "userData.email",
            );
        }
        for bad in ["300.1.1.1", "1.2.3", "::g", "localhost"] {
            let answer = app.deposit(&user(json!({"ipAddress": bad}))).await;
            assert_field_error(&answer, "userData.ipAddress");
        }
        assert_field_error(
            &app.deposit(&user(json!({"country": 7}))).await,
            "userData.country",
        );
        assert_field_error(&app.deposit(&user(json!("a@b.example"))).await, "userData");
        let many: serde_json::Map<String, Value> = (0..33)
            .map(|i| (format!("k{i}"), Value::from("v")))
            .collect();
        assert_field_error(&app.deposit(&user(Value::Object(many))).await, "userData");
        let good = user(json!({"email": "a@b.example", "ipAddress": "2001:db8::1",
                               "country": "RU", "nothing": null}));
        assert_eq!(app.deposit(&good).await.status, 200);
        let good = user(json!({"ipAddress": "10.0.0.1"}));
        assert_eq!(app.deposit(&good).await.status, 200);
    })
    .await;
}
