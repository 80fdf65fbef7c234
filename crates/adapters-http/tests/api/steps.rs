//! The card flows a route can choose: input fields, confirmation, requisites, instruction.

use domain::route::Flow;
use serde_json::json;

use crate::helpers::{deposit_body, each_backend, Setup};

fn flow(flow: Flow) -> Setup {
    Setup {
        routes: vec![(flow, 200)],
        ..Setup::default()
    }
}

#[tokio::test]
async fn input_fields_are_asked_checked_and_then_approve() {
    each_backend(flow(Flow::InputFields), |app| async move {
        let created = app.deposit(&deposit_body("card", "10.00")).await;
        created.assert_ok();
        let fields = &created.data()["inputFields"];
        assert_eq!(fields[0]["name"], "payerName");
        assert_eq!(fields[0]["type"], "string");
        assert_eq!(fields[1]["type"], "select");
        assert!(fields[1]["options"][0]["value"].is_string());
        assert!(created.data().get("redirectUrl").is_none());
        let id = created.operation_id();
        let path = format!("/api/v1/deposits/{id}/input");

        let bad = app
            .post(
                &path,
                r#"{"fields": {"payerName": "Ivan", "bank": "nope"}}"#,
            )
            .await;
        bad.assert_error(400, "InvalidRequest");
        assert_eq!(bad.detail_fields(), vec!["fields.bank"]);
        let missing = app.post(&path, r#"{"fields": {"bank": "bank_a"}}"#).await;
        assert_eq!(missing.detail_fields(), vec!["fields.payerName"]);
        let typed = app.post(&path, r#"{"fields": {"payerName": 1}}"#).await;
        assert_eq!(typed.detail_fields(), vec!["fields.payerName"]);
        app.post(&path, r#"{"values": {}}"#)
            .await
            .assert_error(400, "InvalidRequest");

        let body = r#"{"fields": {"payerName": "Ivan Ivanov", "bank": "bank_a"}}"#;
        app.post_as(&app.other, &path, body)
            .await
            .assert_error(404, "NotFound");
        let done = app.post(&path, body).await;
        done.assert_ok();
        assert_eq!(done.data()["status"], 1);
        assert_eq!(done.data()["operationId"], id.as_str());
        assert_eq!(done.data()["paymentMethod"], "card", "the read shape");
        assert!(done.data().get("inputFields").is_none(), "final: no action");
        app.post(&path, body)
            .await
            .assert_error(409, "InvalidState");
        assert_eq!(app.balance().await.0, "10.00");

        let redirect = app.deposit(&deposit_body("sbp", "1.00")).await;
        let path = format!("/api/v1/deposits/{}/input", redirect.operation_id());
        app.post(&path, body)
            .await
            .assert_error(409, "InvalidState");
        let path = format!("/api/v1/deposits/{}/input", uuid::Uuid::new_v4());
        app.post(&path, body).await.assert_error(404, "NotFound");
    })
    .await;
}

#[tokio::test]
async fn confirmation_codes_approve_or_decline_after_three_wrong_ones() {
    each_backend(flow(Flow::Confirmation), |app| async move {
        let created = app.deposit(&deposit_body("card", "10.00")).await;
        created.assert_ok();
        assert_eq!(created.data()["confirmRequired"], true);
        assert_eq!(created.data()["confirmation"], json!({"channels": ["sms"]}));
        let path = format!("/api/v1/deposits/{}/confirm", created.operation_id());
        for _ in 0..2 {
            app.post(&path, r#"{"code": "000000"}"#)
                .await
                .assert_error(422, "InvalidCode");
        }
        let last = app.post(&path, r#"{"code": "000000"}"#).await;
        last.assert_ok();
        assert_eq!(last.data()["status"], 2);
        assert_eq!(last.data()["errorCode"], "ConfirmationFailed");
        app.post(&path, r#"{"code": "123456"}"#)
            .await
            .assert_error(409, "InvalidState");

        let created = app.deposit(&deposit_body("card", "10.00")).await;
        let path = format!("/api/v1/deposits/{}/confirm", created.operation_id());
        app.post(&path, r#"{"code": 123456}"#)
            .await
            .assert_error(400, "InvalidRequest");
        app.post(&path, "")
            .await
            .assert_error(400, "InvalidRequest");
        let done = app.post(&path, r#"{"code": "123456"}"#).await;
        done.assert_ok();
        assert_eq!(done.data()["status"], 1);
        assert!(done.data().get("confirmRequired").is_none());
    })
    .await;
}

#[tokio::test]
async fn the_requisites_flow_shows_where_to_pay_and_for_how_long() {
    each_backend(flow(Flow::Requisites), |app| async move {
        let created = app.deposit(&deposit_body("card", "10.00")).await;
        created.assert_ok();
        let requisites = &created.data()["requisites"];
        for key in ["cardNumber", "bankName", "holderName"] {
            assert!(requisites[key].is_string(), "{}", created.text);
        }
        assert!(created.data()["lifetime"].as_i64().is_some_and(|l| l > 0));
        assert!(
            requisites.get("lifetime").is_none(),
            "lifetime is beside requisites"
        );
        assert!(created.data().get("redirectUrl").is_none());
    })
    .await;
}

#[tokio::test]
async fn the_instruction_flow_lists_its_steps() {
    each_backend(flow(Flow::Instruction), |app| async move {
        let created = app.deposit(&deposit_body("card", "10.00")).await;
        created.assert_ok();
        let instruction = &created.data()["instruction"];
        assert_eq!(instruction["category"], "DoPayment");
        assert!(instruction["steps"][0]["title"].is_string());
        assert!(instruction["steps"][0]["description"].is_string());
        assert!(created.data().get("lifetime").is_none());
    })
    .await;
}
