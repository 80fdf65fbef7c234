//! The signing rules of docs/api.md: signatures over raw bodies and paths, the two secrets, one 401.

use domain::merchant::Secret;
use domain::ports::OperatorStore;
use domain::signature::sign;
use reqwest::Method;

use crate::helpers::{
    card_withdrawal_text, deposit_body, each_backend, signed_headers, Answer, Setup,
};

#[tokio::test]
async fn the_withdrawal_endpoint_refuses_the_deposit_secret() {
    each_backend(Setup::credited("500.00"), |app| async move {
        let body = card_withdrawal_text("100.00", "payout-1");
        let refused = app
            .post_signed(
                &app.shop,
                "/api/v1/withdrawals",
                &body,
                app.shop.deposit_secret(),
            )
            .await;
        refused.assert_error(401, "Unauthorized");
        assert_eq!(
            app.balance().await,
            ("500.00".to_string(), "0.00".to_string()),
            "nothing held"
        );
        app.assert_not_found("/api/v1/withdrawals?merchantOperationId=payout-1")
            .await;
        let accepted = app.post("/api/v1/withdrawals", &body).await;
        accepted.assert_ok();
    })
    .await;
}

#[tokio::test]
async fn a_body_altered_after_signing_is_refused() {
    each_backend(Setup::default(), |app| async move {
        let signed = deposit_body("card", "1.00").to_string();
        let altered = signed.replace("1.00", "9.00");
        let signature = sign(app.shop.deposit_secret(), signed.as_bytes());
        let headers = signed_headers(&app.shop, &signature, "application/json");
        let refused = app
            .raw(Method::POST, "/api/v1/deposits", &headers, altered.clone())
            .await;
        refused.assert_error(401, "Unauthorized");
        let spaced = format!("{signed} ");
        let refused = app
            .raw(Method::POST, "/api/v1/deposits", &headers, spaced)
            .await;
        refused.assert_error(401, "Unauthorized");
        let accepted = app
            .raw(Method::POST, "/api/v1/deposits", &headers, signed)
            .await;
        accepted.assert_ok();
    })
    .await;
}

#[tokio::test]
async fn every_credential_failure_answers_the_same_401() {
    each_backend(Setup::default(), |app| async move {
        let body = deposit_body("card", "1.00").to_string();
        let good = sign(app.shop.deposit_secret(), body.as_bytes());
        let json = ("content-type", "application/json");
        let post = |headers: Vec<(&'static str, String)>| {
            let app = &app;
            let body = body.clone();
            async move {
                let headers: Vec<(&str, &str)> = headers
                    .iter()
                    .map(|(n, v)| (*n, v.as_str()))
                    .chain([json])
                    .collect();
                app.raw(Method::POST, "/api/v1/deposits", &headers, body)
                    .await
            }
        };
        let id = app.shop.id().to_string();
        let disabled = app.other.merchant.id.clone();
        assert!(app.db.disable_merchant(&disabled).await.expect("disabled"));
        let other_sig = sign(app.other.deposit_secret(), body.as_bytes());
        let cases: Vec<(&str, Vec<(&'static str, String)>)> = vec![
            ("no headers", vec![]),
            ("no signature", vec![("merchant-id", id.clone())]),
            ("no merchant", vec![("x-signature", good.clone())]),
            (
                "unknown merchant",
                vec![
                    ("merchant-id", "nobody".into()),
                    ("x-signature", good.clone()),
                ],
            ),
            (
                "malformed merchant",
                vec![("merchant-id", "a b".into()), ("x-signature", good.clone())],
            ),
            (
                "disabled merchant",
                vec![
                    ("merchant-id", disabled.to_string()),
                    ("x-signature", other_sig),
                ],
            ),
            (
                "withdrawal secret",
                vec![
                    ("merchant-id", id.clone()),
                    (
                        "x-signature",
                        sign(app.shop.withdrawal_secret(), body.as_bytes()),
                    ),
                ],
            ),
            (
                "another merchant's secret",
                vec![
                    ("merchant-id", id.clone()),
                    (
                        "x-signature",
                        sign(&Secret::new("00".repeat(32)), body.as_bytes()),
                    ),
                ],
            ),
            (
                "not hex",
                vec![("merchant-id", id.clone()), ("x-signature", "xyz".into())],
            ),
            (
                "truncated",
                vec![
                    ("merchant-id", id.clone()),
                    ("x-signature", good[..60].to_string()),
                ],
            ),
        ];
        let mut answers: Vec<Answer> = Vec::new();
        for (name, headers) in cases {
            let answer = post(headers).await;
            assert_eq!(answer.status, 401, "{name}: {}", answer.text);
            answer.assert_error(401, "Unauthorized");
            answers.push(answer);
        }
        assert!(
            answers.windows(2).all(|w| w[0].text == w[1].text),
            "one message"
        );
        let upper = post(vec![
            ("merchant-id", id),
            ("x-signature", good.to_uppercase()),
        ])
        .await;
        assert_eq!(
            upper.status, 200,
            "upper-case hex is accepted: {}",
            upper.text
        );
    })
    .await;
}

#[tokio::test]
async fn gets_sign_the_path_with_its_query_and_the_right_secret() {
    each_backend(Setup::default(), |app| async move {
        let path = "/api/v1/balance";
        let get = |path: &'static str, message: String, secret: Secret| {
            let app = &app;
            async move {
                let signature = sign(&secret, message.as_bytes());
                let headers = [
                    ("merchant-id", app.shop.id()),
                    ("x-signature", signature.as_str()),
                ];
                app.raw(Method::GET, path, &headers, Vec::new()).await
            }
        };
        let w = app.shop.withdrawal_secret().clone();
        let d = app.shop.deposit_secret().clone();
        assert_eq!(get(path, path.into(), w.clone()).await.status, 200);
        get(path, path.into(), d.clone())
            .await
            .assert_error(401, "Unauthorized");
        let lookup = "/api/v1/deposits?merchantOperationId=a%20b";
        get(lookup, "/api/v1/deposits".into(), d.clone())
            .await
            .assert_error(401, "Unauthorized");
        get(
            lookup,
            "/api/v1/deposits?merchantOperationId=a b".into(),
            d.clone(),
        )
        .await
        .assert_error(401, "Unauthorized");
        let answer = get(lookup, lookup.into(), d).await;
        answer.assert_error(400, "InvalidRequest");
        assert_eq!(answer.detail_fields(), vec!["merchantOperationId"]);
        let read = "/api/v1/withdrawals?merchantOperationId=x";
        get(read, read.into(), w)
            .await
            .assert_error(404, "NotFound");
    })
    .await;
}
