//! Issue 5 through the hosted pages of the real binary: the `redirectUrl` a deposit answers
//! points at this gateway's actual port, the card form there finishes the deposit, and the
//! merchant gets the callback.

use std::time::Duration;

use crate::helpers::{deposit, Api, CallbackReceiver, GatewayProcess, Merchant, Serve, TestDb};

/// Opens a deposit's `redirectUrl` and pays with `pan`; returns where the browser is sent.
async fn pay_by_card(client: &reqwest::Client, redirect_url: &str, pan: &str) -> String {
    let page = client.get(redirect_url).send().await.expect("the page");
    assert_eq!(page.status().as_u16(), 200);
    let html = page.text().await.expect("HTML");
    assert!(html.contains("name=\"pan\""), "a card form: {html}");
    let answer = client
        .post(format!("{redirect_url}/card"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("pan={pan}&expiry=12%2F39&cvc=123"))
        .send()
        .await
        .expect("the form answers");
    assert!(
        answer.status().is_redirection(),
        "the browser is sent on: {}",
        answer.status()
    );
    answer
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deposit_paid_on_the_hosted_card_page_sends_its_callback() {
    let db = TestDb::sqlite();
    let shop = Merchant::create(&db, "page-shop");
    let receiver = CallbackReceiver::start();
    let mut gw = GatewayProcess::start("a", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let browser = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("an HTTP client");
    let mut ids = Vec::new();
    for (pan, outcome) in [("4242424242424242", "ok"), ("4000000000000002", "no")] {
        let mut body = deposit(
            "card",
            "25.00",
            &format!("page-{outcome}"),
            Some(&receiver.url("/cb")),
        );
        body["successUrl"] = "https://shop.example/ok".into();
        body["failUrl"] = "https://shop.example/no".into();
        let answer = api.create_deposit(&body).await;
        let id = answer.operation_id();
        let redirect = answer.body["data"]["redirectUrl"]
            .as_str()
            .expect("a redirectUrl")
            .to_string();
        assert_eq!(redirect, gw.url(&format!("/pay/{id}")), "the real port");
        let next = pay_by_card(&browser, &redirect, pan).await;
        assert_eq!(next, format!("https://shop.example/{outcome}"));
        ids.push(id);
    }
    receiver.wait_delivered(&ids, Duration::from_secs(60)).await;
    let approved = receiver.for_operation(&ids[0]);
    assert_eq!(approved.len(), 1);
    assert_eq!(approved[0].json()["data"]["status"], 1);
    let declined = receiver.for_operation(&ids[1]);
    assert_eq!(declined.len(), 1);
    assert_eq!(declined[0].json()["data"]["status"], 2);
    assert_eq!(declined[0].json()["data"]["errorCode"], "CardDeclined");
    for c in receiver.captured() {
        crate::helpers::assert_signed_callback(&c, &shop);
    }
    gw.terminate();
}
