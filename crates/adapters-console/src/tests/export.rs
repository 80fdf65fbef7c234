//! The CSV export end to end through its handler: audited first, then streamed page after
//! page with the header, CRLF line ends and neutralised, quoted cells.

use actix_web::http::header;
use domain::console::{Cursor, Listed, Role, CSV_HEADER};
use domain::ports::StoreError;
use domain::Status;
use mockall::Sequence;

use super::*;
use crate::csv::EXPORT_PAGE;

/// `n` approved card deposits, newest first, one second apart, numbered from `first`; the
/// first of them carries `moid` as its merchantOperationId.
fn page(first: u128, n: u128, moid: &str) -> Vec<Listed> {
    (0..n)
        .map(|i| {
            let builder = testkit::fixtures::deposit_builder(Status::Approved, None)
                .id(domain::testkit::id(first + i))
                .created(at(-((first + i) as i64)))
                .updated(now());
            let builder = if i == 0 {
                builder.merchant_operation_id(moid)
            } else {
                builder
            };
            Listed {
                operation: builder.build(),
                refunded: if i == 0 { 2_550 } else { 0 },
            }
        })
        .collect()
}

#[actix_web::test]
async fn the_export_is_audited_then_streams_every_page_as_csv() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    let mut order = Sequence::new();
    fixture
        .console
        .expect_audit()
        .withf(|entry| {
            entry.actor.as_str() == "operator:alice"
                && entry.action == "operations.export"
                && entry.target == "direction=deposit&status=1"
                && entry.before.is_none()
                && entry.after.is_none()
        })
        .times(1)
        .in_sequence(&mut order)
        .returning(|_| Ok(()));
    let first = page(1, u128::from(EXPORT_PAGE), "=SUM(A1:A9)");
    let last = first.last().map(|l| Cursor {
        created_at: l.operation.created_at(),
        id: l.operation.id(),
    });
    fixture
        .console
        .expect_search_operations()
        .withf(|filter, after, limit| {
            filter.status == Some(Status::Approved)
                && filter.direction == Some(domain::Direction::Deposit)
                && after.is_none()
                && *limit == EXPORT_PAGE
        })
        .times(1)
        .in_sequence(&mut order)
        .returning(move |_, _, _| Ok(first.clone()));
    fixture
        .console
        .expect_search_operations()
        .withf(move |_, after, limit| after.copied() == last && *limit == EXPORT_PAGE)
        .times(1)
        .in_sequence(&mut order)
        .returning(|_, _, _| Ok(page(1000, 1, r#"x,"y""#)));
    let app = fixture.app().await;
    let (status, headers, body) = call(
        &app,
        get("/admin/operations.csv?status=1&direction=deposit"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        header_of(&headers, header::CONTENT_TYPE),
        "text/csv; charset=utf-8"
    );
    assert_eq!(
        header_of(&headers, header::CONTENT_DISPOSITION),
        r#"attachment; filename="operations.csv""#
    );
    assert!(!body.starts_with('\u{feff}'), "no byte order mark");
    assert!(
        body.starts_with(&format!("{CSV_HEADER}\r\n")),
        "the header first"
    );
    assert!(body.ends_with("\r\n"));
    let lines: Vec<&str> = body.split_terminator("\r\n").collect();
    assert_eq!(
        lines.len(),
        1 + EXPORT_PAGE as usize + 1,
        "the header and both pages, no totals"
    );
    assert!(!body.replace("\r\n", "").contains('\n'), "CRLF only");
    let first_row = lines[1];
    assert!(
        first_row.starts_with(&format!(
            "{},m-1,'=SUM(A1:A9),deposit,card,1,,100.00,RUB,25.50,",
            domain::testkit::id(1)
        )),
        "a formula is neutralised: {first_row}"
    );
    assert!(
        first_row.ends_with(",sandbox,2026-11-21T09:59:59Z,2026-11-21T10:00:00Z"),
        "{first_row}"
    );
    let last_row = lines[lines.len() - 1];
    assert!(
        last_row.starts_with(&format!(
            r#"{},m-1,"x,""y""",deposit"#,
            domain::testkit::id(1000)
        )),
        "a comma and quotes are quoted: {last_row}"
    );
}

#[actix_web::test]
async fn an_export_with_a_bad_filter_is_400_and_neither_audited_nor_searched() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    fixture.audits_nothing();
    fixture.console.expect_search_operations().never();
    let app = fixture.app().await;
    for query in ["status=5", "limit=10", "after=00", "method=cash"] {
        let (status, _, _) = call(&app, get(&format!("/admin/operations.csv?{query}"))).await;
        assert_eq!(status, 400, "{query}");
    }
}

#[actix_web::test]
async fn a_store_failure_midway_breaks_the_download_off() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    fixture.console.expect_audit().returning(|_| Ok(()));
    let first = page(1, u128::from(EXPORT_PAGE), "order-1");
    fixture
        .console
        .expect_search_operations()
        .withf(|_, after, _| after.is_none())
        .returning(move |_, _, _| Ok(first.clone()));
    fixture
        .console
        .expect_search_operations()
        .withf(|_, after, _| after.is_some())
        .returning(|_, _, _| Err(StoreError::Other(anyhow::anyhow!("connection reset"))));
    let app = fixture.app().await;
    let res = actix_web::test::call_service(&app, get("/admin/operations.csv").to_request()).await;
    assert_eq!(
        res.status().as_u16(),
        200,
        "the answer started before the failure"
    );
    let body = actix_web::body::to_bytes(res.into_body()).await;
    assert!(
        body.is_err(),
        "the body ends in an error, not as a complete file"
    );
}

#[actix_web::test]
async fn pages_read_from_a_replica_say_how_far_behind_it_is() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    fixture.ledger = domain::ports::MockLedgerReader::new();
    fixture
        .ledger
        .expect_read_lag()
        .returning(|| Ok(Some(1_500)));
    fixture
        .console
        .expect_search_operations()
        .returning(|_, _, _| Ok(page(1, 2, "m")));
    let app = fixture.app().await;
    let (status, _, body) = call(&app, get("/admin/operations")).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("Read from the replica") && body.contains("1500 ms"),
        "{body}"
    );
}

#[actix_web::test]
async fn pages_read_from_the_primary_say_nothing_of_a_replica() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    fixture
        .console
        .expect_search_operations()
        .returning(|_, _, _| Ok(page(1, 2, "m")));
    let app = fixture.app().await;
    let (status, _, body) = call(&app, get("/admin/operations")).await;
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains("replica"), "{body}");
}
