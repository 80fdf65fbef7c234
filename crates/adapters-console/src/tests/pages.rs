//! The pages: the overview from counters only, the operations search and its paging, one
//! operation, the languages and the error pages.

use actix_web::http::header;
use domain::circuit::{Circuit, CircuitState};
use domain::console::{
    Actor, Cursor, EventDetail, Health, LedgerCheck, Listed, MinuteCount, OperationEvent, Role,
    PAGE_DEFAULT,
};
use domain::ports::ProcessReport;
use domain::story::CallbackDelivery;
use domain::{Currency, Direction, PaymentMethod, Status};

use super::*;
use testkit::fixtures::{op_id, withdrawal, withdrawal_builder};

/// A counter of `count` card deposits in `status` created `ago` minutes before now.
fn count(ago: i64, status: Status, count: i64) -> MinuteCount {
    MinuteCount {
        minute: now().millis().div_euclid(60_000) - ago,
        direction: Direction::Deposit,
        method: PaymentMethod::Card,
        status,
        currency: Currency::RUB,
        count,
        amount: count * 10_000,
    }
}

#[actix_web::test]
async fn the_overview_uses_counters_and_health_only_and_draws_its_charts() {
    let mut fixture = Fixture::new().signed_in(Role::Operator);
    fixture.zone = Zone::parse("Europe/Moscow").expect("known");
    // now() is 2026-11-21T10:00:00Z, 13:00 in Moscow: today began at 21:00 UTC the day
    // before, later than 24 hours ago, so the counters are read from 24 hours ago.
    fixture
        .console
        .expect_minute_counts()
        .withf(|from, to| *from == at(-86_400) && *to == at(60))
        .times(1)
        .returning(|_, _| {
            Ok(vec![
                count(0, Status::Approved, 3),
                count(1, Status::Declined, 1),
                count(5, Status::Processing, 2),
            ])
        });
    fixture
        .console
        .expect_health()
        .withf(|stuck_before| *stuck_before == at(-86_400))
        .times(1)
        .returning(|_| {
            Ok(Health {
                callbacks_pending: 4,
                callbacks_held: 3,
                callbacks_failed: 2,
                stuck_processing: 1,
                open_discrepancies: 0,
                last_check: Some(LedgerCheck {
                    at: at(-3600),
                    actor: Actor::cli("ops"),
                    mismatches: 0,
                }),
            })
        });
    // Today's fee income, since today's start in Moscow.
    fixture
        .console
        .expect_fee_income()
        .withf(|since| *since == at(-13 * 3600))
        .times(1)
        .returning(|_| {
            let usd = Currency::parse("USD").expect("USD");
            Ok(vec![(Currency::RUB, 15_00), (usd, 3_00)])
        });
    fixture.console.expect_search_operations().never();
    let app = fixture.app().await;
    let (status, headers, body) = call(&app, get("/admin")).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(
            r#"<div class="n">15.00 RUB, 3.00 USD</div><div class="l">fee income today</div>"#
        ),
        "today's fee income per currency: {body}"
    );
    assert_eq!(
        header_of(&headers, header::CONTENT_TYPE),
        "text/html; charset=utf-8"
    );
    assert!(body.contains("Europe/Moscow"), "the zone is named");
    assert!(body.contains("<svg"), "charts are inline SVG");
    assert!(!body.contains("<script"), "no script");
    assert_eq!(
        body.matches(r#"<g class="bar"><title>"#).count(),
        60,
        "60 bars"
    );
    assert!(
        body.contains("<polyline") || body.contains("<circle"),
        "an approval line"
    );
    assert!(body.contains("75.0%"), "3 approved of 4 final: {body}");
    assert!(body.contains("300.00 RUB"), "today's approved sum");
    assert!(
        body.contains("2026-11-21 12:00:00"),
        "the last check in Moscow time"
    );
    assert!(body.contains("cli:ops"));
    assert!(
        body.contains(
            r#"<div class="n">3</div><div class="l">callbacks held (merchant disabled)</div>"#
        ),
        "held callbacks are counted: {body}"
    );
    assert!(
        body.contains(r#"action="/admin/ledger/verify""#),
        "an operator may verify"
    );
    assert!(
        body.contains("alice") && body.contains("operator"),
        "who is signed in"
    );
    assert!(
        body.contains(r#"action="/admin/logout""#),
        "a sign-out button"
    );
    for nav in [
        "/admin/operations",
        "/admin/callbacks",
        "/admin/merchants",
        "/admin/tariffs",
        "/admin/statements",
        "/admin/routes",
        "/admin/providers",
        "/admin/audit",
    ] {
        assert!(body.contains(&format!(r#"href="{nav}""#)), "{nav}");
    }
}

#[actix_web::test]
async fn pages_speak_russian_when_asked() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    fixture
        .console
        .expect_minute_counts()
        .returning(|_, _| Ok(Vec::new()));
    fixture
        .console
        .expect_health()
        .returning(|_| Ok(Health::default()));
    fixture
        .console
        .expect_fee_income()
        .returning(|_| Ok(Vec::new()));
    let app = fixture.app().await;
    let req = get("/admin").insert_header((header::ACCEPT_LANGUAGE, "ru-RU,ru;q=0.9"));
    let (status, headers, body) = call(&app, req).await;
    assert_eq!(status, 200);
    assert!(
        body.contains(r#"<div class="n">—</div><div class="l">доход от комиссий сегодня</div>"#),
        "no fee income today: {body}"
    );
    assert_eq!(header_of(&headers, header::CONTENT_LANGUAGE), "ru");
    assert!(body.contains("Обзор") && body.contains("Выйти"), "{body}");
    assert!(body.contains("наблюдатель"));
    assert!(
        !body.contains(r#"action="/admin/ledger/verify""#),
        "a viewer has no verify button"
    );
}

/// `n` processing card deposits, the newest first, one second apart.
fn listed(n: u128) -> Vec<Listed> {
    (0..n)
        .map(|i| Listed {
            operation: testkit::fixtures::deposit_builder(Status::Processing, None)
                .id(domain::testkit::id(100 + i))
                .created(at(-(i as i64)))
                .build(),
            refunded: 0,
        })
        .collect()
}

#[actix_web::test]
async fn a_bad_limit_or_filter_is_400_with_its_message_and_searches_nothing() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    fixture.console.expect_search_operations().never();
    let app = fixture.app().await;
    for (query, message) in [
        ("limit=0", "limit: must be a whole number from 1 to 200"),
        ("limit=201", "limit: must be a whole number from 1 to 200"),
        ("limit=lots", "limit: must be a whole number from 1 to 200"),
        ("status=7", "status: must be 1, 2 or 3"),
        ("direction=up", "direction: must be deposit or withdrawal"),
        ("after=zz", "after: is not a cursor this console made"),
        ("from=2026-02-30", "from:"),
        ("sort=asc", "sort: is not a filter"),
    ] {
        let (status, _, body) = call(&app, get(&format!("/admin/operations?{query}"))).await;
        assert_eq!(status, 400, "{query}");
        assert!(body.contains(message), "{query}: {body}");
    }
}

#[actix_web::test]
async fn the_next_page_link_carries_the_filters_and_the_cursor() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    let page = listed(2);
    let last = Cursor {
        created_at: page[1].operation.created_at(),
        id: page[1].operation.id(),
    };
    fixture
        .console
        .expect_search_operations()
        .withf(|filter, after, limit| {
            filter.status == Some(Status::Processing)
                && filter.merchant.as_ref().map(|m| m.as_str()) == Some("m-1")
                && after.is_none()
                && *limit == 2
        })
        .times(1)
        .returning(move |_, _, _| Ok(page.clone()));
    let cursor_token = last.encode();
    fixture
        .console
        .expect_search_operations()
        .withf(move |_, after, limit| after.copied() == Some(last) && *limit == 2)
        .times(1)
        .returning(|_, _, _| Ok(Vec::new()));
    let app = fixture.app().await;
    let (status, _, body) =
        call(&app, get("/admin/operations?merchant=m-1&status=3&limit=2")).await;
    assert_eq!(status, 200, "{body}");
    let next =
        format!("/admin/operations?status=3&amp;merchant=m-1&amp;limit=2&amp;after={cursor_token}");
    assert!(body.contains(&next), "{body}");
    assert!(
        body.contains("/admin/operations.csv?status=3&amp;merchant=m-1"),
        "the export keeps the filters"
    );
    assert!(body.contains(&domain::testkit::id(101).to_string()));
    // The next page: empty, with no further link.
    let (status, _, body) = call(&app, get(&next.replace("&amp;", "&"))).await;
    assert_eq!(status, 200);
    assert!(!body.contains("after="), "{body}");
    assert!(body.contains("Nothing found."));
}

#[actix_web::test]
async fn a_short_page_has_no_next_link_and_the_default_page_is_50() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    fixture
        .console
        .expect_search_operations()
        .withf(|filter, after, limit| {
            *filter == Default::default() && after.is_none() && *limit == PAGE_DEFAULT
        })
        .returning(|_, _, _| Ok(listed(3)));
    let app = fixture.app().await;
    let (status, _, body) = call(&app, get("/admin/operations")).await;
    assert_eq!(status, 200);
    assert!(!body.contains("after="));
    assert_eq!(body.matches("<tr>").count(), 4, "a header and three rows");
}

#[actix_web::test]
async fn an_operation_shows_the_apis_view_its_timeline_and_callbacks() {
    let mut fixture = Fixture::new().signed_in(Role::Operator);
    let op = withdrawal_builder(Status::Declined)
        .provider("acq-1")
        .build();
    let id = op.id();
    fixture.shows_operation(op);
    fixture
        .operator
        .expect_operation_discrepancies()
        .returning(|_| Ok(Vec::new()));
    fixture
        .operator
        .expect_operation_callbacks()
        .returning(|_| {
            Ok(vec![CallbackDelivery {
                refund_id: None,
                dispute: None,
                url: "https://shop.example/cb".into(),
                state: domain::callback::CallbackState::Failed,
                attempts: 9,
                next_attempt_at: None,
                last_error: Some("HTTP 500".into()),
                queued_at: at(-600),
                updated_at: at(-60),
                deliveries: Vec::new(),
            }])
        });
    fixture
        .console
        .expect_operation_events()
        .returning(move |_| {
            Ok(vec![
                OperationEvent {
                    id: 1,
                    operation_id: id,
                    refund_id: None,
                    at: at(-900),
                    detail: EventDetail::Created { status: 3 },
                },
                OperationEvent {
                    id: 2,
                    operation_id: id,
                    refund_id: None,
                    at: at(-800),
                    detail: EventDetail::Status {
                        from: 3,
                        to: 2,
                        error_code: Some("ProviderDeclined".into()),
                        action: None,
                    },
                },
                OperationEvent {
                    id: 3,
                    operation_id: id,
                    refund_id: None,
                    at: at(-700),
                    detail: EventDetail::Callback {
                        refund_id: None,
                        dispute_id: None,
                        attempt: 1,
                        http_status: Some(500),
                        latency_ms: 42,
                        error: Some("HTTP 500".into()),
                    },
                },
                OperationEvent {
                    id: 4,
                    operation_id: id,
                    refund_id: None,
                    at: at(-650),
                    detail: EventDetail::Dispute {
                        dispute_id: APPEAL.into(),
                        dispute_kind: "appeal".into(),
                        status: "accepted".into(),
                        amount: 98_00,
                        evidence: None,
                    },
                },
                OperationEvent {
                    id: 5,
                    operation_id: id,
                    refund_id: None,
                    at: at(-640),
                    detail: EventDetail::Callback {
                        refund_id: None,
                        dispute_id: Some(APPEAL.into()),
                        attempt: 1,
                        http_status: Some(200),
                        latency_ms: 17,
                        error: None,
                    },
                },
            ])
        });
    let app = fixture.app().await;
    let (status, _, body) = call(&app, get(&format!("/admin/operations/{id}"))).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(&format!(
            "<a class=\"mono\" href=\"/admin/disputes/{APPEAL}\">"
        )),
        "the appeal's events link to its page: {body}"
    );
    assert!(
        body.contains("98.00") && body.contains(">accepted<"),
        "the appeal's status and amount"
    );
    assert!(
        body.matches(&format!("/admin/disputes/{APPEAL}")).count() >= 2,
        "the dispute's callback attempt names the dispute"
    );
    assert!(
        body.contains("424242******4242"),
        "the masked card number of the requisites"
    );
    assert!(body.contains("order-1"), "merchantOperationId");
    assert!(
        body.contains("HTTP 500") && body.contains("42 ms"),
        "the callback attempt"
    );
    assert!(body.contains("ProviderDeclined"));
    assert!(
        body.contains("2026-11-21 09:45:00"),
        "event times in the zone"
    );
    assert!(
        body.contains("/callback-retry"),
        "a failed callback can be retried"
    );
    assert!(
        !body.contains("/cancel\""),
        "a final operation has no cancel"
    );
}

/// A dispute id, as the timeline stores it.
const APPEAL: &str = "0b9c4a52-7d1e-4f7a-9a57-6c2e8f1d3b10";

#[actix_web::test]
async fn an_unknown_or_malformed_operation_is_404() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    fixture.mocks.store.expect_get().returning(|_| Ok(None));
    let app = fixture.app().await;
    let (status, _, body) = call(&app, get(&format!("/admin/operations/{}", op_id()))).await;
    assert_eq!(status, 404);
    assert!(body.contains("Not found"));
    assert_eq!(call(&app, get("/admin/operations/nope")).await.0, 404);
    let (status, headers, _) = call(&app, get("/admin/elsewhere")).await;
    assert_eq!(status, 404);
    assert_eq!(
        header_of(&headers, header::CONTENT_TYPE),
        "text/html; charset=utf-8"
    );
}

#[actix_web::test]
async fn a_wrong_method_is_an_html_405_naming_the_allowed_ones() {
    let app = Fixture::new().app().await;
    let (status, headers, body) = call(
        &app,
        actix_web::test::TestRequest::delete().uri("/admin/operations"),
    )
    .await;
    assert_eq!(status, 405, "{body}");
    assert_eq!(header_of(&headers, header::ALLOW), "GET");
    assert!(body.contains("<html"));
}

#[actix_web::test]
async fn providers_show_every_live_processs_circuits_without_credentials() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture.operator.expect_list_providers().returning(|| {
        Ok(vec![testkit::fixtures::acquirer(
            "acq-1",
            "api-key-secret-value",
            "webhook-secret-value",
        )])
    });
    fixture
        .processes
        .expect_processes()
        .withf(|since| *since == at(-15))
        .returning(|_| {
            Ok(vec![ProcessReport {
                id: "proc-aaaa1111".into(),
                version: "0.1.0".into(),
                started_at: at(-3600),
                seen_at: at(-2),
                circuits: vec![Circuit {
                    provider: "acq-1".into(),
                    state: CircuitState::Open { until: at(20) },
                }],
            }])
        });
    let app = fixture.app().await;
    let (status, _, body) = call(&app, get("/admin/providers")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("acq-1") && body.contains("https://acq.example/api"));
    assert!(body.contains("proc-aaaa1111") && body.contains(">open<"));
    assert!(!body.contains("api-key-secret-value") && !body.contains("webhook-secret-value"));
    assert!(
        body.contains("/admin/providers/acq-1/disable"),
        "an admin may disable it"
    );
}

