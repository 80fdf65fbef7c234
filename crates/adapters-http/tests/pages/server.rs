//! The pages behind the API's real server and its edge middleware, over TCP.

use std::net::TcpListener;
use std::sync::Arc;

use adapters_http::{AlwaysReady, HttpSettings, HttpState};

use crate::helpers::{TestApp, Urls, SUCCESS_URL};

async fn serve(app: &TestApp) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = listener.local_addr().expect("bound").port();
    let state = HttpState::new(
        app.gateway.clone(),
        Arc::new(AlwaysReady),
        HttpSettings::default(),
    );
    let pages = adapters_http::pages::mount(app.checkout.clone(), app.gateway.clone());
    let server = adapters_http::server(listener, state, pages).expect("server");
    actix_web::rt::spawn(server);
    format!("http://127.0.0.1:{port}")
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

#[actix_web::test]
async fn pages_keep_their_html_through_the_edge_and_the_sandbox_answers_json() {
    let app = TestApp::new().await;
    let base = serve(&app).await;
    let client = client();
    let op = app.deposit("card", "100.00", Urls::SuccessAndFail).await;

    let page = client
        .get(format!("{base}/pay/{}", op.id()))
        .send()
        .await
        .expect("answer");
    assert_eq!(page.status(), 200);
    assert!(page.headers().contains_key("x-request-id"));
    assert!(page
        .text()
        .await
        .unwrap_or_default()
        .contains(r#"name="pan""#));

    let missing = client
        .get(format!("{base}/pay/6f1c2a4e-1d2b-4c5d-8e9f-001122334455"))
        .send()
        .await
        .expect("answer");
    assert_eq!(missing.status(), 404);
    let html = missing.text().await.unwrap_or_default();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");

    let wrong = client
        .delete(format!("{base}/pay/{}", op.id()))
        .send()
        .await
        .expect("answer");
    assert_eq!(wrong.status(), 405);
    assert_eq!(
        wrong.headers().get("allow").and_then(|v| v.to_str().ok()),
        Some("GET")
    );

    let bad = client
        .post(format!("{base}/sandbox/operations/{}/complete", op.id()))
        .header("content-type", "application/json")
        .body(r#"{"status": 9}"#)
        .send()
        .await
        .expect("answer");
    assert_eq!(bad.status(), 400);
    let body: serde_json::Value =
        serde_json::from_str(&bad.text().await.unwrap_or_default()).expect("JSON");
    assert_eq!(body["errorCode"], "InvalidRequest");

    let expiry = app.future_expiry();
    let paid = client
        .post(format!("{base}/pay/{}/card", op.id()))
        .form(&[
            ("pan", "4242424242424242"),
            ("expiry", &expiry),
            ("cvc", "123"),
        ])
        .send()
        .await
        .expect("answer");
    assert_eq!(paid.status(), 303);
    assert_eq!(
        paid.headers().get("location").and_then(|v| v.to_str().ok()),
        Some(SUCCESS_URL)
    );

    let wrong_method = client
        .get(format!("{base}/sandbox/operations/{}/complete", op.id()))
        .send()
        .await
        .expect("answer");
    assert_eq!(wrong_method.status(), 405);
    let allow = wrong_method
        .headers()
        .get("allow")
        .and_then(|v| v.to_str().ok());
    assert_eq!(allow, Some("POST"));
    let body: serde_json::Value =
        serde_json::from_str(&wrong_method.text().await.unwrap_or_default()).expect("JSON");
    assert_eq!(body["errorCode"], "MethodNotAllowed");
}
