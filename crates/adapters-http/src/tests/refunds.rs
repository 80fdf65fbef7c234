//! Refunds through the whole app on mocks: the body rules, the order of the checks, the
//! `Refund` answer, replays, and reading one refund.

use domain::ports::{RefundInsertError, StoreError};
use domain::signature::Fingerprint;
use domain::{MerchantRefundId, Status};
use serde_json::json;

use super::*;
use crate::test_support::{deposit, deposit_builder, merchant, now, op_id, refund, Mocks};

const BODY: &str = r#"{"amount": "30.00", "merchantRefundId": "r-1",
  "callbackUrl": "https://shop.example/refunds"}"#;

fn refunds_path() -> String {
    format!("/api/v1/deposits/{}/refunds", op_id())
}

/// POSTs `body` to `path`, signed with the deposit secret, to an app on `mocks`.
async fn refund_on(mocks: Mocks, path: &str, body: &str) -> (u16, Value) {
    let app = default_service(mocks).await;
    let (status, _, answer) = call(&app, post_v2(path, body, DEPOSIT_SECRET)).await;
    (status, answer)
}

/// Mocks whose store holds [`deposit`] in `status` (approved: refundable).
fn with_deposit(status: Status) -> Mocks {
    Mocks::storing(Some(deposit(status, None)))
}

/// [`with_deposit`], no earlier refund having merchantRefundId `r-1`.
fn without_earlier_refund(status: Status) -> Mocks {
    let mut mocks = with_deposit(status);
    mocks
        .refunds
        .expect_find_by_merchant_refund_id()
        .returning(|_, _| Ok(None));
    mocks
}

/// Mocks on which a new refund of the approved deposit gets as far as its insert: no earlier
/// refund has merchantRefundId `r-1` and the provider takes the refund.
fn up_to_the_insert() -> Mocks {
    let mut mocks = without_earlier_refund(Status::Approved);
    mocks
        .provider
        .expect_start_refund()
        .returning(|_| Ok(now().plus_seconds(5)));
    mocks
}

/// [`up_to_the_insert`], the insert answering `insert`.
fn refundable(insert: fn() -> Result<(), RefundInsertError>) -> Mocks {
    let mut mocks = up_to_the_insert();
    mocks
        .refunds
        .expect_insert_refund()
        .returning(move |_| insert());
    mocks
}

/// The fingerprint the domain keeps for a refund request of `canonical` on [`op_id`].
fn fingerprint(canonical: &str) -> Fingerprint {
    let covered = format!("{}\n{canonical}", op_id());
    Fingerprint::of(merchant().deposit_keys.newest(), covered.as_bytes())
}

#[actix_web::test]
async fn a_new_refund_answers_the_refund_shape() {
    let mut mocks = up_to_the_insert();
    mocks.refunds.expect_insert_refund().returning(|new| {
        let ok = new.refund.amount.minor() == 3_000
            && new.refund.callback_url.as_ref().map(|u| u.as_str())
                == Some("https://shop.example/refunds")
            && new.fingerprint == Some(fingerprint(
                r#"{"amount":"30.00","callbackUrl":"https://shop.example/refunds","merchantRefundId":"r-1"}"#,
            ));
        assert!(ok, "{new:?}");
        Ok(())
    });
    let (status, body) = refund_on(mocks, &refunds_path(), BODY).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"data": {"refundId": "7e5d0000-0000-4000-8000-000000000001",
                        "operationId": op_id().to_string(), "merchantRefundId": "r-1",
                        "amount": "30.00", "currency": "RUB", "debitedAmount": "30.00",
                        "fee": "0.00", "status": 3,
                        "createdAt": "2026-11-21T10:00:00Z", "updatedAt": "2026-11-21T10:00:00Z"}})
    );
}

