//! Every method in both directions: creation, reads, look-ups, final states and the balance.

use domain::operation::Outcome;
use domain::OperationId;
use serde_json::Value;

use crate::helpers::{
    card_deposit, card_withdrawal, deposit_body, each_backend, sbp_withdrawal, Setup,
};

fn keys(data: &Value) -> Vec<&str> {
    data.as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

fn is_rfc3339_utc(value: &Value) -> bool {
    value
        .as_str()
        .is_some_and(|t| t.len() == 20 && t.ends_with('Z') && t.as_bytes()[10] == b'T')
}

#[tokio::test]
async fn every_redirect_deposit_method_answers_a_redirect_url() {
    each_backend(Setup::default(), |app| async move {
        for method in ["card", "sbp", "bank_a_pay", "bank_b_pay", "bank_c_pay"] {
            let created = app.deposit(&deposit_body(method, "100.00")).await;
            assert_eq!(created.status, 200, "{method}: {}", created.text);
            let id = created.operation_id();
            let data = created.data();
            assert_eq!(
                keys(data),
                vec![
                    "amount",
                    "creditedAmount",
                    "currency",
                    "fee",
                    "operationId",
                    "redirectUrl",
                    "status"
                ],
                "{method}: the creation answer carries only its documented fields"
            );
            assert_eq!(data["status"], 3);
            assert_eq!(data["amount"], "100.00");
            assert_eq!(data["currency"], "RUB");
            assert_eq!(data["redirectUrl"], format!("{}/pay/{id}", app.address));

            let read = app.get(&format!("/api/v1/deposits/{id}")).await;
            read.assert_ok();
            let data = read.data();
            assert_eq!(data["operationId"], id.as_str());
            assert_eq!(data["paymentMethod"], method);
            assert_eq!(data["userId"], "user-1");
            assert_eq!(data["redirectUrl"], format!("{}/pay/{id}", app.address));
            assert!(is_rfc3339_utc(&data["createdAt"]), "{}", read.text);
            assert!(is_rfc3339_utc(&data["updatedAt"]), "{}", read.text);
            assert!(
                data.get("merchantOperationId").is_none(),
                "absent, not null"
            );
            assert!(!read.text.contains("null"), "{}", read.text);
        }
    })
    .await;
}

#[tokio::test]
async fn an_sbp_qr_deposit_answers_a_qr_code_and_its_lifetime() {
    each_backend(Setup::default(), |app| async move {
        let created = app.deposit(&deposit_body("sbp_qr", "250.50")).await;
        created.assert_ok();
        let data = created.data();
        assert_eq!(
            keys(data),
            vec![
                "amount",
                "creditedAmount",
                "currency",
                "fee",
                "lifetime",
                "operationId",
                "requisites",
                "status"
            ]
        );
        let qr = data["requisites"]["qr"].as_str().unwrap_or("");
        assert!(qr.starts_with("data:image/png;base64,"), "{qr:.40}");
        let lifetime = data["lifetime"].as_i64().unwrap_or(0);
        assert!((595..=600).contains(&lifetime), "{lifetime}");
        let read = app.deposit_read(&created.operation_id()).await;
        assert_eq!(read.data()["requisites"]["qr"], qr);
        assert!(read.data()["lifetime"].as_i64().unwrap_or(0) <= lifetime);
    })
    .await;
}

#[tokio::test]
async fn a_finished_deposit_reads_final_without_its_action_and_credits_the_balance() {
    each_backend(Setup::default(), |app| async move {
        let id = app.deposit_id("card", "100.00").await;
        let op_id = OperationId::parse(&id).expect("uuid");
        app.gateway
            .answers()
            .complete(op_id, Outcome::Approve)
            .await
            .expect("approved");
        let read = app.get(&format!("/api/v1/deposits/{id}")).await;
        assert_eq!(read.data()["status"], 1);
        assert!(read.data().get("redirectUrl").is_none(), "{}", read.text);
        app.assert_balance("100.00", "0.00").await;
    })
    .await;
}

#[tokio::test]
async fn amounts_ending_in_05_are_declined_at_creation_in_both_directions() {
    each_backend(Setup::credited("100.00"), |app| async move {
        let deposit = app.deposit(&deposit_body("sbp", "100.05")).await;
        let payout = app.withdraw(&sbp_withdrawal("10.05", "+79001234567")).await;
        for answer in [&deposit, &payout] {
            answer.assert_ok();
            assert_eq!(answer.data()["status"], 2);
            assert_eq!(answer.data()["errorCode"], "ProviderDeclined");
            assert!(answer.data()["errorMessage"].is_string());
        }
        assert!(deposit.data().get("redirectUrl").is_none());
        app.assert_balance("100.00", "0.00").await;
    })
    .await;
}

#[tokio::test]
async fn withdrawals_by_card_and_sbp_hold_then_settle() {
    each_backend(Setup::credited("1000.00"), |app| async move {
        let card = app
            .withdraw(&card_withdrawal("100.00", "4242424242424242"))
            .await;
        card.assert_ok();
        assert_eq!(
            keys(card.data()),
            vec![
                "amount",
                "currency",
                "debitedAmount",
                "fee",
                "operationId",
                "status"
            ],
            "the creation answer carries only its documented fields"
        );
        assert_eq!(card.data()["status"], 3);
        let sbp = app.withdraw(&sbp_withdrawal("50.00", "+79001234567")).await;
        sbp.assert_ok();
        let declined = app
            .withdraw(&card_withdrawal("30.00", "4000000000000002"))
            .await;
        assert_eq!(
            declined.data()["status"],
            3,
            "declined only when it settles"
        );
        app.assert_balance("820.00", "180.00").await;

        let read = app
            .get(&format!("/api/v1/withdrawals/{}", card.operation_id()))
            .await;
        read.assert_ok();
        assert_eq!(read.data()["requisites"]["pan"], "424242******4242");
        assert_eq!(read.data()["requisites"]["cardholderName"], "IVAN IVANOV");
        assert!(!read.text.contains("4242424242424242"));
        assert_eq!(read.data()["paymentMethod"], "card");
        let read = app
            .get(&format!("/api/v1/withdrawals/{}", sbp.operation_id()))
            .await;
        assert_eq!(read.data()["requisites"]["phone"], "+79001234567");

        app.settle_payouts().await;
        for (answer, status) in [(&card, 1), (&sbp, 1), (&declined, 2)] {
            let read = app
                .get(&format!("/api/v1/withdrawals/{}", answer.operation_id()))
                .await;
            assert_eq!(read.data()["status"], status, "{}", read.text);
        }
        let read = app
            .get(&format!("/api/v1/withdrawals/{}", declined.operation_id()))
            .await;
        assert_eq!(read.data()["errorCode"], "CardDeclined");
        app.assert_balance("850.00", "0.00").await;
    })
    .await;
}

#[tokio::test]
async fn look_ups_by_merchant_operation_id_find_only_ones_own() {
    each_backend(Setup::default(), |app| async move {
        let body = card_deposit("10.00", "order/1?&=");
        let created = app.deposit(&body).await;
        created.assert_ok();
        let path = "/api/v1/deposits?merchantOperationId=order%2F1%3F%26%3D";
        let found = app.get(path).await;
        found.assert_ok();
        assert_eq!(found.data()["operationId"], created.operation_id().as_str());
        assert_eq!(found.data()["merchantOperationId"], "order/1?&=");

        app.get_as(&app.other, path)
            .await
            .assert_error(404, "NotFound");
        app.assert_not_found("/api/v1/withdrawals?merchantOperationId=order%2F1%3F%26%3D")
            .await;
        app.assert_not_found("/api/v1/deposits?merchantOperationId=nope")
            .await;
        let missing = app.get("/api/v1/deposits").await;
        missing.assert_error(400, "InvalidRequest");
        assert_eq!(missing.detail_fields(), vec!["merchantOperationId"]);
        app.get("/api/v1/withdrawals?other=1")
            .await
            .assert_error(400, "InvalidRequest");
    })
    .await;
}

#[tokio::test]
async fn reads_of_another_merchants_operation_are_404() {
    each_backend(Setup::default(), |app| async move {
        let created = app.deposit(&deposit_body("card", "10.00")).await;
        let path = format!("/api/v1/deposits/{}", created.operation_id());
        app.get_as(&app.other, &path)
            .await
            .assert_error(404, "NotFound");
        app.assert_not_found(&format!("/api/v1/withdrawals/{}", created.operation_id()))
            .await;
        app.assert_not_found(&format!("/api/v1/deposits/{}", uuid::Uuid::new_v4()))
            .await;
        app.assert_not_found("/api/v1/deposits/not-a-uuid").await;
    })
    .await;
}

#[tokio::test]
async fn the_balance_starts_empty_and_shows_credits() {
    each_backend(Setup::default(), |app| async move {
        let empty = app.get("/api/v1/balance").await;
        empty.assert_ok();
        assert_eq!(empty.body, serde_json::json!({"data": {"balances": []}}));
        app.credit("1234.56").await;
        let answer = app.get("/api/v1/balance").await;
        assert_eq!(
            answer.body,
            serde_json::json!({"data": {"balances": [
                {"currency": "RUB", "available": "1234.56", "held": "0.00"}]}})
        );
    })
    .await;
}
