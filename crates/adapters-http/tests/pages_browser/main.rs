//! The card page in a real browser: headless Chromium driven over WebDriver (chromedriver),
//! with a phone-sized window, no JavaScript of ours, and a merchant site to land on.
//!
//! Needs `chromedriver` and `chromium` on the PATH (Debian: `chromium chromium-driver`).
//! Without them the test says so and passes, unless `GATEWAY_REQUIRE_BROWSER=1`.
//! With `GATEWAY_SCREENSHOT_DIR=DIR` it saves the card page as `DIR/card-page.png`.

#[path = "../pages/helpers.rs"]
#[allow(dead_code)]
mod helpers;

use std::net::TcpListener;
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use domain::operation::DeclineCode;
use domain::Status;
use fantoccini::{Client, Locator};
use helpers::{decline_code, serve, TestApp};
use testkit::browser::{screenshot_dir, Driver};

/// The merchant's site: `/success` and `/fail` pages to land on.
fn merchant() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = listener.local_addr().expect("bound").port();
    let server = HttpServer::new(|| {
        App::new()
            .route(
                "/success",
                web::get().to(|| async { HttpResponse::Ok().body("merchant: paid") }),
            )
            .route(
                "/fail",
                web::get().to(|| async { HttpResponse::Ok().body("merchant: failed") }),
            )
    })
    .workers(1)
    .listen(listener)
    .expect("listen")
    .run();
    actix_web::rt::spawn(server);
    format!("http://127.0.0.1:{port}")
}

/// Types a card on the page and submits it, as a person would.
async fn pay(client: &Client, page: &str, pan: &str, expiry: &str) {
    client.goto(page).await.expect("the card page");
    let form = [("pan", pan), ("expiry", expiry), ("cvc", "123")];
    for (name, value) in form {
        client
            .find(Locator::Css(&format!("input[name={name}]")))
            .await
            .expect("a card field")
            .send_keys(value)
            .await
            .expect("typed");
    }
    client
        .find(Locator::Css("button[type=submit]"))
        .await
        .expect("the pay button")
        .click()
        .await
        .expect("clicked");
}

async fn lands_on(client: &Client, url: &str) {
    let target = url::Url::parse(url).expect("URL");
    client
        .wait()
        .at_most(Duration::from_secs(10))
        .for_url(&target)
        .await
        .unwrap_or_else(|e| panic!("did not land on {url}: {e}"));
}

#[actix_web::test]
async fn a_person_pays_by_card_in_chromium_and_lands_on_the_merchant_site() {
    let Some(driver) = Driver::start_or_skip("the card page's browser test") else {
        return;
    };
    let app = TestApp::new().await;
    let shop = merchant();
    let base = serve(&app);
    let client = driver.browser(390, 844).await;
    let (success, fail) = (format!("{shop}/success"), format!("{shop}/fail"));
    let expiry = app.future_expiry();

    let approved = app
        .deposit_to("card", "100.00", Some(&success), Some(&fail))
        .await;
    let page = format!("{base}/pay/{}", approved.id());
    client.goto(&page).await.expect("the card page");
    let html = client.source().await.expect("the page source");
    assert!(html.contains("Pay by card"), "{html}");
    if let Some(dir) = screenshot_dir() {
        let png = client.screenshot().await.expect("a screenshot");
        std::fs::write(dir.join("card-page.png"), png).expect("saved");
    }
    pay(&client, &page, "4242 4242 4242 4242", &expiry).await;
    lands_on(&client, &success).await;
    assert_eq!(
        app.operation(approved.id()).await.status(),
        Status::Approved
    );

    let declined = app
        .deposit_to("card", "100.00", Some(&success), Some(&fail))
        .await;
    let page = format!("{base}/pay/{}", declined.id());
    pay(&client, &page, "4000000000000002", &expiry).await;
    lands_on(&client, &fail).await;
    let stored = app.operation(declined.id()).await;
    assert_eq!(stored.status(), Status::Declined);
    assert_eq!(decline_code(&stored), Some(DeclineCode::CardDeclined));

    let refused = app.deposit_to("card", "100.00", None, None).await;
    let page = format!("{base}/pay/{}", refused.id());
    pay(&client, &page, "4242424242424241", &expiry).await;
    let refusal = client
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("p.field-error"))
        .await
        .expect("the form again, with the error");
    let text = refusal.text().await.expect("the error text");
    assert_eq!(text, "Enter a valid card number.");
    assert_eq!(
        app.operation(refused.id()).await.status(),
        Status::Processing
    );

    client.close().await.expect("closed");
}