#[actix_web::test]
async fn a_replay_answers_the_earlier_refund_and_another_request_409() {
    let earlier = || {
        let mut done = refund(1, 3_000)
            .finish(&domain::operation::Outcome::Approve, now().plus_seconds(9))
            .expect("processing");
        done.merchant_refund_id = Some(MerchantRefundId::parse("r-1").expect("valid"));
        done
    };
    let stored = r#"{"amount":"30.00","callbackUrl":"https://shop.example/refunds","merchantRefundId":"r-1"}"#;
    let mocks = || {
        let mut mocks = with_deposit(Status::Approved);
        mocks
            .refunds
            .expect_find_by_merchant_refund_id()
            .returning(move |_, _| Ok(Some((earlier(), Some(fingerprint(stored))))));
        mocks
    };
    // The same request in another key order and spacing: a replay, with its current state.
    let reordered = r#"{"callbackUrl":"https://shop.example/refunds",  "merchantRefundId":"r-1","amount":"30.00"}"#;
    let (status, body) = refund_on(mocks(), &refunds_path(), reordered).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["status"], 1);
    assert_eq!(body["data"]["merchantRefundId"], "r-1");
    assert_eq!(
        body["data"]["refundId"],
        "7e5d0000-0000-4000-8000-000000000001"
    );

    let changed = BODY.replace("30.00", "31.00");
    let (status, body) = refund_on(mocks(), &refunds_path(), &changed).await;
    assert_eq!(status, 409, "{body}");
    assert_error(&body, "DuplicateOperation");
}

