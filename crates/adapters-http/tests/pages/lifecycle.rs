//! QR payments, finished, expired and unknown operations.

use domain::operation::DeclineCode;
use domain::Status;

use crate::helpers::{assert_see_other, decline_code, TestApp, Urls};

#[actix_web::test]
async fn sbp_qr_shows_its_code_and_the_bank_app_confirms() {
    let (app, op) = TestApp::with_deposit("sbp_qr", "300.00", Urls::SuccessAndFail).await;

    let pay = app.get(&format!("/pay/{}", op.id())).await;
    assert_eq!(pay.status, 200);
    assert!(pay.body.contains(r#"src="data:image/png;base64,"#));

    let bank_app = app.get(&format!("/sandbox/qr/{}", op.id())).await;
    assert_eq!(bank_app.status, 200);
    let decision = format!("/sandbox/qr/{}/decision", op.id());
    assert!(bank_app.body.contains(&format!(r#"action="{decision}""#)));

    let answer = app.post_form(&decision, &[("approve", "true")]).await;

    let result = format!("/pay/{}/result", op.id());
    assert_see_other(&answer, &result);
    assert_eq!(app.operation(op.id()).await.status(), Status::Approved);
    assert_eq!(app.balance().await, (30_000, 0));
    assert!(app.get(&result).await.body.contains("Payment successful"));
    let again = app.get(&format!("/sandbox/qr/{}", op.id())).await;
    assert!(again.body.contains("already finished"), "{}", again.body);
}

#[actix_web::test]
async fn sbp_qr_reject_declines_as_payment_rejected() {
    let (app, op) = TestApp::with_deposit("sbp_qr", "300.00", Urls::None).await;

    app.post_form(
        &format!("/sandbox/qr/{}/decision", op.id()),
        &[("approve", "false")],
    )
    .await;

    let stored = app.operation(op.id()).await;
    assert_eq!(decline_code(&stored), Some(DeclineCode::PaymentRejected));
}

#[actix_web::test]
async fn the_bank_app_serves_sbp_qr_deposits_only() {
    let (app, op) = TestApp::with_deposit("bank_a_pay", "1.00", Urls::None).await;

    assert_eq!(
        app.get(&format!("/sandbox/qr/{}", op.id())).await.status,
        404
    );
    let answer = app
        .post_form(
            &format!("/sandbox/qr/{}/decision", op.id()),
            &[("approve", "true")],
        )
        .await;
    assert_eq!(answer.status, 404);
    assert_eq!(app.operation(op.id()).await, op);
}

#[actix_web::test]
async fn a_finished_operation_says_so_and_changes_nothing() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::SuccessAndFail).await;
    app.pay(op.id(), "4242424242424242").await;
    let paid = app.operation(op.id()).await;

    let page = app.get(&format!("/pay/{}", op.id())).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Payment successful"));
    assert!(page.body.contains("already finished"));
    assert!(!page.body.contains(r#"name="pan""#));

    let again = app.pay(op.id(), "4000000000000002").await;
    assert_eq!(again.status, 409);
    assert!(again.location().is_none(), "no second redirect");
    assert!(again.body.contains("already finished"));
    let decided = app.decide(op.id(), "false").await;
    assert_eq!(decided.status, 409);
    assert_eq!(app.operation(op.id()).await, paid, "nothing changed");
    assert_eq!(app.balance().await, (10_000, 0));
}

#[actix_web::test]
async fn an_expired_operation_page_says_expired() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::SuccessAndFail).await;
    app.clock.advance(601);

    let page = app.get(&format!("/pay/{}", op.id())).await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("Time to pay has run out"),
        "{}",
        page.body
    );
    assert!(!page.body.contains(r#"name="pan""#));
    assert_eq!(
        app.operation(op.id()).await,
        op,
        "a page view changes nothing"
    );

    let paid = app.pay(op.id(), "4242424242424242").await;
    assert_eq!(paid.status, 409);
    assert!(paid.body.contains("Time to pay has run out"));
    let stored = app.operation(op.id()).await;
    assert_eq!(decline_code(&stored), Some(DeclineCode::Expired));
    assert_eq!(app.balance().await, (0, 0));
}

#[actix_web::test]
async fn unknown_operations_are_html_404_pages() {
    let app = TestApp::new().await;
    for path in [
        "/pay/6f1c2a4e-1d2b-4c5d-8e9f-001122334455".to_string(),
        "/pay/not-a-uuid".to_string(),
        "/pay/6f1c2a4e-1d2b-4c5d-8e9f-001122334455/result".to_string(),
        "/sandbox/qr/6f1c2a4e-1d2b-4c5d-8e9f-001122334455".to_string(),
    ] {
        let page = app.get_in(&path, "ru").await;
        assert_eq!(page.status, 404, "{path}");
        assert!(page.is_html());
        assert!(page.body.contains("Платёж не найден"));
    }
}

#[actix_web::test]
async fn payouts_have_no_pages() {
    let app = TestApp::new().await;
    let payout = app.payout("10.00").await;

    assert_eq!(app.get(&format!("/pay/{}", payout.id())).await.status, 404);
}

#[actix_web::test]
async fn a_wrong_method_on_a_page_is_an_html_405() {
    let (app, op) = TestApp::with_deposit("card", "1.00", Urls::None).await;

    let answer = app.get(&format!("/pay/{}/card", op.id())).await;

    assert_eq!(answer.status, 405);
    assert!(answer.is_html());
    let allow = answer.headers.get("allow").and_then(|v| v.to_str().ok());
    assert_eq!(
        allow,
        Some("POST"),
        "RFC 9110: a 405 names the allowed methods"
    );
}

#[actix_web::test]
async fn the_result_of_a_waiting_payment_goes_back_to_its_page() {
    let (app, op) = TestApp::with_deposit("card", "1.00", Urls::None).await;

    let answer = app.get(&format!("/pay/{}/result", op.id())).await;

    assert_eq!(answer.status, 303);
    let pay = format!("/pay/{}", op.id());
    assert_eq!(answer.location(), Some(pay.as_str()));
}
