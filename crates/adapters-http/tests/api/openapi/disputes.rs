//! Appeals and disputes against the document: an appeal's refusals in the contract's order
//! (400 by field, 404, 409), the open dispute in its own answer, in a read and in the
//! deposit's read shape, and an unknown or another merchant's dispute (404); a chargeback's
//! evidence (400 by field, 404, 409 for an appeal or once taken, 200 `under_review`).

use domain::acquirer::{
    AcquirerDispute, AcquirerDisputeStatus, Notification, NotifiedObject, PaymentStatus,
};
use domain::operation::{Decline, DeclineCode, Outcome};
use domain::{Amount, OperationId, Timestamp};
use serde_json::json;

use super::operations::{ok, DEPOSITS};
use super::Checked;
use crate::helpers::{deposit_body, OTHER_PROVIDER};

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
    // An appeal takes no evidence.
    api.post(
        &format!("/api/v1/disputes/{dispute_id}/evidence"),
        &json!({}),
    )
    .await
    .assert_error(409, "InvalidState");
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

/// A 100.00 SBP deposit at the test acquirer, approved, with a chargeback of 60.00 the
/// acquirer opened (as its notification reports it); the deposit's id and the dispute.
async fn charged_back(api: &Checked<'_>) -> (String, serde_json::Value) {
    let created = api.post(DEPOSITS, &deposit_body("sbp", "100.00")).await;
    let id = created.operation_id();
    let parsed = OperationId::parse(&id).expect("a UUID");
    let answers = api.app.gateway.answers();
    answers
        .complete(parsed, Outcome::Approve)
        .await
        .expect("approved");
    let provider = answers
        .acquirer_named(OTHER_PROVIDER)
        .await
        .expect("read")
        .expect("the test acquirer");
    // Due 2100-01-01: long after the test.
    let reported = AcquirerDispute {
        id: "dsp_openapi".into(),
        payment_id: format!("acq_{}", parsed.as_uuid().simple()),
        reference: id.clone(),
        amount: Amount::from_minor(60_00).expect("60.00"),
        status: AcquirerDisputeStatus::Open,
        due_by: Some(Timestamp::from_millis(4_102_444_800_000)),
        evidence: 0,
    };
    let notification = Notification {
        object: NotifiedObject::Dispute,
        id: reported.id.clone(),
        reference: id.clone(),
        status: PaymentStatus::Pending,
        failure: None,
        dispute: Some(reported),
    };
    answers
        .apply_notification(&provider, notification)
        .await
        .expect("the chargeback is stored");
    let read = api.get(&format!("{DEPOSITS}/{id}")).await;
    let dispute = ok(&read)["disputes"][0].clone();
    assert_eq!(dispute["kind"], "chargeback", "{}", read.text);
    (id, dispute)
}

pub async fn evidence(api: &Checked<'_>) {
    let (_, dispute) = charged_back(api).await;
    let dispute_id = dispute["disputeId"].as_str().expect("an id");
    assert_eq!(dispute["status"], "open");
    assert_eq!(dispute["amount"], "60.00");
    let read = api.get(&format!("/api/v1/disputes/{dispute_id}")).await;
    assert_eq!(ok(&read), &dispute);

    let path = format!("/api/v1/disputes/{dispute_id}/evidence");
    let pdf =
        |data: &str| json!({"fileName": "r.pdf", "contentType": "application/pdf", "data": data});
    for body in [
        json!({"note": "x"}),
        json!({"text": 5}),
        json!({"files": "r.pdf"}),
        json!({"files": [{"fileName": "r.pdf"}]}),
        json!({"files": [{"fileName": "r.gif", "contentType": "image/gif", "data": "R0lGODlh"}]}),
    ] {
        api.refused_by_both(&path, body).await;
    }
    // Valid for the document, refused by the server: text inside, not a PDF.
    let text = api
        .post(&path, &json!({"files": [pdf("anVzdCB0ZXh0")]}))
        .await;
    text.assert_error(400, "InvalidRequest");
    assert_eq!(text.detail_fields(), vec!["files[0].data"], "{}", text.text);
    api.post(
        &format!("/api/v1/disputes/{}/evidence", uuid::Uuid::new_v4()),
        &json!({}),
    )
    .await
    .assert_error(404, "NotFound");

    let body = json!({"text": "Delivered on 2 January.", "files": [pdf("JVBERi0xLjcK")]});
    let taken = api.post(&path, &body).await;
    assert_eq!(ok(&taken)["status"], "under_review", "{}", taken.text);
    assert_eq!(ok(&taken)["disputeId"], dispute_id);
    // Taken once: sending it again is refused and changes nothing.
    api.post(&path, &body)
        .await
        .assert_error(409, "InvalidState");
    let read = api.get(&format!("/api/v1/disputes/{dispute_id}")).await;
    assert_eq!(ok(&read)["status"], "under_review");
}
