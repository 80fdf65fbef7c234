//! Discrepancies on the operation's page, the admin's "Mark resolved" (role, CSRF, audit),
//! and manual entries that name an operation.

use domain::console::{Actor, EventDetail, OperationEvent, Role};
use domain::discrepancy::{RecordedDiscrepancy, Resolution, ResolutionNote, Resolved};
use domain::ledger::{Balance, ManualEntry};
use domain::Currency;
use domain::Status;

use super::*;
use testkit::fixtures::{op_id, withdrawal, MERCHANT};

const RESOLVE: &str = "/admin/discrepancies/4/resolve";

fn open(id: i64) -> RecordedDiscrepancy {
    RecordedDiscrepancy {
        id,
        operation_id: op_id(),
        provider: "acq-1".into(),
        reported: "succeeded".into(),
        at: at(-600),
        resolution: None,
    }
}

fn resolved(id: i64, note: &str, entry: Option<i64>) -> RecordedDiscrepancy {
    RecordedDiscrepancy {
        resolution: Some(Resolution {
            at: at(-60),
            actor: Actor::cli("ops"),
            note: ResolutionNote::from_stored(note),
            ledger_entry: entry,
        }),
        ..open(id)
    }
}

/// The operation's page of `role`, for a withdrawal with an open and a resolved discrepancy.
async fn operation_page(role: Role) -> String {
    let mut fixture = Fixture::new().signed_in(role);
    fixture.shows_operation(withdrawal(Status::Declined));
    fixture.no_callbacks();
    fixture
        .operator
        .expect_operation_discrepancies()
        .returning(|_| Ok(vec![resolved(3, "payer refunded", Some(41)), open(4)]));
    fixture.console.expect_operation_events().returning(|_| {
        Ok(vec![OperationEvent {
            id: 9,
            operation_id: op_id(),
            refund_id: None,
            at: at(-60),
            detail: EventDetail::DiscrepancyResolved {
                discrepancy: 3,
                actor: "cli:ops".into(),
                note: "payer refunded".into(),
                ledger_entry: Some(41),
            },
        }])
    });
    let app = fixture.app().await;
    let (status, _, body) = call(&app, get(&format!("/admin/operations/{}", op_id()))).await;
    assert_eq!(status, 200, "{body}");
    body
}

