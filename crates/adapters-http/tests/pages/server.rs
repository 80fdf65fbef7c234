//! The pages behind the API's real server and its edge middleware, over TCP.

use crate::helpers::{card_fields, complete_path, serve, TestApp, Urls, SUCCESS_URL};

/// Sends `request`; fails the test if nothing answers.
async fn send(request: reqwest::RequestBuilder) -> reqwest::Response {
    request.send().await.expect("answer")
}

/// The body of `response` as JSON.
async fn json(response: reqwest::Response) -> serde_json::Value {
    serde_json::from_str(&response.text().await.unwrap_or_default()).expect("JSON")
}

/// The `name` header of `response`, if it is text.
fn header<'a>(response: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
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
    let base = serve(&app);
    let client = client();
    let op = app.deposit("card", "100.00", Urls::SuccessAndFail).await;

    let page = send(client.get(format!("{base}/pay/{}", op.id()))).await;
    assert_eq!(page.status(), 200);
    assert!(page.headers().contains_key("x-request-id"));
    assert!(page
        .text()
        .await
        .unwrap_or_default()
        .contains(r#"name="pan""#));

    let missing =
        send(client.get(format!("{base}/pay/6f1c2a4e-1d2b-4c5d-8e9f-001122334455"))).await;
    assert_eq!(missing.status(), 404);
    let html = missing.text().await.unwrap_or_default();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");

    let wrong = send(client.delete(format!("{base}/pay/{}", op.id()))).await;
    assert_eq!(wrong.status(), 405);
    assert_eq!(header(&wrong, "allow"), Some("GET"));

    let complete = format!("{base}{}", complete_path(op.id()));
    let bad = send(
        client
            .post(&complete)
            .header("content-type", "application/json")
            .body(r#"{"status": 9}"#),
    )
    .await;
    assert_eq!(bad.status(), 400);
    assert_eq!(json(bad).await["errorCode"], "InvalidRequest");

    let expiry = app.future_expiry();
    let form = card_fields("4242424242424242", &expiry, "123");
    let paid = send(
        client
            .post(format!("{base}/pay/{}/card", op.id()))
            .form(&form),
    )
    .await;
    assert_eq!(paid.status(), 303);
    assert_eq!(header(&paid, "location"), Some(SUCCESS_URL));

    let wrong_method = send(client.get(&complete)).await;
    assert_eq!(wrong_method.status(), 405);
    assert_eq!(header(&wrong_method, "allow"), Some("POST"));
    assert_eq!(json(wrong_method).await["errorCode"], "MethodNotAllowed");
}

#[actix_web::test]
async fn an_unreadable_form_is_refused_before_its_id_is_looked_at() {
    let app = TestApp::new().await;
    let base = serve(&app);
    let client = client();
    let form = |path: &str, content_type: &str| {
        client
            .post(format!("{base}/pay/{path}"))
            .header("content-type", content_type)
            .body("pan=1&expiry=1&cvc=1&approve=true")
    };

    for path in ["not-an-id/card", "not-an-id/decision"] {
        let unreadable = send(form(path, "text/plain")).await;
        assert_eq!(unreadable.status(), 400, "{path}");
        let readable = send(form(path, "application/x-www-form-urlencoded")).await;
        assert_eq!(readable.status(), 404, "{path}");
    }
}