#[actix_web::test]
async fn the_operation_page_reads_a_withdrawal_without_refunds() {
    // A withdrawal has no refunds: the refund store is never asked.
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    fixture.mocks.refunds.expect_refunds_of().never();
    fixture.shows_operation(withdrawal(Status::Processing));
    fixture.no_callbacks();
    fixture
        .operator
        .expect_operation_discrepancies()
        .returning(|_| Ok(Vec::new()));
    fixture
        .console
        .expect_operation_events()
        .returning(|_| Ok(Vec::new()));
    let app = fixture.app().await;
    let (status, _, body) = call(&app, get(&format!("/admin/operations/{}", op_id()))).await;
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains("/cancel"), "a viewer has no actions");
}

#[actix_web::test]
async fn on_its_own_listener_the_console_sends_the_root_to_the_overview() {
    let (console, _) = Fixture::new().state();
    let metrics = web_edge::Metrics::new(prometheus::Registry::new()).expect("fresh");
    let app = actix_web::test::init_service(crate::standalone(mount(console), metrics)).await;
    let (status, headers, _) = call(&app, actix_web::test::TestRequest::get().uri("/")).await;
    assert_eq!(status, 303);
    assert_eq!(header_of(&headers, header::LOCATION), "/admin");
    let (status, headers, body) = call(
        &app,
        actix_web::test::TestRequest::get().uri("/api/v1/balance"),
    )
    .await;
    assert_eq!(status, 404, "only the console is served there");
    assert_eq!(
        header_of(&headers, header::CONTENT_TYPE),
        "text/html; charset=utf-8"
    );
    assert!(body.contains("Not found"));
    assert_redirects(
        &app,
        actix_web::test::TestRequest::get().uri("/admin"),
        "/admin/login",
    )
    .await;
}