#[actix_web::test]
async fn the_operation_page_shows_each_discrepancy_and_only_an_admin_may_resolve_one() {
    let page = operation_page(Role::Admin).await;
    assert!(page.contains("Discrepancies"), "{page}");
    assert!(page.contains("payer refunded") && page.contains("cli:ops"));
    assert!(page.contains("ledger entry #41"), "{page}");
    assert!(page.contains("Discrepancy resolved"), "on the timeline");
    assert!(
        page.contains(&format!(r#"action="{RESOLVE}""#)),
        "the open one has a form: {page}"
    );
    assert!(
        !page.contains("/admin/discrepancies/3/resolve"),
        "the resolved one has none"
    );
    assert!(page.contains(&format!(r#"name="csrf" value="{CSRF}""#)));
    for role in [Role::Viewer, Role::Operator] {
        let page = operation_page(role).await;
        assert!(page.contains(">open<"), "{role} sees it open: {page}");
        assert!(!page.contains(RESOLVE), "{role} gets no form");
    }
}

#[actix_web::test]
async fn an_admin_resolves_a_discrepancy_with_a_note_and_it_is_audited() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture
        .operator
        .expect_resolve_discrepancy()
        .withf(|id, resolution| {
            *id == 4
                && resolution.actor.as_str() == "operator:alice"
                && resolution.note.as_str() == "settled with the bank"
                && resolution.at == now()
                && resolution.ledger_entry.is_none()
        })
        .times(1)
        .returning(|_, _| Ok(Resolved::Now(resolved(4, "settled with the bank", None))));
    fixture.audits_once(|entry| {
        audited(entry, "discrepancy.resolve", "4")
            && entry.before.as_deref() == Some(r#"{"resolved":false}"#)
            && entry.after.as_deref()
                == Some(
                    &format!(
                        r#"{{"note":"settled with the bank","operationId":"{}","resolved":true}}"#,
                        op_id()
                    )[..],
                )
    });
    let app = fixture.app().await;
    let form = [("note", "  settled with the bank ")];
    let back = operation_flash("done=discrepancy_resolved");
    assert_redirects(&app, post(RESOLVE, &form), &back).await;
}

#[actix_web::test]
async fn a_viewer_or_operator_cannot_resolve_and_nothing_is_read_or_written() {
    for role in [Role::Viewer, Role::Operator] {
        let mut fixture = Fixture::new().signed_in(role);
        fixture.operator.expect_resolve_discrepancy().never();
        fixture.audits_nothing();
        let app = fixture.app().await;
        let (status, _, body) = call(&app, post(RESOLVE, &[("note", "mine")])).await;
        assert_needs_admin(role, status, &body);
    }
}

#[actix_web::test]
async fn resolving_without_the_sessions_csrf_token_is_forbidden_and_writes_nothing() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture.operator.expect_resolve_discrepancy().never();
    fixture.audits_nothing();
    let app = fixture.app().await;
    let requests = [
        post_bare(RESOLVE).set_form([("note", "x")]),
        post_bare(RESOLVE).set_form([("csrf", &CSRF.replace('c', "d")[..]), ("note", "x")]),
        post_bare(RESOLVE).set_form([("csrf", CSRF), ("csrf", CSRF), ("note", "x")]),
    ];
    for request in requests {
        let (status, _, body) = call(&app, request).await;
        assert_eq!(status, 403, "{body}");
    }
}

#[actix_web::test]
async fn a_resolved_unknown_or_unnoted_discrepancy_is_refused_and_not_audited() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture
        .operator
        .expect_resolve_discrepancy()
        .withf(|id, _| *id == 4)
        .returning(|_, _| Ok(Resolved::Already(resolved(4, "earlier", None))));
    fixture
        .operator
        .expect_resolve_discrepancy()
        .withf(|id, _| *id == 5)
        .returning(|_, _| Ok(Resolved::NotFound));
    fixture.audits_nothing();
    let app = fixture.app().await;

    let again = post(RESOLVE, &[("note", "again")]);
    assert_redirects(&app, again, &operation_flash("error=already_resolved")).await;
    let unknown = "/admin/discrepancies/5/resolve";
    assert_eq!(call(&app, post(unknown, &[("note", "x")])).await.0, 404);
    let malformed = "/admin/discrepancies/five/resolve";
    assert_eq!(call(&app, post(malformed, &[("note", "x")])).await.0, 404);
    let (status, _, body) = call(&app, post(RESOLVE, &[("note", "  ")])).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("note:"), "{body}");
}

#[actix_web::test]
async fn a_credit_naming_an_operation_resolves_its_discrepancies_and_says_so_in_the_audit() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture.finds_merchant();
    fixture
        .mocks
        .store
        .expect_get()
        .returning(|_| Ok(Some(withdrawal(Status::Declined))));
    fixture
        .operator
        .expect_apply_manual_move()
        .withf(|adjustment, _| adjustment.operation_id == Some(op_id()))
        .times(1)
        .returning(|_, _| {
            Ok(ManualEntry {
                balance: Balance {
                    currency: Currency::RUB,
                    available: 10_000,
                    held: 0,
                },
                entry_id: 41,
                resolved: vec![3, 4],
            })
        });
    fixture.audits_once(|entry| {
        audited(entry, "balance.credit", MERCHANT)
            && entry.after.as_deref().is_some_and(|after| {
                after.contains(&format!(r#""operationId":"{}""#, op_id()))
                    && after.contains(r#""resolvedDiscrepancies":[3,4]"#)
                    && after.contains(r#""ledgerEntry":41"#)
            })
    });
    let app = fixture.app().await;
    let id = op_id().to_string();
    let form = [
        ("kind", "credit"),
        ("amount", "100.00"),
        ("currency", "RUB"),
        ("reason", "payout failed at the bank"),
        ("operation", &id[..]),
    ];
    assert_balance_changed(&app, &form).await;
}

#[actix_web::test]
async fn a_credit_naming_an_unknown_or_malformed_operation_moves_nothing() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture.finds_merchant();
    fixture.mocks.store.expect_get().returning(|_| Ok(None));
    fixture.operator.expect_apply_manual_move().never();
    fixture.audits_nothing();
    let app = fixture.app().await;
    let id = op_id().to_string();
    let form = |operation| {
        vec![
            ("kind", "credit"),
            ("amount", "1.00"),
            ("currency", "RUB"),
            ("reason", "x"),
            ("operation", operation),
        ]
    };
    let unknown = post("/admin/merchants/m-1/balance", &form(&id[..]));
    assert_redirects(&app, unknown, "/admin/merchants?error=unknown_operation").await;
    let (status, _, body) = call(
        &app,
        post("/admin/merchants/m-1/balance", &form("not-a-uuid")),
    )
    .await;
    assert_eq!(status, 400);
    assert!(body.contains("operation:"), "{body}");
}
