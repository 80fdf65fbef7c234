//! Appeals and disputes against the document: an appeal's refusals in the contract's order
//! (400 by field, 404, 409), the open dispute in its own answer, in a read and in the
//! deposit's read shape, and an unknown or another merchant's dispute (404).

use domain::operation::{Decline, DeclineCode, Outcome};
use domain::OperationId;
use serde_json::json;

use super::operations::{ok, DEPOSITS};
use super::Checked;
use crate::helpers::deposit_body;

/// A PNG's first bytes, base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUg==";

/// A new card deposit of 100.00, declined as expired; its id.
async fn expired_deposit(api: &Checked<'_>) -> String {
    let created = api.post(DEPOSITS, &deposit_body("card", "100.00")).await;
    let id = created.operation_id();
    let parsed = OperationId::parse(&id).expect("a UUID");
    (api.app.gateway)
        .answers()
        .complete(parsed, Outcome::Decline(Decline::new(DeclineCode::Expired)))
        .await
        .expect("declined");
    id
}

pub async fn appeals(api: &Checked<'_>) {
    let id = expired_deposit(api).await;
    let path = format!("{DEPOSITS}/{id}/appeals");
    let receipt =
        |data: &str| json!({"fileName": "r.png", "contentType": "image/png", "data": data});
    for body in [
        json!({}),
        json!({"reason": "paid_not_credited"}),
        json!({"reason": "other", "paidAmount": "1.00"}),
        json!({"reason": "paid_not_credited", "paidAmount": 1}),
        json!({"reason": "paid_not_credited", "paidAmount": "1.00", "extra": 1}),
        json!({"reason": "paid_not_credited", "paidAmount": "1.00", "receipt": {"fileName": "r.png"}}),
        json!({"reason": "paid_not_credited", "paidAmount": "1.00",
               "receipt": {"fileName": "r.gif", "contentType": "image/gif", "data": PNG}}),
    ] {
        api.refused_by_both(&path, body).await;
    }
    // Valid for the document, refused by the server: not base64, or not a PNG inside.
    for data in ["***", "anVzdCB0ZXh0"] {
        let body =
            json!({"reason": "paid_not_credited", "paidAmount": "1.00", "receipt": receipt(data)});
        let answer = api.post(&path, &body).await;
        answer.assert_error(400, "InvalidRequest");
        assert_eq!(
            answer.detail_fields(),
            vec!["receipt.data"],
            "{}",
            answer.text
        );
    }
    let unknown = format!("{DEPOSITS}/{}/appeals", uuid::Uuid::new_v4());
    let body =
        json!({"reason": "paid_not_credited", "paidAmount": "100.00", "receipt": receipt(PNG)});
    api.post(&unknown, &body)
        .await
        .assert_error(404, "NotFound");
    // The reason is about the other final status.
    let wrong = json!({"reason": "wrong_amount", "paidAmount": "150.00"});
    api.post(&path, &wrong)
        .await
        .assert_error(409, "InvalidState");

    let opened = api.post(&path, &body).await;
    let dispute = ok(&opened).clone();
    assert_eq!(dispute["status"], "open");
    assert_eq!(dispute["kind"], "appeal");
    api.post(&path, &body)
        .await
        .assert_error(409, "InvalidState");

    let dispute_id = dispute["disputeId"].as_str().expect("an id");
    let read = api.get(&format!("/api/v1/disputes/{dispute_id}")).await;
    assert_eq!(ok(&read), &dispute);
    let deposit = api.get(&format!("{DEPOSITS}/{id}")).await;
    assert_eq!(ok(&deposit)["disputes"], json!([dispute]));
    api.get(&format!("/api/v1/disputes/{}", uuid::Uuid::new_v4()))
        .await
        .assert_error(404, "NotFound");
    api.get("/api/v1/disputes/not-a-uuid")
        .await
        .assert_error(404, "NotFound");
}