/// `n` audit records numbered down from `newest`.
fn records(newest: i64, n: i64) -> Vec<domain::console::AuditRecord> {
    (0..n)
        .map(|i| domain::console::AuditRecord {
            id: newest - i,
            entry: domain::console::AuditEntry {
                actor: Actor::operator("bob"),
                action: "route.disable".into(),
                target: "3".into(),
                before: Some(r#"{"enabled":true}"#.into()),
                after: Some(r#"{"enabled":false}"#.into()),
                at: at(-i),
            },
        })
        .collect()
}

#[actix_web::test]
async fn the_audit_log_pages_back_with_before() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    fixture
        .console
        .expect_audit_log()
        .withf(|before, limit| before.is_none() && *limit == 50)
        .returning(|_, _| Ok(records(120, 50)));
    fixture
        .console
        .expect_audit_log()
        .withf(|before, _| *before == Some(71))
        .returning(|_, _| Ok(records(70, 3)));
    let app = fixture.app().await;
    let (status, _, body) = call(&app, get("/admin/audit")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#"href="/admin/audit?before=71""#), "{body}");
    assert!(body.contains("operator:bob") && body.contains("route.disable"));
    assert!(body.contains("{&quot;enabled&quot;:false}"));
    let (status, _, body) = call(&app, get("/admin/audit?before=71")).await;
    assert_eq!(status, 200);
    assert!(!body.contains("before=68"), "a short page is the last");
    for bad in ["before=abc", "before=-3", "before=1&before=2", "page=2"] {
        assert_eq!(
            call(&app, get(&format!("/admin/audit?{bad}"))).await.0,
            400,
            "{bad}"
        );
    }
}
