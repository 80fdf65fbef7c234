//! Every endpoint's successful answers in every shape (redirect and QR deposits, card and SBP
//! payouts, replays, reads, look-ups, final states, the balance) and the refusals that come
//! after authentication (400 by field, 403, 404, 409, 422). Each answer is checked against
//! the document by [`Checked`].

use std::collections::BTreeSet;

use domain::merchant::{Merchant, Secret};
use domain::operation::Outcome;
use domain::operator::NewMerchant;
use domain::{Direction, OperationId, PaymentMethod};
use serde_json::{json, Value};

use super::Checked;
use crate::helpers::{card_withdrawal, deposit_body, sbp_withdrawal, Answer, Shop};

pub const DEPOSITS: &str = "/api/v1/deposits";
pub const WITHDRAWALS: &str = "/api/v1/withdrawals";

/// `data` of an answer that must be 200.
#[track_caller]
pub fn ok(answer: &Answer) -> &Value {
    answer.assert_ok();
    answer.data()
}

/// A merchant that may only pay out to cards.
async fn card_payouts_only(api: &Checked<'_>, name: &str) -> Shop {
    let secret = || Secret::new(uuid::Uuid::new_v4().simple().to_string().repeat(2));
    let merchant: Merchant = api
        .app
        .operator()
        .create_merchant(NewMerchant {
            id: None,
            name: name.into(),
            access: BTreeSet::from([(Direction::Withdrawal, PaymentMethod::Card)]),
            deposit_secret: secret(),
            withdrawal_secret: secret(),
            require_timestamp: false,
            require_signature_v2: false,
        })
        .await
        .expect("a merchant");
    Shop { merchant }
}

/// `body` in USD, POSTed to `path`, finds no route (422).
async fn no_route_in_usd(api: &Checked<'_>, path: &str, mut body: Value) {
    body["currency"] = json!("USD");
    api.post(path, &body)
        .await
        .assert_error(422, "NoRouteFound");
}

/// The look-up at `base` (deposits or withdrawals) finds `merchant_operation_id` and is 404
/// for one never used.
async fn look_ups(api: &Checked<'_>, base: &str, merchant_operation_id: &str) {
    ok(&api
        .get(&format!(
            "{base}?merchantOperationId={merchant_operation_id}"
        ))
        .await);
    let nope = api.get(&format!("{base}?merchantOperationId=nope")).await;
    nope.assert_error(404, "NotFound");
}

