use domain::operation::DeclineCode;
use domain::Status;

use crate::helpers::{assert_see_other, decline_code, TestApp, Urls, FAIL_URL, SUCCESS_URL};

#[actix_web::test]
async fn sbp_lists_banks_then_the_bank_page_confirms() {
    let (app, op) = TestApp::with_deposit("sbp", "250.00", Urls::SuccessAndFail).await;

    let list = app.get(&format!("/pay/{}", op.id())).await;
    assert_eq!(list.status, 200);
    for (id, name) in adapters_sandbox::sbp_banks() {
        assert!(list.body.contains(&format!(r#"value="{id}""#)), "{id}");
        assert!(list.body.contains(name), "{name}");
    }

    let bank = app.get(&format!("/pay/{}/sbp?bank=bank_a", op.id())).await;
    assert_eq!(bank.status, 200);
    assert!(bank.body.contains("Bank A"));
    assert!(bank
        .body
        .contains(&format!(r#"action="/pay/{}/decision""#, op.id())));
    assert_eq!(
        app.operation(op.id()).await,
        op,
        "picking a bank changes nothing"
    );

    let answer = app.decide(op.id(), "true").await;

    assert_see_other(&answer, SUCCESS_URL);
    assert_eq!(app.operation(op.id()).await.status(), Status::Approved);
    app.assert_balance_and_callback(op.id(), (25_000, 0)).await;
}

#[actix_web::test]
async fn the_bank_can_also_be_posted_and_an_unknown_one_is_refused() {
    let (app, op) = TestApp::with_deposit("sbp", "250.00", Urls::None).await;

    let posted = app
        .post_form(&format!("/pay/{}/sbp", op.id()), &[("bank", "bank_c")])
        .await;
    assert_eq!(posted.status, 200);
    assert!(posted.body.contains("Bank C"));

    let unknown = app.get(&format!("/pay/{}/sbp?bank=nope", op.id())).await;
    assert_eq!(unknown.status, 422);
    assert!(unknown.body.contains("Choose a bank from the list."));
    assert_eq!(app.operation(op.id()).await, op);
}

#[actix_web::test]
async fn bank_b_pay_reject_declines_as_payment_rejected() {
    let (app, op) = TestApp::with_deposit("bank_b_pay", "100.00", Urls::SuccessAndFail).await;

    let page = app.get(&format!("/pay/{}", op.id())).await;
    assert!(page.body.contains("Bank B Pay"));
    assert!(page.body.contains(r#"value="false""#));

    let answer = app.decide(op.id(), "false").await;

    assert_see_other(&answer, FAIL_URL);
    let stored = app.operation(op.id()).await;
    assert_eq!(stored.status(), Status::Declined);
    assert_eq!(decline_code(&stored), Some(DeclineCode::PaymentRejected));
    assert_eq!(app.balance().await, (0, 0));
}

#[actix_web::test]
async fn bank_a_and_c_pay_confirm_without_merchant_urls_show_the_result_page() {
    let app = TestApp::new().await;
    for method in ["bank_a_pay", "bank_c_pay"] {
        let op = app.deposit(method, "1.00", Urls::None).await;

        let answer = app.decide(op.id(), "true").await;

        let result = format!("/pay/{}/result", op.id());
        assert_eq!(answer.location(), Some(result.as_str()), "{method}");
        assert_eq!(app.operation(op.id()).await.status(), Status::Approved);
        assert!(app.get(&result).await.body.contains("Payment successful"));
    }
}

#[actix_web::test]
async fn a_decision_that_is_neither_true_nor_false_changes_nothing() {
    let (app, op) = TestApp::with_deposit("bank_a_pay", "1.00", Urls::None).await;

    for form in [&[("approve", "yes")][..], &[][..]] {
        let answer = app
            .post_form(&format!("/pay/{}/decision", op.id()), form)
            .await;
        assert_eq!(answer.status, 400);
        assert!(answer.is_html());
    }
    assert_eq!(app.operation(op.id()).await, op);
}

#[actix_web::test]
async fn a_card_deposit_takes_no_bank_decision() {
    let (app, op) = TestApp::with_deposit("card", "1.00", Urls::None).await;

    let answer = app.decide(op.id(), "true").await;

    assert_eq!(answer.status, 409);
    assert!(answer.location().is_none());
    assert_eq!(app.operation(op.id()).await, op);
}