#[actix_web::test]
async fn the_body_is_judged_before_the_deposit_is_looked_up() {
    // No store expectations: reaching the domain would fail the request with a 500.
    for (path, body, fields) in [
        (refunds_path(), "{}", vec!["amount"]),
        (refunds_path(), r#"{"amount": "30."}"#, vec!["amount"]),
        (refunds_path(), r#"{"amount": 30}"#, vec!["amount"]),
        (
            refunds_path(),
            r#"{"amount": "30.00", "currency": "RUB"}"#,
            vec!["currency"],
        ),
        (
            refunds_path(),
            r#"{"amount": "0.00", "merchantRefundId": "a b", "callbackUrl": "x", "y": 1}"#,
            vec!["y", "amount", "merchantRefundId", "callbackUrl"],
        ),
        (
            "/api/v1/deposits/not-a-uuid/refunds".to_string(),
            r#"{"amount": "0"}"#,
            vec!["amount"],
        ),
    ] {
        let (status, answer) = refund_on(Mocks::new(), &path, body).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["errorCode"], "InvalidRequest");
        let named: Vec<&str> = answer["details"]
            .as_array()
            .expect("details")
            .iter()
            .filter_map(|d| d["field"].as_str())
            .collect();
        assert_eq!(named, fields, "{body}");
    }
    for body in ["", "[]", "{", r#"{"amount": "1.00", "amount": "2.00"}"#] {
        let (status, answer) = refund_on(Mocks::new(), &refunds_path(), body).await;
        assert_eq!(status, 400, "{body}");
        assert_error(&answer, "InvalidRequest");
    }
}

/// Digits that fit no deposit currency's are refused once the deposit is found: `30` of a
/// RUB deposit (and a deposit that is not the merchant's is 404 first).
#[actix_web::test]
async fn the_deposits_currency_decides_the_refunds_digits() {
    for (body, mocks, status) in [
        (r#"{"amount": "30"}"#, with_deposit(Status::Approved), 400),
        (
            r#"{"amount": "30.000"}"#,
            with_deposit(Status::Approved),
            400,
        ),
        (r#"{"amount": "30"}"#, Mocks::storing(None), 404),
    ] {
        let (answered, answer) = refund_on(mocks, &refunds_path(), body).await;
        assert_eq!(answered, status, "{body}: {answer}");
        if status == 400 {
            assert_eq!(answer["errorCode"], "InvalidRequest");
            assert_eq!(answer["details"][0]["field"], "amount", "{answer}");
            assert_eq!(
                answer["details"][0]["message"],
                "must be a decimal string with two fraction digits, greater than zero"
            );
        }
    }
}

#[actix_web::test]
async fn credentials_come_first_and_the_deposit_secret_signs() {
    let app = default_service(Mocks::new()).await;
    let bad = r#"{"amount": "30"}"#;
    for req in [
        post_v2_over(&refunds_path(), bad, b"other", DEPOSIT_SECRET),
        post_v2(&refunds_path(), BODY, WITHDRAWAL_SECRET),
        post("/api/v1/deposits/x/refunds", bad, "00"),
        // A version-1 signature, right in every other way, cannot act on an operation.
        post(&refunds_path(), BODY, &deposit_sig(BODY.as_bytes())),
    ] {
        let (status, _, body) = call(&app, req).await;
        assert_eq!(status, 401, "{body}");
        assert_error(&body, "Unauthorized");
    }
}

#[actix_web::test]
async fn refusals_after_the_body_come_in_the_contract_order() {
    let another_merchants = || {
        let theirs = deposit_builder(Status::Approved, None).merchant("m-2");
        Mocks::storing(Some(theirs.build()))
    };
    let unknown = || Mocks::storing(None);
    let a_payout = || Mocks::storing(Some(crate::test_support::withdrawal(Status::Approved)));
    // A merchantRefundId used on another request: 409 even before the deposit's state.
    let duplicate_on_a_waiting_deposit = || {
        let mut mocks = with_deposit(Status::Processing);
        mocks
            .refunds
            .expect_find_by_merchant_refund_id()
            .returning(|_, _| Ok(Some((refund(1, 100), Some(fingerprint("other"))))));
        mocks
    };
    let waiting = || without_earlier_refund(Status::Processing);
    let cases: Vec<(&str, Mocks, u16, &str)> = vec![
        ("unknown deposit", unknown(), 404, "NotFound"),
        ("another merchant's", another_merchants(), 404, "NotFound"),
        ("a withdrawal's id", a_payout(), 404, "NotFound"),
        (
            "merchantRefundId reused",
            duplicate_on_a_waiting_deposit(),
            409,
            "DuplicateOperation",
        ),
        ("not approved", waiting(), 409, "InvalidState"),
        (
            "approved meanwhile no more",
            refundable(|| Err(RefundInsertError::NotApproved)),
            409,
            "InvalidState",
        ),
        (
            "over the deposit's amount",
            refundable(|| Err(RefundInsertError::ExceedsAmount)),
            422,
            "RefundExceedsAmount",
        ),
        (
            "balance too low",
            refundable(|| Err(RefundInsertError::InsufficientBalance)),
            422,
            "InsufficientBalance",
        ),
        (
            "database down",
            refundable(|| {
                Err(RefundInsertError::Store(StoreError::Unavailable(
                    "down".into(),
                )))
            }),
            503,
            "ServiceUnavailable",
        ),
    ];
    for (name, mocks, status, code) in cases {
        let (answered, body) = refund_on(mocks, &refunds_path(), BODY).await;
        assert_eq!(answered, status, "{name}: {body}");
        assert_error(&body, code);
    }
    let (status, body) = refund_on(unknown(), "/api/v1/deposits/not-a-uuid/refunds", BODY).await;
    assert_eq!(status, 404, "a malformed deposit id names nothing: {body}");
}

#[actix_web::test]
async fn one_refund_is_read_by_its_deposit_and_its_id() {
    let mut mocks = with_deposit(Status::Approved);
    mocks.refunds.expect_refund().returning(|id| {
        let mut found = refund(1, 3_000);
        found.id = id;
        if id != crate::test_support::refund_id(1) {
            found.operation_id = domain::OperationId::from_uuid(uuid::Uuid::from_u128(9));
        }
        Ok(Some(found))
    });
    let app = default_service(mocks).await;
    let path = format!("{}/{}", refunds_path(), crate::test_support::refund_id(1));
    let (status, _, body) = call(&app, get(&path, &deposit_sig(path.as_bytes()))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["amount"], "30.00");
    assert_eq!(body["data"]["status"], 3);
    assert!(body["data"].get("merchantRefundId").is_none(), "{body}");

    let (status, _, _) = call(&app, get(&path, &withdrawal_sig(path.as_bytes()))).await;
    assert_eq!(status, 401, "refunds are read with the deposit secret");
    let of_another_deposit = format!("{}/{}", refunds_path(), crate::test_support::refund_id(2));
    let malformed = format!("{}/r-1", refunds_path());
    let malformed_deposit = format!(
        "/api/v1/deposits/x/refunds/{}",
        crate::test_support::refund_id(1)
    );
    for path in [of_another_deposit, malformed, malformed_deposit] {
        let (status, _, body) = call(&app, get(&path, &deposit_sig(path.as_bytes()))).await;
        assert_eq!(status, 404, "{path}");
        assert_error(&body, "NotFound");
    }
}