/// Creations of every method, replays, reads, look-ups, declines and refusals.
pub async fn deposits(api: &Checked<'_>) {
    for method in ["card", "sbp", "bank_a_pay", "bank_b_pay", "bank_c_pay"] {
        let created = api.post(DEPOSITS, &deposit_body(method, "100.00")).await;
        assert!(ok(&created)["redirectUrl"].is_string(), "{method}");
    }
    let qr = api.post(DEPOSITS, &deposit_body("sbp_qr", "250.50")).await;
    assert!(ok(&qr)["requisites"]["qr"].is_string());
    let read = api.get(&format!("{DEPOSITS}/{}", qr.operation_id())).await;
    assert!(ok(&read)["lifetime"].is_i64());

    let full = json!({"amount": "100.00", "currency": "RUB", "paymentMethod": "card",
        "userId": "user-1", "merchantOperationId": "order-1",
        "callbackUrl": "https://shop.example/callbacks", "successUrl": "https://shop.example/ok",
        "failUrl": "https://shop.example/fail", "processingUrl": "https://shop.example/wait",
        "requisites": {"note": "kept"},
        "userData": {"email": "ivan@example.com", "ipAddress": "2001:db8::1", "country": "RU"}});
    let created = api.post(DEPOSITS, &full).await;
    let id = created.operation_id();
    let replay = api.post(DEPOSITS, &full).await;
    assert_eq!(ok(&replay)["operationId"], id.as_str());
    assert!(
        replay.data()["createdAt"].is_string(),
        "a replay answers the read shape"
    );
    let mut reused = full.clone();
    reused["amount"] = json!("200.00");
    api.post(DEPOSITS, &reused)
        .await
        .assert_error(409, "DuplicateOperation");
    let mut nulls = deposit_body("card", "1.00");
    nulls["merchantOperationId"] = Value::Null;
    nulls["userData"] = json!({"email": null});
    ok(&api.post(DEPOSITS, &nulls).await);

    let read = api.get(&format!("{DEPOSITS}/{id}")).await;
    assert_eq!(ok(&read)["merchantOperationId"], "order-1");
    look_ups(api, DEPOSITS, "order-1").await;
    api.get(DEPOSITS).await.assert_error(400, "InvalidRequest");
    let unknown = format!("{DEPOSITS}/{}", uuid::Uuid::new_v4());
    api.get(&unknown).await.assert_error(404, "NotFound");
    let malformed = format!("{DEPOSITS}/not-a-uuid");
    api.get(&malformed).await.assert_error(404, "NotFound");

    let declined = api.post(DEPOSITS, &deposit_body("card", "100.05")).await;
    assert_eq!(ok(&declined)["errorCode"], "ProviderDeclined");
    no_route_in_usd(api, DEPOSITS, deposit_body("card", "1.00")).await;
    let limited = card_payouts_only(api, "no-deposits").await;
    let forbidden = api
        .post_as(&limited, DEPOSITS, &deposit_body("card", "1.00"))
        .await;
    forbidden.assert_error(403, "Forbidden");

    // The digits follow the currency, in the document as in the server.
    for (currency, amount) in [("JPY", "1500.00"), ("KWD", "1.25"), ("RUB", "1.250")] {
        let mut body = deposit_body("card", amount);
        body["currency"] = json!(currency);
        api.refused_by_both(DEPOSITS, body).await;
    }
    let good = deposit_body("card", "1.00");
    for (field, bad) in [
        ("amount", json!("100")),
        ("amount", json!("0.00")),
        ("amount", json!("0")),
        ("amount", json!(100)),
        ("currency", json!("rub")),
        ("paymentMethod", json!("cash")),
        ("userId", json!("")),
        ("merchantOperationId", json!("has space")),
        ("callbackUrl", json!("ftp://shop.example/cb")),
        ("userData", json!({"email": "not-an-address"})),
        ("userData", json!({"ipAddress": "300.1.1.1"})),
        ("userData", json!({"age": 30})),
        ("unknownField", json!(1)),
    ] {
        let mut body = good.clone();
        body[field] = bad;
        api.refused_by_both(DEPOSITS, body).await;
    }
    let mut missing = good.clone();
    if let Some(object) = missing.as_object_mut() {
        object.remove("userId");
    }
    api.refused_by_both(DEPOSITS, missing).await;
    for text in ["", "{", "[1]", r#"{"amount": "1.00", "amount": "1.00"}"#] {
        let answer = api.post_text(DEPOSITS, text).await;
        answer.assert_error(400, "InvalidRequest");
        assert!(answer.body.get("details").is_none(), "{}", answer.text);
    }

    let approved = OperationId::parse(&created.operation_id()).expect("a UUID");
    api.app
        .gateway
        .answers()
        .complete(approved, Outcome::Approve)
        .await
        .expect("approved");
    let read = api.get(&format!("{DEPOSITS}/{id}")).await;
    assert_eq!(ok(&read)["status"], 1);
}

