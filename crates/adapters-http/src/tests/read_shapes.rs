//! A deposit's read shape carries its refunds wherever it is answered: a read, a look-up, a
//! creation's replay; never a new deposit's creation answer, never a withdrawal.

use domain::operation::{Action, Outcome};
use domain::ports::DepositStart;
use domain::signature::Fingerprint;
use domain::Status;
use serde_json::json;

use super::*;
use crate::test_support::{deposit_builder, merchant, now, op_id, refund, withdrawal, Mocks};

const CREATE: &str = r#"{"amount":"100.00","currency":"RUB","merchantOperationId":"order-1","paymentMethod":"card","userId":"u-1"}"#;

/// Mocks whose store holds the approved deposit `order-1` with an approved refund of 30.00 and
/// a processing one of 5.00.
fn refunded() -> Mocks {
    let approved = || {
        deposit_builder(Status::Approved, None)
            .merchant_operation_id("order-1")
            .build()
    };
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_get()
        .returning(move |_| Ok(Some(approved())));
    mocks
        .store
        .expect_find_by_merchant_operation_id()
        .returning(move |_, _, _| {
            let fingerprint = Fingerprint::of(merchant().deposit_keys.newest(), CREATE.as_bytes());
            Ok(Some((approved(), Some(fingerprint))))
        });
    mocks
        .disputes
        .expect_disputes_of()
        .returning(|_| Ok(Vec::new()));
    mocks.refunds.expect_refunds_of().returning(|id| {
        assert_eq!(id, op_id());
        let paid = refund(1, 3_000)
            .finish(&Outcome::Approve, now().plus_seconds(30))
            .expect("processing");
        Ok(vec![paid, refund(2, 500)])
    });
    mocks
}

#[actix_web::test]
async fn reads_look_ups_and_replays_of_a_deposit_carry_its_refunds() {
    let mut mocks = refunded();
    mocks.provider.expect_start_deposit().returning(|_, _| {
        Ok(DepositStart::Wait(Action::Redirect {
            url: "http://gw/pay/1".into(),
        }))
    });
    mocks
        .store
        .expect_insert()
        .returning(|_| Err(domain::ports::InsertError::Duplicate));
    let app = default_service(mocks).await;
    let read = format!("/api/v1/deposits/{}", op_id());
    let look_up = "/api/v1/deposits?merchantOperationId=order-1".to_string();
    let mut answers = Vec::new();
    for path in [read, look_up] {
        answers.push(call(&app, get(&path, &deposit_sig(path.as_bytes()))).await);
    }
    answers.push(call(&app, post_deposit(CREATE)).await);
    for (status, _, body) in answers {
        assert_eq!(status, 200, "{body}");
        let data = &body["data"];
        assert_eq!(data["refundedAmount"], "30.00", "{body}");
        let refunds = data["refunds"].as_array().expect("refunds");
        assert_eq!(refunds.len(), 2, "{body}");
        assert_eq!(refunds[0]["status"], 1);
        assert_eq!(
            refunds[1],
            json!({
            "refundId": "7e5d0000-0000-4000-8000-000000000002",
            "operationId": op_id().to_string(), "amount": "5.00", "currency": "RUB",
            "debitedAmount": "5.00", "fee": "0.00", "status": 3, "createdAt": "2026-11-21T10:00:02Z", "updatedAt": "2026-11-21T10:00:02Z"})
        );
    }
}

#[actix_web::test]
async fn a_new_deposit_and_a_withdrawal_carry_no_refunds() {
    let mut mocks = Mocks::new();
    mocks.provider.expect_start_deposit().returning(|_, _| {
        Ok(DepositStart::Wait(Action::Redirect {
            url: "http://gw/pay/1".into(),
        }))
    });
    mocks.store.expect_insert().returning(|_| Ok(()));
    mocks
        .store
        .expect_get()
        .returning(|_| Ok(Some(withdrawal(Status::Approved))));
    // No refunds are read for either (the mock has no expectation).
    let app = default_service(mocks).await;
    let (status, _, body) = call(&app, post_deposit(CREATE)).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["data"].get("refunds").is_none(), "{body}");
    let path = format!("/api/v1/withdrawals/{}", op_id());
    let (status, _, body) = call(&app, get(&path, &withdrawal_sig(path.as_bytes()))).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["data"].get("refunds").is_none() && body["data"].get("refundedAmount").is_none());
}
