//! `POST /sandbox/operations/{id}/complete`.

use domain::operation::DeclineCode;
use domain::Status;

use crate::helpers::{complete_path, decline_code, TestApp, Urls};

#[actix_web::test]
async fn status_1_approves_a_waiting_deposit() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::None).await;

    let answer = app.complete(op.id(), r#"{"status": 1}"#).await;

    assert_eq!(answer.status, 200, "{}", answer.body);
    let body = answer.json();
    assert_eq!(body["data"]["operationId"], op.id().to_string());
    assert_eq!(body["data"]["status"], 1);
    assert_eq!(body["data"]["amount"], "100.00");
    assert_eq!(body["data"]["currency"], "RUB");
    assert!(body["data"].get("errorCode").is_none());
    app.assert_balance_and_callback(op.id(), (10_000, 0)).await;
}

#[actix_web::test]
async fn status_2_declines_as_provider_declined() {
    let (app, op) = TestApp::with_deposit("sbp_qr", "100.00", Urls::None).await;

    let answer = app.complete(op.id(), r#"{"status": 2}"#).await;

    assert_eq!(answer.status, 200);
    let body = answer.json();
    assert_eq!(body["data"]["status"], 2);
    assert_eq!(body["data"]["errorCode"], "ProviderDeclined");
    assert!(body["data"]["errorMessage"].is_string());
    let stored = app.operation(op.id()).await;
    assert_eq!(decline_code(&stored), Some(DeclineCode::ProviderDeclined));
}

#[actix_web::test]
async fn payouts_still_processing_can_be_completed() {
    let app = TestApp::new().await;
    let payout = app.payout("40.00").await;
    assert_eq!(app.balance().await, (0, 4_000));

    let answer = app.complete(payout.id(), r#"{"status":2}"#).await;

    assert_eq!(answer.status, 200);
    assert_eq!(app.operation(payout.id()).await.status(), Status::Declined);
    assert_eq!(app.balance().await, (4_000, 0), "the hold is released");
}

#[actix_web::test]
async fn an_operation_already_final_is_409_invalid_state() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::None).await;
    app.complete(op.id(), r#"{"status": 1}"#).await;
    let done = app.operation(op.id()).await;

    let answer = app.complete(op.id(), r#"{"status": 2}"#).await;

    assert_eq!(answer.status, 409);
    let body = answer.json();
    assert_eq!(body["errorCode"], "InvalidState");
    assert!(body["errorMessage"].is_string());
    assert_eq!(body.as_object().map(|o| o.len()), Some(2));
    assert_eq!(app.operation(op.id()).await, done);
}

#[actix_web::test]
async fn an_unknown_id_is_404_not_found() {
    let app = TestApp::new().await;
    for id in ["6f1c2a4e-1d2b-4c5d-8e9f-001122334455", "nope"] {
        let answer = app.complete(id, r#"{"status": 1}"#).await;
        assert_eq!(answer.status, 404, "{id}");
        assert_eq!(answer.json()["errorCode"], "NotFound");
    }
}

#[actix_web::test]
async fn any_other_status_or_body_is_400_invalid_request() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::None).await;
    for body in [
        r#"{"status": 3}"#,
        r#"{"status": 0}"#,
        r#"{"status": "1"}"#,
        r#"{"status": null}"#,
        r#"{}"#,
        r#"{"status": 1, "status": 1}"#,
        r#"{"status": 1,"#,
        "[1]",
        "",
    ] {
        let answer = app.complete(op.id(), body).await;
        assert_eq!(answer.status, 400, "{body}");
        assert_eq!(answer.json()["errorCode"], "InvalidRequest", "{body}");
    }
    assert_eq!(app.operation(op.id()).await, op, "nothing changed");
}

#[actix_web::test]
async fn a_field_error_lists_the_status_field() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::None).await;

    let answer = app.complete(op.id(), r#"{"status": 7}"#).await;

    let body = answer.json();
    assert_eq!(body["details"][0]["field"], "status");
}

#[actix_web::test]
async fn a_body_that_is_not_json_is_415() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::None).await;

    let answer = app
        .post_raw(&complete_path(op.id()), "text/plain", r#"{"status": 1}"#)
        .await;

    assert_eq!(answer.status, 415);
    assert_eq!(answer.json()["errorCode"], "UnsupportedMediaType");
    assert_eq!(app.operation(op.id()).await, op);
}
