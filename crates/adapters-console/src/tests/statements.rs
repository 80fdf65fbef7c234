//! The statements page and its CSV: the days of the console's zone, the table, the download,
//! and the answers to bad parameters and unknown merchants.

// Amounts in minor units are written as roubles_kopecks: 100_00 is 100.00.
#![allow(clippy::inconsistent_digit_grouping)]

use actix_web::http::header;
use domain::console::Role;
use domain::ledger::EntryKind;
use domain::statement::{Book, Held, KindSum, CSV_HEADER};

use super::*;
use testkit::fixtures::{merchant, MERCHANT};

/// 2026-11-21 in Moscow began at 21:00 UTC the day before: 13 hours before [`now`].
const MOSCOW_DAY_START: i64 = -13 * 3600;

fn sum(kind: EntryKind, available: i64) -> KindSum {
    KindSum {
        kind,
        refund: false,
        dispute: false,
        from_held: false,
        count: 1,
        available,
        held: 0,
    }
}

/// The ledger of m-1 in RUB over `days` days: 50.00 at the start, then on the first day a
/// deposit of 100.00 that paid 15.00, closing at 135.00; nothing on the days after.
fn reads_book(fixture: &mut Fixture, days: usize) {
    let closing = Held {
        available: 135_00,
        held: 0,
    };
    fixture
        .ledger
        .expect_book()
        .withf(move |m, c, asked| {
            m.as_str() == MERCHANT
                && *c == domain::Currency::RUB
                && asked.len() == days
                && asked[0].start == at(MOSCOW_DAY_START - 86_400 * (days as i64 - 1))
        })
        .times(1)
        .returning(move |_, _, _| {
            let first = vec![
                sum(EntryKind::DepositApproved, 100_00),
                sum(EntryKind::Fee, -15_00),
            ];
            let mut book = Book {
                opening: Held {
                    available: 50_00,
                    held: 0,
                },
                days: vec![(first, closing)],
            };
            book.days.resize(days, (Vec::new(), closing));
            Ok(book)
        });
}

fn moscow(role: Role) -> Fixture {
    let mut fixture = Fixture::new().signed_in(role);
    fixture.zone = Zone::parse("Europe/Moscow").expect("known");
    fixture
        .operator
        .expect_find_merchant()
        .returning(|id| Ok((id.as_str() == MERCHANT).then(merchant)));
    fixture
        .operator
        .expect_list_merchants()
        .returning(|| Ok(vec![merchant()]));
    fixture
}

