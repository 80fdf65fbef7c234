//! Requests that reach the domain: creation, replay, reads, steps, balance and error mapping.

use actix_web::test::TestRequest;
use domain::ledger::Balance;
use domain::operation::Action;
use domain::ports::{DepositStart, InsertError, MockMerchantDirectory, StoreError};
use domain::signature::Fingerprint;
use domain::{Currency, Status};
use serde_json::json;

use super::*;
use crate::test_support::{
    deposit, deposit_builder, merchant, op_id, withdrawal, withdrawal_builder, Mocks,
};

const BODY: &str = r#"{"amount": "100.00", "currency": "RUB", "paymentMethod": "card",
  "userId": "u-1", "merchantOperationId": "order-1"}"#;

fn redirect_mocks() -> Mocks {
    let mut mocks = Mocks::new();
    mocks.provider.expect_start_deposit().returning(|_, _| {
        Ok(DepositStart::Wait(Action::Redirect {
            url: "http://gw/pay/1".into(),
        }))
    });
    mocks
}

#[actix_web::test]
async fn a_deposit_is_created_and_counted() {
    let mut mocks = redirect_mocks();
    mocks.store.expect_insert().returning(|_| Ok(()));
    let app = default_service(mocks).await;
    let (status, _, body) = call(&app, post_deposit(BODY)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"data": {"operationId": op_id().to_string(), "status": 3, "amount": "100.00",
                        "creditedAmount": "100.00", "currency": "RUB", "fee": "0.00",
                        "redirectUrl": "http://gw/pay/1"}})
    );
    let (_, _, metrics) = call(&app, TestRequest::get().uri("/metrics")).await;
    let text = metrics.as_str().unwrap_or("");
    assert!(
        text.contains(
            r#"operations_created_total{direction="deposit",method="card",status="processing"} 1"#
        ),
        "{text}"
    );
    assert!(text.contains(r#"route="/api/v1/deposits""#), "{text}");
}

#[actix_web::test]
async fn a_replay_answers_the_read_shape_and_a_different_request_409() {
    let mut mocks = redirect_mocks();
    mocks
        .store
        .expect_insert()
        .returning(|_| Err(InsertError::Duplicate));
    mocks.store.expect_find_by_merchant_operation_id().returning(|_, _, _| {
        // The stored fingerprint is of the canonical form of BODY (key order, spaces ignored).
        let canonical = br#"{"amount":"100.00","currency":"RUB","merchantOperationId":"order-1","paymentMethod":"card","userId":"u-1"}"#;
        let key = merchant().deposit_keys.newest().clone();
        let op = deposit_builder(Status::Processing, Some(Action::Redirect { url: "http://gw/pay/1".into() }))
            .merchant_operation_id("order-1")
            .build();
        Ok(Some((op, Some(Fingerprint::of(&key, canonical)))))
    });
    let app = default_service(mocks).await;
    let reordered = r#"{"userId":"u-1","merchantOperationId":"order-1","amount":"100.00","paymentMethod":"card","currency":"RUB"}"#;
    let (status, _, body) = call(
        &app,
        post(
            "/api/v1/deposits",
            reordered,
            &deposit_sig(reordered.as_bytes()),
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["merchantOperationId"], "order-1");
    assert_eq!(body["data"]["redirectUrl"], "http://gw/pay/1");
    assert_eq!(body["data"]["createdAt"], "2026-11-21T10:00:00Z");

    let changed = BODY.replace("u-1", "u-2");
    let (status, _, body) = call(
        &app,
        post(
            "/api/v1/deposits",
            &changed,
            &deposit_sig(changed.as_bytes()),
        ),
    )
    .await;
    assert_eq!(status, 409);
    assert_error(&body, "DuplicateOperation");
}

#[actix_web::test]
async fn a_bug_is_a_500_with_the_request_id_and_nothing_internal() {
    let mut mocks = redirect_mocks();
    mocks.store.expect_insert().returning(|_| {
        Err(InsertError::Store(StoreError::Other(anyhow::anyhow!(
            "disk on fire"
        ))))
    });
    let app = default_service(mocks).await;
    let req = post_deposit(BODY).insert_header(("x-request-id", "corr-77"));
    let (status, headers, body) = call(&app, req).await;
    assert_eq!(status, 500);
    assert_error(&body, "InternalError");
    let message = body["errorMessage"].as_str().unwrap_or("");
    assert!(
        message.contains("corr-77") && !message.contains("disk"),
        "{message}"
    );
    assert_eq!(
        headers.get("x-request-id").map(|v| v.as_bytes()),
        Some(&b"corr-77"[..])
    );
}

#[actix_web::test]
async fn an_unreachable_database_is_503() {
    let mut mocks = Mocks::new();
    let mut merchants = MockMerchantDirectory::new();
    merchants
        .expect_merchant()
        .returning(|_| Err(StoreError::Unavailable("connection refused".into())));
    mocks.merchants = merchants;
    let app = default_service(mocks).await;
    let (status, _, body) = call(&app, post_deposit(BODY)).await;
    assert_eq!(status, 503);
    assert_error(&body, "ServiceUnavailable");
    assert!(!body.to_string().contains("refused"));
}

#[actix_web::test]
async fn reads_sign_the_path_and_hide_other_merchants_operations() {
    let mut mocks = Mocks::new();
    mocks.store.expect_get().returning(|_| {
        Ok(Some(
            withdrawal_builder(Status::Processing)
                .merchant("m-2")
                .build(),
        ))
    });
    let app = default_service(mocks).await;
    let path = format!("/api/v1/withdrawals/{}", op_id());
    let (status, _, body) = call(&app, get(&path, &withdrawal_sig(path.as_bytes()))).await;
    assert_eq!(status, 404);
    assert_error(&body, "NotFound");
    let (status, _, _) = call(&app, get(&path, &deposit_sig(path.as_bytes()))).await;
    assert_eq!(status, 401, "withdrawal reads use the withdrawal secret");
    let path = "/api/v1/withdrawals/not-a-uuid";
    let (status, _, _) = call(&app, get(path, &withdrawal_sig(path.as_bytes()))).await;
    assert_eq!(status, 404);
}

#[actix_web::test]
async fn look_ups_need_a_merchant_operation_id_and_sign_the_query() {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_find_by_merchant_operation_id()
        .returning(|_, _, _| Ok(Some((withdrawal(Status::Processing), None))));
    let app = default_service(mocks).await;
    let path = "/api/v1/withdrawals?merchantOperationId=order-1";
    let (status, _, body) = call(&app, get(path, &withdrawal_sig(path.as_bytes()))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["requisites"]["pan"], "424242******4242");
    let (status, _, _) = call(&app, get(path, &withdrawal_sig(b"/api/v1/withdrawals"))).await;
    assert_eq!(status, 401, "the query is part of what is signed");
    let path = "/api/v1/withdrawals";
    let (status, _, body) = call(&app, get(path, &withdrawal_sig(path.as_bytes()))).await;
    assert_eq!(status, 400);
    assert_eq!(body["details"][0]["field"], "merchantOperationId");
}

#[actix_web::test]
async fn the_balance_lists_every_currency() {
    let mut mocks = Mocks::new();
    mocks.store.expect_balances().returning(|_| {
        Ok(vec![Balance {
            currency: Currency::RUB,
            available: 10_000,
            held: 500,
        }])
    });
    let app = default_service(mocks).await;
    let path = "/api/v1/balance";
    let (status, _, body) = call(&app, get(path, &withdrawal_sig(path.as_bytes()))).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"data": {"balances": [{"currency": "RUB", "available": "100.00", "held": "5.00"}]}})
    );
}