/// Card and SBP payouts: creation, replays, declines, refusals, reads before and after they
/// settle, and the balance.
pub async fn withdrawals(api: &Checked<'_>) {
    ok(&api.get("/api/v1/balance").await);
    api.app.credit("1000.00").await;
    let card = api
        .post(WITHDRAWALS, &card_withdrawal("100.00", "4242424242424242"))
        .await;
    assert_eq!(ok(&card)["status"], 3);
    let mut sbp = sbp_withdrawal("50.00", "+79001234567");
    sbp["merchantOperationId"] = json!("payout-1");
    sbp["callbackUrl"] = json!("https://shop.example/callbacks");
    let created = api.post(WITHDRAWALS, &sbp).await;
    let replay = api.post(WITHDRAWALS, &sbp).await;
    assert_eq!(ok(&replay)["operationId"], created.operation_id().as_str());
    assert_eq!(replay.data()["requisites"]["phone"], "+79001234567");
    sbp["amount"] = json!("60.00");
    api.post(WITHDRAWALS, &sbp)
        .await
        .assert_error(409, "DuplicateOperation");
    let later = api
        .post(WITHDRAWALS, &card_withdrawal("30.00", "4000000000000002"))
        .await;
    assert_eq!(ok(&later)["status"], 3);
    let now = api.sbp_payout("10.05").await;
    assert_eq!(ok(&now)["status"], 2);

    let too_much = card_withdrawal("100000.00", "4242424242424242");
    api.post(WITHDRAWALS, &too_much)
        .await
        .assert_error(422, "InsufficientBalance");
    no_route_in_usd(
        api,
        WITHDRAWALS,
        card_withdrawal("1.00", "4242424242424242"),
    )
    .await;
    let limited = card_payouts_only(api, "card-payouts-only").await;
    let forbidden = api
        .post_as(
            &limited,
            WITHDRAWALS,
            &sbp_withdrawal("1.00", "+79001234567"),
        )
        .await;
    forbidden.assert_error(403, "Forbidden");
    for (field, bad) in [
        (
            "requisites",
            json!({"phone": "123", "accountName": "I", "bankName": "B"}),
        ),
        ("requisites", json!({"pan": "42", "cardholderName": "I"})),
        (
            "requisites",
            json!({"phone": "+79001234567", "accountName": "I"}),
        ),
        ("successUrl", json!("https://shop.example/ok")),
        ("paymentMethod", json!("sbp_qr")),
    ] {
        let mut body = sbp_withdrawal("1.00", "+79001234567");
        body[field] = bad;
        api.refused_by_both(WITHDRAWALS, body).await;
    }

    let read = api
        .get(&format!("{WITHDRAWALS}/{}", card.operation_id()))
        .await;
    assert_eq!(ok(&read)["requisites"]["pan"], "424242******4242");
    look_ups(api, WITHDRAWALS, "payout-1").await;
    let repeated = format!("{WITHDRAWALS}?merchantOperationId=a&merchantOperationId=b");
    api.get(&repeated).await.assert_error(400, "InvalidRequest");
    let unknown = format!("{WITHDRAWALS}/{}", uuid::Uuid::new_v4());
    api.get(&unknown).await.assert_error(404, "NotFound");

    api.app.settle_payouts().await;
    for (answer, status) in [(&card, 1), (&created, 1), (&later, 2)] {
        let read = api
            .get(&format!("{WITHDRAWALS}/{}", answer.operation_id()))
            .await;
        assert_eq!(ok(&read)["status"], status, "{}", read.text);
    }
    let balance = api.get("/api/v1/balance").await;
    assert_eq!(ok(&balance)["balances"][0]["held"], "0.00");

    // The movements behind it, two to a page, and a query the server refuses.
    let transactions = "/api/v1/balance/transactions?currency=RUB&limit=2";
    let first = api.get(transactions).await;
    let next = ok(&first)["next"]
        .as_str()
        .expect("more than one page")
        .to_string();
    let second = api.get(&format!("{transactions}&after={next}")).await;
    assert_eq!(
        ok(&second)["transactions"].as_array().map(Vec::len),
        Some(2)
    );
    api.get("/api/v1/balance/transactions?currency=RUB&limit=500")
        .await
        .assert_error(400, "InvalidRequest");
}
