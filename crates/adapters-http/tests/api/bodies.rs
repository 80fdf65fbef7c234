//! Bodies as a whole: every invalid field listed at once, malformed JSON, repeated keys, nulls.

use serde_json::json;

use crate::fields::with;
use crate::helpers::{deposit_body, each_backend, Setup};

#[tokio::test]
async fn every_invalid_field_is_listed_and_nothing_is_created() {
    each_backend(Setup::default(), |app| async move {
        let body = json!({"amount": 100, "currency": "rub", "paymentMethod": "cash",
                          "merchantOperationId": "order-9", "extra": true,
                          "callbackUrl": "nope", "userData": {"email": "x"}});
        let answer = app.deposit(&body).await;
        answer.assert_error(400, "InvalidRequest");
        assert_eq!(
            answer.sorted_detail_fields(),
            vec![
                "amount",
                "callbackUrl",
                "currency",
                "extra",
                "paymentMethod",
                "userData.email",
                "userId"
            ]
        );
        app.assert_not_found("/api/v1/deposits?merchantOperationId=order-9")
            .await;
        let good = with(
            deposit_body("card", "1.00"),
            "merchantOperationId",
            "order-9".into(),
        );
        let created = app.deposit(&good).await;
        assert_eq!(created.status, 200, "the id stayed free: {}", created.text);
        assert!(
            created.data().get("merchantOperationId").is_none(),
            "a new operation, not a replay"
        );
    })
    .await;
}

#[tokio::test]
async fn bodies_must_be_one_json_object_without_repeated_keys() {
    each_backend(Setup::default(), |app| async move {
        let good = deposit_body("card", "1.00").to_string();
        let cases = [
            ("".to_string(), "body: is empty"),
            ("[]".to_string(), "body: must be a JSON object"),
            ("null".to_string(), "body: must be a JSON object"),
            (good.replace('}', ""), "body: malformed JSON"),
            (format!("{good} {{}}"), "body: malformed JSON"),
            (good.replace("{", "{\"userId\": \"again\", "), "body: the key \"userId\" is given twice"),
            (good.replace("}", ", \"userData\": {\"a\": \"1\", \"a\": \"2\"}}"), "body: the key \"a\" is given twice"),
        ];
        for (body, message) in cases {
            let answer = app.post("/api/v1/deposits", &body).await;
            answer.assert_error(400, "InvalidRequest");
            assert!(answer.body.get("details").is_none(), "{}", answer.text);
            let text = answer.body["errorMessage"].as_str().unwrap_or("");
            assert!(text.starts_with(message), "{body:?}: {text}");
        }
        let nulls = json!({"amount": "1.00", "currency": "RUB", "paymentMethod": "card", "userId": "u",
                           "merchantOperationId": null, "callbackUrl": null, "userData": null,
                           "requisites": null});
        assert_eq!(app.deposit(&nulls).await.status, 200, "null means absent");
    })
    .await;
}
