//! Refunds and cancels end to end: a refund settles and the deposit shows it, a
//! merchantRefundId names one request, another merchant's deposit is not found, refunds stay
//! within the deposit's amount; waiting operations are canceled once.

use std::time::Duration;

use domain::operation::Outcome;
use domain::OperationId;
use serde_json::{json, Value};

use crate::helpers::{
    card_deposit, deposit_body, each_backend, sbp_withdrawal, Answer, Setup, TestApp,
};

/// A new card deposit of `amount` with merchantOperationId `moid`, approved; its id.
async fn approved_deposit(app: &TestApp, amount: &str, moid: &str) -> String {
    let created = app.deposit(&card_deposit(amount, moid)).await;
    created.assert_ok();
    let id = created.operation_id();
    let parsed = OperationId::parse(&id).expect("a UUID");
    (app.gateway.answers().complete(parsed, Outcome::Approve))
        .await
        .expect("approved");
    id
}

async fn refund(app: &TestApp, deposit: &str, body: &Value) -> Answer {
    let path = format!("/api/v1/deposits/{deposit}/refunds");
    app.post(&path, &body.to_string()).await
}

/// `data` of an answer that must be 200.
#[track_caller]
fn ok(answer: &Answer) -> &Value {
    answer.assert_ok();
    answer.data()
}

#[tokio::test]
async fn a_refund_holds_then_settles_and_every_read_shape_of_the_deposit_shows_it() {
    each_backend(Setup::default(), |app| async move {
        let id = approved_deposit(&app, "100.00", "order-1").await;
        app.assert_balance("100.00", "0.00").await;
        let body = json!({"amount": "30.00", "merchantRefundId": "r-1"});
        let created = refund(&app, &id, &body).await;
        let data = ok(&created);
        assert_eq!(data["status"], 3);
        assert_eq!(data["operationId"], id.as_str());
        assert_eq!(data["merchantRefundId"], "r-1");
        assert_eq!(
            (&data["amount"], &data["currency"]),
            (&json!("30.00"), &json!("RUB"))
        );
        assert!(data.get("errorCode").is_none(), "{}", created.text);
        app.assert_balance("70.00", "30.00").await;

        app.settle_refunds("test").await;
        let path = format!(
            "/api/v1/deposits/{id}/refunds/{}",
            data["refundId"].as_str().unwrap_or("")
        );
        let read = app.get(&path).await;
        assert_eq!(ok(&read)["status"], 1);
        assert_eq!(read.data()["refundId"], data["refundId"]);
        app.assert_balance("70.00", "0.00").await;

        let mut creation = deposit_body("card", "100.00");
        creation["merchantOperationId"] = json!("order-1");
        let shapes = [
            app.get(&format!("/api/v1/deposits/{id}")).await,
            app.get("/api/v1/deposits?merchantOperationId=order-1")
                .await,
            app.deposit(&creation).await,
        ];
        for shape in &shapes {
            let data = ok(shape);
            assert_eq!(data["refundedAmount"], "30.00", "{}", shape.text);
            assert_eq!(data["refunds"], json!([read.data()]), "{}", shape.text);
        }
    })
    .await;
}

#[tokio::test]
async fn a_merchant_refund_id_names_one_request_on_one_deposit() {
    each_backend(Setup::default(), |app| async move {
        let id = approved_deposit(&app, "100.00", "order-1").await;
        let other = approved_deposit(&app, "100.00", "order-2").await;
        let body = json!({"amount": "30.00", "merchantRefundId": "r-1",
                          "callbackUrl": "https://shop.example/refunds"});
        let created = refund(&app, &id, &body).await;
        let refund_id = ok(&created)["refundId"].clone();
        // Another key order and spacing: the same request.
        let text = r#"{ "callbackUrl": "https://shop.example/refunds", "merchantRefundId": "r-1", "amount": "30.00" }"#;
        let replay = app.post(&format!("/api/v1/deposits/{id}/refunds"), text).await;
        assert_eq!(ok(&replay)["refundId"], refund_id);
        app.assert_balance("170.00", "30.00").await;

        let mut changed = body.clone();
        changed["amount"] = json!("31.00");
        refund(&app, &id, &changed).await.assert_error(409, "DuplicateOperation");
        refund(&app, &other, &body).await.assert_error(409, "DuplicateOperation");
        let read = app.get(&format!("/api/v1/deposits/{other}")).await;
        assert_eq!(ok(&read)["refunds"], json!([]), "a refused refund creates nothing");
        app.assert_balance("170.00", "30.00").await;

        // Without a merchantRefundId every request is a new refund.
        let plain = json!({"amount": "1.00"});
        let a = refund(&app, &id, &plain).await;
        let b = refund(&app, &id, &plain).await;
        assert_ne!(ok(&a)["refundId"], ok(&b)["refundId"]);
    })
    .await;
}

