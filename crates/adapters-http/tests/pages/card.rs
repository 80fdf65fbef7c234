use actix_web::http::header;
use domain::operation::DeclineCode;
use domain::Status;

use crate::helpers::{
    assert_see_other, card_fields, decline_code, TestApp, Urls, FAIL_URL, SUCCESS_URL,
};

#[actix_web::test]
async fn the_card_page_is_a_form_readable_on_a_phone() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::SuccessAndFail).await;

    let page = app.get(&format!("/pay/{}", op.id())).await;

    assert_eq!(page.status, 200);
    assert!(page.is_html(), "{page:?}");
    assert!(page
        .body
        .contains(&format!(r#"action="/pay/{}/card""#, op.id())));
    assert!(page.body.contains(r#"name="viewport""#));
    assert!(page.body.contains("100.00 RUB"));
    assert!(!page.body.contains("<script"));
    assert_eq!(page.header(header::CACHE_CONTROL), "no-store");
    assert_eq!(page.header(header::REFERRER_POLICY), "no-referrer");
}

#[actix_web::test]
async fn the_card_page_speaks_russian_when_asked() {
    let (app, op) = TestApp::with_deposit("card", "1234.50", Urls::None).await;

    let page = app
        .get_in(&format!("/pay/{}", op.id()), "en;q=0.5, ru-RU;q=0.9")
        .await;

    assert!(page.body.contains(r#"<html lang="ru">"#));
    assert!(page.body.contains("Оплата картой"));
    assert!(page.body.contains("1234,50 RUB"));
    assert_eq!(page.header(header::CONTENT_LANGUAGE), "ru");
}

/// Pays a 100.00 card deposit that has merchant URLs with `pan`: the browser is sent to
/// `location`, the deposit ends `status` (declined with `decline`, where given), the balance is
/// `balance` and a callback is queued.
async fn pay_with_merchant_urls(
    pan: &str,
    location: &str,
    status: Status,
    decline: Option<DeclineCode>,
    balance: (i64, i64),
) {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::SuccessAndFail).await;

    let answer = app.pay(op.id(), pan).await;

    assert_see_other(&answer, location);
    let stored = app.operation(op.id()).await;
    assert_eq!(stored.status(), status);
    if decline.is_some() {
        assert_eq!(decline_code(&stored), decline);
    }
    app.assert_balance_and_callback(op.id(), balance).await;
}

#[actix_web::test]
async fn test_card_4242_approves_and_goes_to_success_url() {
    let pan = "4242 4242 4242 4242";
    pay_with_merchant_urls(pan, SUCCESS_URL, Status::Approved, None, (10_000, 0)).await;
}

#[actix_web::test]
async fn test_card_0002_is_declined_and_goes_to_fail_url() {
    let (pan, declined) = ("4000000000000002", Some(DeclineCode::CardDeclined));
    pay_with_merchant_urls(pan, FAIL_URL, Status::Declined, declined, (0, 0)).await;
}

#[actix_web::test]
async fn test_card_9995_is_declined_for_insufficient_funds() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::None).await;

    let answer = app.pay(op.id(), "4000000000009995").await;

    assert_eq!(answer.status, 303);
    let result = format!("/pay/{}/result", op.id());
    assert_eq!(answer.location(), Some(result.as_str()));
    let stored = app.operation(op.id()).await;
    assert_eq!(decline_code(&stored), Some(DeclineCode::InsufficientFunds));
    let page = app.get(&result).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Payment declined"), "{}", page.body);
    assert!(page.body.contains("The card has insufficient funds."));
}

#[actix_web::test]
async fn any_other_valid_card_approves_and_shows_the_result_page() {
    let (app, op) = TestApp::with_deposit("card", "10.00", Urls::None).await;

    let answer = app.pay(op.id(), "5555555555554444").await;

    let result = format!("/pay/{}/result", op.id());
    assert_eq!(answer.location(), Some(result.as_str()));
    let page = app.get_in(&result, "ru").await;
    assert!(page.body.contains("Оплата прошла успешно"), "{}", page.body);
    assert!(!page.body.contains("уже завершён"));
}

#[actix_web::test]
async fn a_bad_card_shows_the_form_again_and_changes_nothing() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::SuccessAndFail).await;

    let answer = app
        .post_card(op.id(), "4242424242424241", "13/30", "12")
        .await;

    assert_eq!(answer.status, 422);
    assert!(answer.is_html());
    assert!(answer.body.contains("Enter a valid card number."));
    assert!(answer.body.contains("Enter a future expiry date as MM/YY."));
    assert!(answer.body.contains("Enter the 3 or 4 digit code"));
    assert!(answer.body.contains(r#"name="pan""#), "the form again");
    assert!(!answer.body.contains("4242424242424241"), "never echoed");
    assert_eq!(app.operation(op.id()).await, op, "nothing changed");
    assert!(!app.callback_queued(op.id()).await);
}

#[actix_web::test]
async fn a_past_expiry_alone_is_refused_in_russian() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::None).await;

    let form = card_fields("4242424242424242", "01/20", "123");
    let answer = app
        .post_form_in(&format!("/pay/{}/card", op.id()), &form, "ru")
        .await;

    assert_eq!(answer.status, 422);
    assert!(answer.body.contains("ММ/ГГ (не в прошлом)"));
    assert!(!answer.body.contains("Введите правильный номер карты"));
    assert!(answer.body.contains(r#"value="01/20""#));
    assert_eq!(app.operation(op.id()).await.status(), Status::Processing);
}

#[actix_web::test]
async fn a_form_that_is_not_urlencoded_is_an_html_400() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::None).await;

    let answer = app
        .post_raw(
            &format!("/pay/{}/card", op.id()),
            "application/json",
            r#"{"pan": "4242424242424242"}"#,
        )
        .await;

    assert_eq!(answer.status, 400);
    assert!(answer.is_html(), "{answer:?}");
    assert_eq!(app.operation(op.id()).await, op);
}
