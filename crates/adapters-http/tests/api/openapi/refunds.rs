//! Refunds and cancels against the document: every status of the four operations, refunds
//! at 3, then 1 and 2, in their own answers and in the deposit's read shape.

use domain::operation::Outcome;
use domain::OperationId;
use serde_json::json;

use super::operations::{ok, DEPOSITS, WITHDRAWALS};
use super::Checked;
use crate::helpers::deposit_body;

/// A new card deposit of `amount`, approved; its id.
pub async fn approved_deposit(api: &Checked<'_>, amount: &str) -> String {
    let created = api.post(DEPOSITS, &deposit_body("card", amount)).await;
    let id = created.operation_id();
    let parsed = OperationId::parse(&id).expect("a UUID");
    (api.app.gateway)
        .answers()
        .complete(parsed, Outcome::Approve)
        .await
        .expect("approved");
    id
}

/// Refunds of an approved deposit: refusals in the contract's order, a new refund, its
/// replay, and the refunds once settled (one approved, one declined).
pub async fn refunds(api: &Checked<'_>) {
    let id = approved_deposit(api, "100.00").await;
    let deposit = format!("{DEPOSITS}/{id}");
    let read = api.get(&deposit).await;
    assert_eq!(ok(&read)["refundedAmount"], "0.00");
    assert_eq!(read.data()["refunds"], json!([]));
    let path = format!("{deposit}/refunds");
    for body in [
        json!({}),
        json!({"amount": "30."}),
        json!({"amount": "0.00"}),
        json!({"amount": 30}),
        json!({"amount": "30.00", "reason": "x"}),
        json!({"amount": "1.00", "merchantRefundId": "has space"}),
        json!({"amount": "1.00", "callbackUrl": "ftp://shop.example/cb"}),
    ] {
        api.refused_by_both(&path, body).await;
    }
    // Yen digits for a rouble deposit: a decimal the document accepts (it cannot know the
    // deposit's currency), which the server refuses naming amount.
    let answer = api.post(&path, &json!({"amount": "30"})).await;
    answer.assert_error(400, "InvalidRequest");
    assert_eq!(answer.detail_fields(), vec!["amount"]);
    for text in ["", "[]", "{"] {
        let answer = api.post_text(&path, text).await;
        answer.assert_error(400, "InvalidRequest");
    }

    let first = json!({"amount": "30.00", "merchantRefundId": "r-1",
                       "callbackUrl": "https://shop.example/refunds"});
    let created = api.post(&path, &first).await;
    assert_eq!(ok(&created)["status"], 3);
    let refund_id = created.data()["refundId"]
        .as_str()
        .expect("an id")
        .to_string();
    let replay = api.post(&path, &first).await;
    assert_eq!(ok(&replay)["refundId"], refund_id.as_str());
    let mut changed = first.clone();
    changed["amount"] = json!("31.00");
    api.post(&path, &changed)
        .await
        .assert_error(409, "DuplicateOperation");
    let declined = api.post(&path, &json!({"amount": "10.05"})).await;
    assert_eq!(ok(&declined)["status"], 3);
    let declined_id = declined.data()["refundId"]
        .as_str()
        .expect("an id")
        .to_string();
    api.post(&path, &json!({"amount": "60.00"}))
        .await
        .assert_error(422, "RefundExceedsAmount");
    // Most of the balance paid out: a refund the deposit still allows finds too little.
    let payout = api.sbp_payout("50.00").await;
    assert_eq!(ok(&payout)["status"], 3);
    api.post(&path, &json!({"amount": "20.00"}))
        .await
        .assert_error(422, "InsufficientBalance");
    let unknown = format!("{DEPOSITS}/{}/refunds", uuid::Uuid::new_v4());
    let one = json!({"amount": "1.00"});
    api.post(&unknown, &one).await.assert_error(404, "NotFound");
    (api.post_as(&api.app.other, &path, &one).await).assert_error(404, "NotFound");
    let waiting = api.post(DEPOSITS, &deposit_body("card", "10.00")).await;
    let waiting = format!("{DEPOSITS}/{}/refunds", waiting.operation_id());
    api.post(&waiting, &one)
        .await
        .assert_error(409, "InvalidState");

    let read = api.get(&deposit).await;
    assert_eq!(ok(&read)["refundedAmount"], "0.00", "both still processing");
    assert_eq!(read.data()["refunds"][0]["status"], 3);
    assert_eq!(read.data()["refunds"][1]["refundId"], declined_id.as_str());

    api.app.settle_refunds("openapi").await;
    let approved = api.get(&format!("{path}/{refund_id}")).await;
    assert_eq!(ok(&approved)["status"], 1);
    let declined = api.get(&format!("{path}/{declined_id}")).await;
    assert_eq!(ok(&declined)["status"], 2);
    assert_eq!(declined.data()["errorCode"], "ProviderDeclined");
    assert_eq!(ok(&api.post(&path, &first).await)["status"], 1);
    let read = api.get(&deposit).await;
    assert_eq!(ok(&read)["refundedAmount"], "30.00");
    for missing in [
        format!("{path}/{}", uuid::Uuid::new_v4()),
        format!("{path}/not-a-uuid"),
        format!("{waiting}/{refund_id}"),
    ] {
        api.get(&missing).await.assert_error(404, "NotFound");
    }
}

/// Cancels of a waiting deposit and of a payout not yet executed (the app's payouts settle
/// long after the test), refusals of any body but `{}`, and a second cancel.
pub async fn cancels(api: &Checked<'_>) {
    let waiting = api.post(DEPOSITS, &deposit_body("card", "10.00")).await;
    let path = format!("{DEPOSITS}/{}/cancel", waiting.operation_id());
    api.refused_by_both(&path, json!({"reason": "x"})).await;
    for text in ["", "[]"] {
        api.post_text(&path, text)
            .await
            .assert_error(400, "InvalidRequest");
    }
    let canceled = api.post(&path, &json!({})).await;
    assert_eq!(ok(&canceled)["status"], 2);
    assert_eq!(canceled.data()["errorCode"], "Canceled");
    assert_eq!(canceled.data()["refunds"], json!([]));
    api.assert_cancels_refused_after(&path, DEPOSITS).await;

    api.app.credit("100.00").await;
    let payout = api.sbp_payout("40.00").await;
    let path = format!("{WITHDRAWALS}/{}/cancel", payout.operation_id());
    api.refused_by_both(&path, json!({"amount": "40.00"})).await;
    api.post_text(&path, "")
        .await
        .assert_error(400, "InvalidRequest");
    let canceled = api.post(&path, &json!({})).await;
    assert_eq!(ok(&canceled)["errorCode"], "Canceled");
    assert!(canceled.data()["requisites"]["phone"].is_string());
    api.app.assert_balance("100.00", "0.00").await;
    api.assert_cancels_refused_after(&path, WITHDRAWALS).await;
}
