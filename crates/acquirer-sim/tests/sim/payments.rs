use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

const NOWHERE: &str = "http://127.0.0.1:9/notify";

fn card(pan: &str) -> serde_json::Value {
    json!({"pan": pan, "name": "IVAN IVANOV"})
}

fn phone(number: &str) -> serde_json::Value {
    json!({"phone": number, "name": "IVAN IVANOV", "bank": "Bank A"})
}

#[tokio::test]
async fn calls_without_the_bearer_token_are_401() {
    let sim = TestSim::spawn(&[]).await;
    let url = format!("{}/v1/payments?reference=x", sim.api);
    let none = sim.client.get(&url).send().await.expect("answered");
    assert_eq!(none.status(), StatusCode::UNAUTHORIZED);
    let body: serde_json::Value =
        serde_json::from_str(&none.text().await.expect("body")).expect("json");
    assert_eq!(body["error"]["code"], "unauthorized");
    assert!(body["error"]["message"].is_string());
    let wrong = sim
        .client
        .get(&url)
        .bearer_auth("other")
        .send()
        .await
        .expect("answered");
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn creation_is_idempotent_by_key_and_reference() {
    let sim = TestSim::spawn(&[]).await;
    let body = payout("op-1", 10000, card("4111111111111111"), NOWHERE);
    let (status, first) = sim.create("op-1", &body).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    assert!(first["id"]
        .as_str()
        .is_some_and(|id| id.starts_with("acq_")));
    assert_eq!(first["status"], "pending");
    assert_eq!(first["reference"], "op-1");
    assert_eq!(first["kind"], "payout");
    assert_eq!(first["amount"], 10000);
    assert!(first.get("failureCode").is_none() && first.get("action").is_none());

    // Same key, same body (keys in another order): the same payment.
    let reordered: serde_json::Value = serde_json::from_str(&body.to_string()).expect("json");
    let (status, again) = sim.create("op-1", &reordered).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again["id"], first["id"]);

    // Same key, another body: 409 with the existing payment.
    let other = payout("op-1", 20000, card("4111111111111111"), NOWHERE);
    let (status, conflict) = sim.create("op-1", &other).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(conflict["id"], first["id"]);
    assert_eq!(conflict["amount"], 10000);

    // The reference under another key: 409 with the existing payment.
    let (status, conflict) = sim.create("another-key", &body).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(conflict["id"], first["id"]);

    let (status, read) = sim
        .get(&format!(
            "/v1/payments/{}",
            first["id"].as_str().expect("id")
        ))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read["reference"], "op-1");
    let (status, read) = sim.get("/v1/payments?reference=op-1").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read["id"], first["id"]);
    let (status, missing) = sim.get("/v1/payments?reference=nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(missing["error"]["code"], "not_found");
}

#[tokio::test]
async fn a_creation_after_not_after_is_422_and_creates_nothing() {
    let sim = TestSim::spawn(&[]).await;
    let mut body = payout("late-1", 10000, card("4111111111111111"), NOWHERE);
    body["notAfter"] = json!(in_seconds(-5));
    let (status, answer) = sim.create("late-1", &body).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert!(answer["error"]["code"].is_string());
    let (status, _) = sim.get("/v1/payments?reference=late-1").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn payout_magic_values_and_settling() {
    let sim = TestSim::spawn(&[]).await;
    let immediate = [
        ("m-05", 10005, card("4111111111111111"), "declined"),
        (
            "m-119",
            10000,
            card("4000000000000119"),
            "provider_unavailable",
        ),
        ("m-p3", 10000, phone("+70000000003"), "issuer_unavailable"),
        ("m-p4", 10000, phone("+70000000004"), "provider_unavailable"),
        ("m-p5", 10000, phone("+70000000005"), "insufficient_funds"),
    ];
    for (reference, amount, to, code) in immediate {
        let (status, answer) = sim
            .create(reference, &payout(reference, amount, to, NOWHERE))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{reference}");
        assert_eq!(answer["status"], "failed", "{reference}");
        assert_eq!(answer["failureCode"], code, "{reference}");
    }
    let settling = [
        ("s-ok", card("4111111111111111"), "succeeded", None),
        ("s-phone", phone("+79990000000"), "succeeded", None),
        (
            "s-0002",
            card("4000000000000002"),
            "failed",
            Some("card_declined"),
        ),
        (
            "s-p2",
            phone("+70000000002"),
            "failed",
            Some("recipient_not_found"),
        ),
    ];
    for (reference, to, _, _) in &settling {
        let (status, answer) = sim
            .create(reference, &payout(reference, 10000, to.clone(), NOWHERE))
            .await;
        assert_eq!(status, StatusCode::CREATED);
        assert_eq!(answer["status"], "pending", "{reference}");
    }
    for (reference, _, final_status, code) in settling {
        let settled = sim
            .wait_payment(reference, |p| p["status"] != "pending")
            .await;
        assert_eq!(settled["status"], final_status, "{reference}");
        assert_eq!(settled["failureCode"].as_str(), code, "{reference}");
    }
}

#[tokio::test]
async fn cancel_cancels_what_is_not_final_and_409s_the_rest() {
    let sim = TestSim::spawn(&["--settle-ms", "4000"]).await;
    let (_, created) = sim
        .create(
            "c-1",
            &payout("c-1", 10000, card("4111111111111111"), NOWHERE),
        )
        .await;
    let id = created["id"].as_str().expect("id").to_owned();
    let (status, canceled) = sim.cancel(&id).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(canceled["status"], "canceled");
    let (status, again) = sim.cancel(&id).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(again["status"], "canceled");

    let (_, failed) = sim
        .create(
            "c-2",
            &payout("c-2", 10005, card("4111111111111111"), NOWHERE),
        )
        .await;
    let failed_id = failed["id"].as_str().expect("id");
    let (status, as_is) = sim.cancel(failed_id).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(as_is["status"], "failed");
    let (status, _) = sim.cancel("acq_nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A canceled payout never settles.
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    let (_, read) = sim.get(&format!("/v1/payments/{id}")).await;
    assert_eq!(read["status"], "canceled");
    assert_eq!(sim.stats().await["payouts"]["count"], 0);
}

#[tokio::test]
async fn malformed_creations_are_400() {
    let sim = TestSim::spawn(&[]).await;
    let (status, answer) = sim
        .post(
            "/v1/payments",
            None,
            &payout("x", 100, card("4111"), NOWHERE),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "no Idempotency-Key: {answer}"
    );
    let (status, answer) = sim.create("y", &json!({"reference": "y"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(answer["error"]["code"], "invalid_request");
    let (status, _) = sim
        .create(
            "z",
            &json!({"reference": "z", "kind": "payout", "method": "card",
        "amount": 100, "currency": "RUB"}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "a payout without a recipient"
    );
    for currency in ["XXX", "XAU", "rub"] {
        let mut body = payout("w", 100, card("4111"), NOWHERE);
        body["currency"] = json!(currency);
        let (status, answer) = sim.create("w", &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{currency}: {answer}");
        assert_eq!(answer["error"]["code"], "invalid_request");
    }
}
