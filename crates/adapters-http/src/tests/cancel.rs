//! The merchant's cancel through the whole app on mocks: the `{}` body, the order of the
//! checks, and the read shape it answers.

use domain::ports::{FinishError, StoreError};
use domain::testkit::finished_meanwhile;
use domain::Status;
use serde_json::json;

use super::*;
use crate::test_support::{deposit, op_id, withdrawal, Mocks};

fn cancel_path(prefix: &str) -> String {
    format!("/api/v1/{prefix}/{}/cancel", op_id())
}

/// Mocks whose store holds [`deposit`] in `status`.
fn with_deposit(status: Status) -> Mocks {
    let mut mocks = Mocks::new();
    mocks
        .store
        .expect_get()
        .returning(move |_| Ok(Some(deposit(status, None))));
    mocks
}

#[actix_web::test]
async fn a_waiting_deposit_is_declined_canceled_and_answers_the_read_shape() {
    let mut mocks = with_deposit(Status::Processing);
    mocks.store.expect_finish().returning(|completion| {
        let decline = completion.operation.decline().map(|d| d.code.as_str());
        assert_eq!(decline, Some("Canceled"));
        Ok(())
    });
    // The read shape of the canceled deposit lists its disputes: none.
    mocks
        .disputes
        .expect_disputes_of()
        .returning(|_| Ok(Vec::new()));
    let app = default_service(mocks).await;
    let path = cancel_path("deposits");
    let (status, _, body) = call(&app, post_v2(&path, "{}", DEPOSIT_SECRET)).await;
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    assert_eq!(data["status"], 2);
    assert_eq!(data["errorCode"], "Canceled");
    assert!(data["errorMessage"].is_string());
    assert_eq!(data["createdAt"], "2026-11-21T10:00:00Z");
    // A declined deposit has no refunds: none are read.
    assert_eq!(data["refundedAmount"], "0.00");
    assert_eq!(data["refunds"], json!([]));
}

#[actix_web::test]
async fn the_body_must_be_an_empty_object_before_anything_is_looked_up() {
    // No store expectations: reaching the domain would fail the request with a 500.
    let app = default_service(Mocks::new()).await;
    for prefix in ["deposits", "withdrawals"] {
        let secret = match prefix {
            "deposits" => DEPOSIT_SECRET,
            _ => WITHDRAWAL_SECRET,
        };
        let path = cancel_path(prefix);
        let (status, _, body) = call(&app, post_v2(&path, "", secret)).await;
        assert_eq!(status, 400, "{body}");
        assert_error(&body, "InvalidRequest");
        assert_eq!(body["errorMessage"], "body: is empty");
        for text in ["[]", "null", "{"] {
            let (status, _, body) = call(&app, post_v2(&path, text, secret)).await;
            assert_eq!(status, 400, "{text}");
            assert_error(&body, "InvalidRequest");
        }
        let keyed = r#"{"reason": "changed my mind"}"#;
        let (status, _, body) = call(&app, post_v2(&path, keyed, secret)).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(
            body["details"],
            json!([{"field": "reason", "message": "is not a known field"}])
        );
        let malformed = format!("/api/v1/{prefix}/x/cancel");
        let (status, _, _) = call(&app, post_v2(&malformed, keyed, secret)).await;
        assert_eq!(status, 400, "the body before the path id");
        let (status, _, body) = call(&app, post_v2(&malformed, "{}", secret)).await;
        assert_eq!(status, 404, "{body}");
        assert_error(&body, "NotFound");
    }
}

#[actix_web::test]
async fn each_direction_is_canceled_with_its_own_secret() {
    let app = default_service(Mocks::new()).await;
    for (path, secret) in [
        (cancel_path("deposits"), WITHDRAWAL_SECRET),
        (cancel_path("withdrawals"), DEPOSIT_SECRET),
    ] {
        let (status, _, body) = call(&app, post_v2(&path, r#"{"x": 1}"#, secret)).await;
        assert_eq!(status, 401, "{path}");
        assert_error(&body, "Unauthorized");
    }
}

#[actix_web::test]
async fn refusals_map_to_404_409_and_503() {
    let final_payout = || Mocks::storing(Some(withdrawal(Status::Approved)));
    let unknown = || Mocks::storing(None);
    // Another writer finished it first: the stored, final state stands.
    let finished_meanwhile = || {
        let mut mocks = Mocks::new();
        finished_meanwhile(&mut mocks.store, Status::Approved, |status| {
            deposit(status, None)
        });
        mocks
            .store
            .expect_finish()
            .returning(|_| Err(FinishError::NotProcessing));
        mocks
    };
    let database_down = || {
        let mut mocks = with_deposit(Status::Processing);
        mocks
            .store
            .expect_finish()
            .returning(|_| Err(FinishError::Store(StoreError::Unavailable("down".into()))));
        mocks
    };
    let cases: Vec<(&str, &str, Mocks, u16, &str)> = vec![
        (
            "deposits",
            "final",
            with_deposit(Status::Declined),
            409,
            "InvalidState",
        ),
        (
            "withdrawals",
            "final payout",
            final_payout(),
            409,
            "InvalidState",
        ),
        (
            "deposits",
            "finished meanwhile",
            finished_meanwhile(),
            409,
            "InvalidState",
        ),
        ("deposits", "unknown", unknown(), 404, "NotFound"),
        (
            "withdrawals",
            "a deposit's id",
            with_deposit(Status::Processing),
            404,
            "NotFound",
        ),
        (
            "deposits",
            "database down",
            database_down(),
            503,
            "ServiceUnavailable",
        ),
    ];
    for (prefix, name, mocks, status, code) in cases {
        let app = default_service(mocks).await;
        let secret = match prefix {
            "deposits" => DEPOSIT_SECRET,
            _ => WITHDRAWAL_SECRET,
        };
        let (answered, _, body) = call(&app, post_v2(&cancel_path(prefix), "{}", secret)).await;
        assert_eq!(answered, status, "{name}: {body}");
        assert_error(&body, code);
    }
}

#[test]
fn cancel_errors_map_as_the_contract_says() {
    use domain::service::{CancelError, CompleteError};
    let code = |error: CancelError| {
        let error = crate::ApiError::from(error);
        (
            actix_web::ResponseError::status_code(&error).as_u16(),
            error.code(),
        )
    };
    assert_eq!(code(CancelError::NotFound), (404, "NotFound"));
    assert_eq!(
        code(CancelError::Final(Box::new(deposit(
            Status::Approved,
            None
        )))),
        (409, "InvalidState")
    );
    assert_eq!(
        code(CancelError::Unavailable("the acquirer timed out".into())),
        (503, "ServiceUnavailable")
    );
    assert_eq!(code(CancelError::NotAtAcquirer), (500, "InternalError"));
    assert_eq!(
        code(CancelError::Complete(CompleteError::InvalidState)),
        (409, "InvalidState")
    );
}
