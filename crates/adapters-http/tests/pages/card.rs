use actix_web::http::header;
use domain::operation::DeclineCode;
use domain::Status;

use crate::helpers::{assert_see_other, decline_code, TestApp, Urls, FAIL_URL, SUCCESS_URL};

#[actix_web::test]
async fn the_card_page_is_a_form_readable_on_a_phone() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::SuccessAndFail).await;

    let page = app.get(&format!("/pay/{}", op.id)).await;

    assert_eq!(page.status, 200);
    assert!(page.is_html(), "{page:?}");
    assert!(page
        .body
        .contains(&format!(r#"action="/pay/{}/card""#, op.id)));
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
        .get_in(&format!("/pay/{}", op.id), "en;q=0.5, ru-RU;q=0.9")
        .await;

    assert!(page.body.contains(r#"<html lang="ru">"#));
    assert!(page.body.contains("Оплата картой"));
    assert!(page.body.contains("1234,50 RUB"));
    assert_eq!(page.header(header::CONTENT_LANGUAGE), "ru");
}

#[actix_web::test]
async fn test_card_4242_approves_and_goes_to_success_url() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::SuccessAndFail).await;

    let answer = app.pay(op.id, "4242 4242 4242 4242").await;

    assert_see_other(&answer, SUCCESS_URL);
    let stored = app.operation(op.id).await;
    assert_eq!(stored.status, Status::Approved);
    app.assert_balance_and_callback(op.id, (10_000, 0)).await;
}

#[actix_web::test]
async fn test_card_0002_is_declined_and_goes_to_fail_url() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::SuccessAndFail).await;

    let answer = app.pay(op.id, "4000000000000002").await;

    assert_see_other(&answer, FAIL_URL);
    let stored = app.operation(op.id).await;
    assert_eq!(stored.status, Status::Declined);
    assert_eq!(decline_code(&stored), Some(DeclineCode::CardDeclined));
    app.assert_balance_and_callback(op.id, (0, 0)).await;
}

#[actix_web::test]
async fn test_card_9995_is_declined_for_insufficient_funds() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::None).await;

    let answer = app.pay(op.id, "4000000000009995").await;

    assert_eq!(answer.status, 303);
    let result = format!("/pay/{}/result", op.id);
    assert_eq!(answer.location(), Some(result.as_str()));
    let stored = app.operation(op.id).await;
    assert_eq!(decline_code(&stored), Some(DeclineCode::InsufficientFunds));
    let page = app.get(&result).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Payment declined"), "{}", page.body);
    assert!(page.body.contains("The card has insufficient funds."));
}

#[actix_web::test]
async fn any_other_valid_card_approves_and_shows_the_result_page() {
    let (app, op) = TestApp::with_deposit("card", "10.00", Urls::None).await;

    let answer = app.pay(op.id, "5555555555554444").await;

    let result = format!("/pay/{}/result", op.id);
    assert_eq!(answer.location(), Some(result.as_str()));
    let page = app.get_in(&result, "ru").await;
    assert!(page.body.contains("Оплата прошла успешно"), "{}", page.body);
    assert!(!page.body.contains("уже завершён"));
}

#[actix_web::test]
async fn a_bad_card_shows_the_form_again_and_changes_nothing() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::SuccessAndFail).await;

    let answer = app
        .post_form(
            &format!("/pay/{}/card", op.id),
            &[
                ("pan", "4242424242424241"),
                ("expiry", "13/30"),
                ("cvc", "12"),
            ],
        )
        .await;

    assert_eq!(answer.status, 422);
    assert!(answer.is_html());
    assert!(answer.body.contains("Enter a valid card number."));
    assert!(answer.body.contains("Enter a future expiry date as MM/YY."));
    assert!(answer.body.contains("Enter the 3 or 4 digit code"));
    assert!(answer.body.contains(r#"name="pan""#), "the form again");
    assert!(!answer.body.contains("4242424242424241"), "never echoed");
    assert_eq!(app.operation(op.id).await, op, "nothing changed");
    assert!(!app.callback_queued(op.id).await);
}

#[actix_web::test]
async fn a_past_expiry_alone_is_refused_in_russian() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::None).await;

    let answer = app
        .post_form_in(
            &format!("/pay/{}/card", op.id),
            &[
                ("pan", "4242424242424242"),
                ("expiry", "01/20"),
                ("cvc", "123"),
            ],
            "ru",
        )
        .await;

    assert_eq!(answer.status, 422);
    assert!(answer.body.contains("ММ/ГГ (не в прошлом)"));
    assert!(!answer.body.contains("Введите правильный номер карты"));
    assert!(answer.body.contains(r#"value="01/20""#));
    assert_eq!(app.operation(op.id).await.status, Status::Processing);
}

#[actix_web::test]
async fn a_form_that_is_not_urlencoded_is_an_html_400() {
    let (app, op) = TestApp::with_deposit("card", "100.00", Urls::None).await;

    let answer = app
        .post_raw(
            &format!("/pay/{}/card", op.id),
            "application/json",
            r#"{"pan": "4242424242424242"}"#,
        )
        .await;

    assert_eq!(answer.status, 400);
    assert!(answer.is_html(), "{answer:?}");
    assert_eq!(app.operation(op.id).await, op);
}
