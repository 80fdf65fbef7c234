//! The disputes pages: the list with its filters, one dispute with its files, and the
//! decision on an open appeal (operators and admins, audited; viewers refused).

use domain::console::Role;
use domain::dispute::{AppealReason, Dispute, DisputeFile, DisputeStatus, FileType};
use domain::testkit::{appeal_of, dispute_id};

use super::*;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

fn open_appeal() -> Dispute {
    appeal_of(1, "100.00", AppealReason::PaidNotCredited)
}

fn page() -> String {
    format!("/admin/disputes/{}", dispute_id(1))
}

/// The store holds the open appeal (with a PNG receipt) and the disputed deposit, declined.
fn holds_the_appeal(fixture: &mut Fixture) {
    let disputes = &mut fixture.mocks.disputes;
    disputes
        .expect_dispute()
        .returning(|_| Ok(Some(open_appeal())));
    disputes.expect_dispute_files().returning(|_| {
        Ok(vec![DisputeFile::new(
            "receipt.png",
            FileType::Png,
            PNG.to_vec(),
        )
        .expect("a PNG")])
    });
    let deposit = testkit::fixtures::deposit(domain::Status::Declined, None);
    fixture
        .mocks
        .store
        .expect_get()
        .returning(move |_| Ok(Some(deposit.clone())));
}

#[actix_web::test]
async fn the_list_filters_by_status_and_kind_and_shows_the_deadline_column() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    fixture
        .mocks
        .disputes
        .expect_list_disputes()
        .withf(|f| f.status == Some(DisputeStatus::Open) && f.merchant_id.is_none())
        .times(1)
        .returning(|_| Ok(vec![open_appeal()]));
    let app = fixture.app().await;
    let (status, _, body) = call(&app, get("/admin/disputes?status=open&kind=appeal")).await;
    assert_eq!(status, 200, "{body}");
    for shown in ["paid_not_credited", "100.00", "Evidence due by", &page()] {
        assert!(body.contains(shown), "{shown} in {body}");
    }
    let (status, _, body) = call(&app, get("/admin/disputes?status=closed")).await;
    assert_eq!(status, 400, "{body}");
}

#[actix_web::test]
async fn a_viewer_sees_the_appeal_and_its_receipt_without_the_forms() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    holds_the_appeal(&mut fixture);
    let app = fixture.app().await;
    let (status, _, body) = call(&app, get(&page())).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("receipt.png"), "{body}");
    assert!(
        !body.contains("/accept"),
        "no decision for a viewer: {body}"
    );
    let (status, headers, bytes) = call(&app, get(&format!("{}/files/1", page()))).await;
    assert_eq!(status, 200);
    assert_eq!(header_of(&headers, header::CONTENT_TYPE), "image/png");
    assert_eq!(
        header_of(&headers, header::CONTENT_DISPOSITION),
        format!(r#"attachment; filename="dispute-{}-1.png""#, dispute_id(1))
    );
    // (The test client reads the body as text: the PNG's first byte is not UTF-8.)
    assert!(bytes.ends_with("PNG\r\n\u{1a}\n\0\0\0\rIHDR"), "{bytes:?}");
    let (status, _, _) = call(&app, get(&format!("{}/files/2", page()))).await;
    assert_eq!(status, 404);
}

#[actix_web::test]
async fn an_operator_accepts_an_open_appeal_once_audited_and_a_viewer_may_not() {
    let mut fixture = Fixture::new().signed_in(Role::Operator);
    holds_the_appeal(&mut fixture);
    fixture
        .mocks
        .disputes
        .expect_change_dispute()
        .withf(|change| {
            change.dispute.status == DisputeStatus::Accepted
                && change.dispute.amount.minor() == 5_000
                && change.moves.len() == 1
        })
        .times(1)
        .returning(|_| Ok(()));
    fixture.audits_once(|entry| audited(entry, "dispute.accept", &dispute_id(1).to_string()));
    let app = fixture.app().await;
    let form = [("amount", "50.00"), ("reason", "bank statement checked")];
    let (status, headers, _) = call(&app, post(&format!("{}/accept", page()), &form)).await;
    assert_eq!(status, 303);
    assert!(
        header_of(&headers, header::LOCATION).ends_with("?done=dispute_decided"),
        "{headers:?}"
    );

    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    fixture.mocks.disputes.expect_change_dispute().never();
    fixture.audits_nothing();
    let app = fixture.app().await;
    let (status, _, _) = call(
        &app,
        post(&format!("{}/reject", page()), &[("reason", "no")]),
    )
    .await;
    assert_eq!(status, 403);
}

#[actix_web::test]
async fn a_reason_is_required_and_a_decided_appeal_is_said_to_be_so() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    holds_the_appeal(&mut fixture);
    fixture
        .mocks
        .disputes
        .expect_change_dispute()
        .times(1)
        .returning(|_| Err(domain::ports::DisputeChangeError::Decided));
    fixture.audits_nothing();
    let app = fixture.app().await;
    let (status, _, _) = call(
        &app,
        post(&format!("{}/reject", page()), &[("reason", " ")]),
    )
    .await;
    assert_eq!(status, 400);
    let (status, headers, _) = call(
        &app,
        post(&format!("{}/reject", page()), &[("reason", "duplicate")]),
    )
    .await;
    assert_eq!(status, 303);
    assert!(
        header_of(&headers, header::LOCATION).ends_with("?error=dispute_not_open"),
        "{headers:?}"
    );
}