#[actix_web::test]
async fn steps_map_wrong_codes_and_wrong_states() {
    let mut mocks = Mocks::new();
    mocks.store.expect_get().returning(|_| {
        Ok(Some(deposit(
            Status::Processing,
            Some(Action::Confirmation {
                channels: vec!["sms".into()],
                attempts_left: 3,
            }),
        )))
    });
    mocks
        .provider
        .expect_check_code()
        .returning(|_, _| Ok(false));
    mocks
        .store
        .expect_replace_action()
        .returning(|_, _, _, _| Ok(()));
    let app = default_service(mocks).await;
    let path = format!("/api/v1/deposits/{}/confirm", op_id());
    let body = r#"{"code": "000000"}"#;
    let (status, _, answer) = call(&app, post_v2(&path, body, DEPOSIT_SECRET)).await;
    assert_eq!(status, 422);
    assert_error(&answer, "InvalidCode");

    let path = format!("/api/v1/deposits/{}/input", op_id());
    let body = r#"{"fields": {"name": "x"}}"#;
    let (status, _, answer) = call(&app, post_v2(&path, body, DEPOSIT_SECRET)).await;
    assert_eq!(status, 409);
    assert_error(&answer, "InvalidState");

    let body = r#"{"fields": {"name": 1}}"#;
    let (status, _, answer) = call(&app, post_v2(&path, body, DEPOSIT_SECRET)).await;
    assert_eq!(status, 400);
    assert_eq!(answer["details"][0]["field"], "fields.name");
}