#[actix_web::test]
async fn without_a_merchant_the_form_asks_for_today_and_reads_no_ledger() {
    let mut fixture = moscow(Role::Viewer);
    fixture.ledger.expect_book().never();
    let app = fixture.app().await;

    let (status, _, body) = call(&app, get("/admin/statements")).await;

    assert_eq!(status, 200, "{body}");
    assert_eq!(body.matches(r#"value="2026-11-21""#).count(), 2, "{body}");
    assert!(body.contains(r#"<option value="m-1">"#), "{body}");
    assert!(body.contains("Choose a merchant"), "{body}");
}

#[actix_web::test]
async fn a_viewer_reads_the_statement_a_row_a_local_day() {
    let mut fixture = moscow(Role::Viewer);
    reads_book(&mut fixture, 1);
    let app = fixture.app().await;
    let query = "merchant=m-1&currency=RUB&from=2026-11-21&to=2026-11-21";

    let (status, _, body) = call(&app, get(&format!("/admin/statements?{query}"))).await;

    assert_eq!(status, 200, "{body}");
    let row = body
        .split("<td class=\"nowrap\">2026-11-21</td>")
        .nth(1)
        .expect("the day's row");
    let row = row.split("</tr>").next().expect("its end");
    let cells: Vec<&str> = row
        .split("<td class=\"num\">")
        .skip(1)
        .map(|cell| cell.trim_end_matches("</td>"))
        .collect();
    assert_eq!(
        cells,
        [
            "1", "100.00", "15.00", "0", "0.00", "0.00", "0", "0.00", "0.00", "0.00", "0.00",
            "135.00", "0.00"
        ]
    );
    assert!(
        body.contains("Available 50.00 · Held 0.00"),
        "the opening: {body}"
    );
    assert!(
        body.contains("Available 135.00 · Held 0.00"),
        "the closing: {body}"
    );
    assert!(body.contains("Europe/Moscow"), "{body}");
    let csv = format!(
        r#"href="/admin/statements.csv?{}""#,
        query.replace('&', "&amp;")
    );
    assert!(body.contains(&csv), "{csv} in {body}");
    assert!(body.contains(r#"<option value="m-1" selected>"#), "{body}");
}

#[actix_web::test]
async fn the_csv_is_the_statement_named_by_its_merchant_currency_and_days_and_audited() {
    let mut fixture = moscow(Role::Viewer);
    reads_book(&mut fixture, 2);
    let query = "merchant=m-1&currency=RUB&from=2026-11-20&to=2026-11-21";
    fixture.audits_once(move |entry| {
        audited(entry, "statement.export", query) && entry.before.is_none()
    });
    let app = fixture.app().await;

    let (status, headers, body) = call(&app, get(&format!("/admin/statements.csv?{query}"))).await;

    assert_eq!(status, 200, "{body}");
    assert_eq!(
        header_of(&headers, header::CONTENT_TYPE),
        "text/csv; charset=utf-8"
    );
    assert_eq!(
        header_of(&headers, header::CONTENT_DISPOSITION),
        r#"attachment; filename="statement-m-1-RUB-2026-11-20-2026-11-21.csv""#
    );
    let lines: Vec<&str> = body.split_terminator("\r\n").collect();
    assert_eq!(
        lines,
        [
            CSV_HEADER,
            "m-1,RUB,2026-11-20,50.00,0.00,1,100.00,15.00,0,0.00,0.00,0,0.00,0.00,0.00,0.00,135.00,0.00",
            "m-1,RUB,2026-11-21,135.00,0.00,0,0.00,0.00,0,0.00,0.00,0,0.00,0.00,0.00,0.00,135.00,0.00",
        ]
    );
}

#[actix_web::test]
async fn bad_parameters_are_a_400_naming_them_and_an_unknown_merchant_a_404() {
    let bad = [
        ("merchant=m-1&currency=XYZ", "currency:"),
        ("merchant=m-1&from=2026-13-01", "from:"),
        ("merchant=m-1&from=2026-11-21&to=2026-11-20", "to:"),
        ("merchant=m-1&from=2025-01-01&to=2026-11-21", "to:"),
        ("merchant=a%20b", "merchant:"),
        ("merchant=m-1&colour=red", "colour:"),
        ("merchant=m-1&merchant=m-2", "merchant:"),
    ];
    for path in ["/admin/statements", "/admin/statements.csv"] {
        let mut fixture = moscow(Role::Viewer);
        fixture.ledger.expect_book().never();
        fixture.audits_nothing();
        let app = fixture.app().await;
        for (query, named) in bad {
            let (status, _, body) = call(&app, get(&format!("{path}?{query}"))).await;
            assert_eq!(status, 400, "{path}?{query}: {body}");
            assert!(body.contains(named), "{query}: {named} in {body}");
        }
        let (status, _, body) = call(&app, get(&format!("{path}?merchant=nobody"))).await;
        assert_eq!(status, 404, "{path}: {body}");
    }
    let app = moscow(Role::Viewer).app().await;
    for path in ["/admin/statements.csv", "/admin/statements?from=2026-11-21"] {
        let (status, _, body) = call(&app, get(path)).await;
        assert_eq!(status, 400, "{path} needs a merchant: {body}");
        assert!(body.contains("merchant: is required"), "{body}");
    }
}
