//! The idempotency rules of docs/api.md and the business refusals: replays, 409, concurrency, 403, 422.

use std::collections::BTreeSet;

use domain::merchant::{parse_access, Secret};
use domain::operator::NewMerchant;
use serde_json::json;

use crate::helpers::{
    card_withdrawal, card_withdrawal_text, deposit_body, each_backend, Setup, Shop,
};

#[tokio::test]
async fn a_replay_answers_the_same_operation_and_a_changed_request_409() {
    each_backend(Setup::default(), |app| async move {
        let first = r#"{"amount":"100.00","currency":"RUB","paymentMethod":"card","userId":"u-1","merchantOperationId":"order-1"}"#;
        let created = app.post("/api/v1/deposits", first).await;
        created.assert_ok();
        assert!(created.data().get("createdAt").is_none(), "a creation");

        let reordered = "{ \"merchantOperationId\" : \"order-1\",\n \"userId\":\"u-1\", \"paymentMethod\":\"card\", \"currency\":\"RUB\", \"amount\":\"100.00\" }";
        let replay = app.post("/api/v1/deposits", reordered).await;
        replay.assert_ok();
        assert_eq!(replay.operation_id(), created.operation_id());
        assert_eq!(replay.data()["merchantOperationId"], "order-1", "the read shape");
        assert_eq!(replay.data()["paymentMethod"], "card");
        assert_eq!(replay.data()["redirectUrl"], created.data()["redirectUrl"]);

        for changed in [
            first.replace("100.00", "100.01"),
            first.replace("u-1", "u-2"),
            first.replace("}", ",\"callbackUrl\":\"https://shop.example/cb\"}"),
        ] {
            app.post("/api/v1/deposits", &changed)
                .await
                .assert_error(409, "DuplicateOperation");
        }
        let other_direction = json!({"amount": "1.00", "currency": "RUB", "paymentMethod": "card",
            "userId": "u-1", "merchantOperationId": "order-1",
            "requisites": {"pan": "4242424242424242", "cardholderName": "IVAN"}});
        app.credit("1.00").await;
        let payout = app.withdraw(&other_direction).await;
        assert_eq!(payout.status, 200, "unique per direction: {}", payout.text);
        let theirs = app.post_as(&app.other, "/api/v1/deposits", first).await;
        assert_eq!(theirs.status, 200, "unique per merchant: {}", theirs.text);
        assert_ne!(theirs.operation_id(), created.operation_id());
    })
    .await;
}

#[tokio::test]
async fn a_replayed_withdrawal_holds_once() {
    each_backend(Setup::credited("100.00"), |app| async move {
        let body = card_withdrawal_text("60.00", "payout-1");
        let first = app.post("/api/v1/withdrawals", &body).await;
        let second = app.post("/api/v1/withdrawals", &body).await;
        first.assert_ok();
        second.assert_ok();
        assert_eq!(first.operation_id(), second.operation_id());
        assert_eq!(second.data()["requisites"]["pan"], "424242******4242");
        app.assert_balance("40.00", "60.00").await;
    })
    .await;
}

#[tokio::test]
async fn identical_requests_at_the_same_moment_create_one_operation() {
    each_backend(Setup::credited("100.00"), |app| async move {
        let body = card_withdrawal_text("10.00", "race-1");
        let answers =
            futures::future::join_all((0..8).map(|_| app.post("/api/v1/withdrawals", &body))).await;
        let ids: BTreeSet<String> = answers
            .iter()
            .map(|a| {
                a.assert_ok();
                a.operation_id()
            })
            .collect();
        assert_eq!(ids.len(), 1);
        app.assert_balance("90.00", "10.00").await;
    })
    .await;
}

#[tokio::test]
async fn a_withdrawal_over_the_available_balance_is_422_and_holds_nothing() {
    each_backend(Setup::credited("10.00"), |app| async move {
        let body = card_withdrawal_text("10.01", "too-much");
        app.post("/api/v1/withdrawals", &body)
            .await
            .assert_error(422, "InsufficientBalance");
        app.assert_balance("10.00", "0.00").await;
        app.credit("0.01").await;
        let answer = app.post("/api/v1/withdrawals", &body).await;
        assert_eq!(answer.status, 200, "the id stayed free: {}", answer.text);
        app.assert_balance("0.00", "10.01").await;
        app.assert_withdrawal_refused(
            &card_withdrawal("0.01", "4242424242424242"),
            422,
            "InsufficientBalance",
        )
        .await;
    })
    .await;
}

#[tokio::test]
async fn methods_without_access_are_403() {
    each_backend(Setup::default(), |app| async move {
        let limited = app
            .operator()
            .create_merchant(NewMerchant {
                id: None,
                name: "limited".into(),
                access: parse_access("deposit:card,withdrawal:sbp").expect("valid"),
                deposit_secret: Secret::new("ab".repeat(32)),
                withdrawal_secret: Secret::new("cd".repeat(32)),
                require_timestamp: false,
                require_signature_v2: false,
            })
            .await
            .expect("created");
        let shop = Shop { merchant: limited };
        let allowed = app
            .post_as(
                &shop,
                "/api/v1/deposits",
                &deposit_body("card", "1.00").to_string(),
            )
            .await;
        allowed.assert_ok();
        app.post_as(
            &shop,
            "/api/v1/deposits",
            &deposit_body("sbp", "1.00").to_string(),
        )
        .await
        .assert_error(403, "Forbidden");
        app.post_as(
            &shop,
            "/api/v1/withdrawals",
            &card_withdrawal("1.00", "4242424242424242").to_string(),
        )
        .await
        .assert_error(403, "Forbidden");
        let bad = deposit_body("sbp", "1.0").to_string();
        app.post_as(&shop, "/api/v1/deposits", &bad)
            .await
            .assert_error(400, "InvalidRequest");
    })
    .await;
}