#[tokio::test]
async fn another_merchants_deposit_and_refunds_are_not_found() {
    each_backend(Setup::default(), |app| async move {
        let id = approved_deposit(&app, "100.00", "order-1").await;
        let created = refund(&app, &id, &json!({"amount": "10.00"})).await;
        let refund_id = ok(&created)["refundId"].as_str().unwrap_or("").to_string();
        let path = format!("/api/v1/deposits/{id}/refunds");
        let theirs = app
            .post_as(&app.other, &path, r#"{"amount": "1.00"}"#)
            .await;
        theirs.assert_error(404, "NotFound");
        let read = app.get_as(&app.other, &format!("{path}/{refund_id}")).await;
        read.assert_error(404, "NotFound");
        // The body is judged before the deposit is looked up; whether its digits fit the
        // deposit's currency, after (another merchant's deposit is not found first).
        let bad = app.post_as(&app.other, &path, r#"{"amount": "1."}"#).await;
        bad.assert_error(400, "InvalidRequest");
        let digits = app.post_as(&app.other, &path, r#"{"amount": "1"}"#).await;
        digits.assert_error(404, "NotFound");
        let digits = app.post(&path, r#"{"amount": "1"}"#).await;
        digits.assert_error(400, "InvalidRequest");
        assert_eq!(digits.detail_fields(), vec!["amount"]);
        let unknown = format!("/api/v1/deposits/{}/refunds", uuid::Uuid::new_v4());
        let bad = app.post(&unknown, r#"{"amount": "1.00", "x": 1}"#).await;
        assert_eq!(bad.detail_fields(), vec!["x"]);
    })
    .await;
}

#[tokio::test]
async fn refunds_stay_within_the_deposit_and_a_declined_one_frees_its_part() {
    each_backend(Setup::default(), |app| async move {
        let waiting = app.deposit_id("card", "100.00").await;
        let early = refund(&app, &waiting, &json!({"amount": "1.00"})).await;
        early.assert_error(409, "InvalidState");

        let id = approved_deposit(&app, "100.00", "order-1").await;
        ok(&refund(&app, &id, &json!({"amount": "60.00"})).await);
        let declined = refund(&app, &id, &json!({"amount": "39.05"})).await;
        assert_eq!(ok(&declined)["status"], 3);
        // 0.95 of the deposit is left, and of the balance too: the deposit's limit comes first.
        let over = refund(&app, &id, &json!({"amount": "1.00"})).await;
        over.assert_error(422, "RefundExceedsAmount");
        app.settle_refunds("test").await;
        let read = app.get(&format!("/api/v1/deposits/{id}")).await;
        assert_eq!(ok(&read)["refundedAmount"], "60.00");
        assert_eq!(read.data()["refunds"][1]["status"], 2);
        assert_eq!(read.data()["refunds"][1]["errorCode"], "ProviderDeclined");
        let rest = refund(&app, &id, &json!({"amount": "40.00"})).await;
        assert_eq!(ok(&rest)["status"], 3);
        app.assert_balance("0.00", "40.00").await;
    })
    .await;
}

#[tokio::test]
async fn a_waiting_deposit_and_a_pending_payout_are_canceled_once() {
    let slow = Setup {
        settle: Some(Duration::from_secs(600)),
        ..Setup::default()
    };
    each_backend(slow, |app| async move {
        let waiting = app.deposit(&deposit_body("card", "10.00")).await;
        let path = format!("/api/v1/deposits/{}/cancel", waiting.operation_id());
        let canceled = app.post(&path, "{}").await;
        assert_eq!(ok(&canceled)["status"], 2);
        assert_eq!(canceled.data()["errorCode"], "Canceled");
        assert_eq!(canceled.data()["refundedAmount"], "0.00");
        app.post(&path, "{}")
            .await
            .assert_error(409, "InvalidState");
        let read = app.deposit_read(&waiting.operation_id()).await;
        assert_eq!(ok(&read)["errorCode"], "Canceled");

        app.credit("100.00").await;
        let payout = app.withdraw(&sbp_withdrawal("40.00", "+79001234567")).await;
        app.assert_balance("60.00", "40.00").await;
        let path = format!("/api/v1/withdrawals/{}/cancel", payout.operation_id());
        let signed_for_deposits = app
            .post_signed(&app.shop, &path, "{}", app.shop.deposit_secret())
            .await;
        signed_for_deposits.assert_error(401, "Unauthorized");
        let canceled = app.post(&path, "{}").await;
        assert_eq!(ok(&canceled)["errorCode"], "Canceled");
        app.assert_balance("100.00", "0.00").await;
        app.post(&path, "{}")
            .await
            .assert_error(409, "InvalidState");
        app.post(&path, "")
            .await
            .assert_error(400, "InvalidRequest");
    })
    .await;
}

#[tokio::test]
async fn a_cancel_the_acquirer_refuses_changes_nothing_and_may_be_retried() {
    let at_an_acquirer = Setup {
        other_provider: true,
        ..Setup::default()
    };
    each_backend(at_an_acquirer, |app| async move {
        let created = app.deposit(&deposit_body("sbp", "10.00")).await;
        assert_eq!(ok(&created)["status"], 3);
        let path = format!("/api/v1/deposits/{}/cancel", created.operation_id());
        for _ in 0..2 {
            app.post(&path, "{}")
                .await
                .assert_error(503, "ServiceUnavailable");
        }
        let read = app.deposit_read(&created.operation_id()).await;
        assert_eq!(ok(&read)["status"], 3);
    })
    .await;
}
