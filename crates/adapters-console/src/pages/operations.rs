//! `GET /admin/operations`: the search (filters, exact `q`, keyset pages) and
//! `GET /admin/operations.csv`: the same filtered list as a streamed CSV download.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpRequest, HttpResponse};
use domain::console::{Cursor, Listed, PAGE_MAX};
use domain::{format_minor, Direction, PaymentMethod};
use maud::{html, Markup};

use crate::auth::Signed;
use crate::filters::{self, Search};
use crate::i18n::{texts, Texts};
use crate::layout::{direction_name, money, respond, rows_table, status_badge};
use crate::paths::OPERATIONS;
use crate::shell::shell;
use crate::shell::Nav;
use crate::{csv, Answer, Problem};

pub(crate) async fn list(signed: Signed, req: HttpRequest) -> Answer {
    let state = &signed.state;
    let search = filters::parse(req.query_string(), state.zone(), true)
        .map_err(|message| signed.fail(Problem::BadRequest(message)))?;
    let found = signed
        .ask(
            state
                .store()
                .search_operations(&search.filter, search.after.as_ref(), search.limit),
        )
        .await?;
    // A full page may have a next one; the keyset cursor is its last operation.
    let next = found
        .last()
        .filter(|_| found.len() >= search.limit as usize)
        .map(|last| Cursor {
            created_at: last.operation.created_at(),
            id: last.operation.id(),
        });
    let replica = signed.replica_note().await?;
    let t = texts(signed.lang);
    let body = html! {
        h1 { (t.nav_operations) }
        (replica)
        div.box { (form(t, &search)) }
        div.box {
            div.pager {
                a.button.plain href=(link("/admin/operations.csv", &search.filter_query())) { (t.export_csv) }
                @if search.after.is_some() {
                    a.button.plain href=(link(OPERATIONS, &first_page_query(&search))) { (t.first_page) }
                }
            }
            (table(&signed, t, &found))
            div.pager {
                @if let Some(cursor) = next {
                    a.button.plain rel="next" href=(link(OPERATIONS, &search.next_query(&cursor))) { (t.next_page) }
                }
            }
        }
    };
    Ok(respond(
        StatusCode::OK,
        signed.lang,
        shell(&signed, Nav::Operations, t.nav_operations, body),
    ))
}

/// `path?query`, or `path` alone.
fn link(path: &str, query: &str) -> String {
    if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    }
}

/// The filters and the limit, without a cursor.
fn first_page_query(search: &Search) -> String {
    let limit = search.limit.to_string();
    let mut pairs: Vec<(&str, &str)> = search.given.iter().map(|(k, v)| (*k, v.as_str())).collect();
    if search.limit_given {
        pairs.push(("limit", &limit));
    }
    filters::encode_query(pairs)
}

/// A date-range value as `<input type=datetime-local>` shows it: a date alone is its
/// midnight (the same instant the filter reads).
fn local_input(value: &str) -> String {
    if value.len() == 10 {
        format!("{value}T00:00")
    } else {
        value.to_string()
    }
}

/// The filter form (GET): it sends every field; empty ones are not set.
fn form(t: &Texts, search: &Search) -> Markup {
    let option = |value: &str, label: &str, chosen: &str| {
        html! { option value=(value) selected[value == chosen] { (label) } }
    };
    html! {
        form.filters method="get" action=(OPERATIONS) {
            label { (t.col_direction)
                select name="direction" {
                    (option("", t.any, search.value("direction")))
                    @for d in Direction::ALL { (option(d.as_str(), direction_name(t, d), search.value("direction"))) }
                }
            }
            label { (t.col_method)
                select name="method" {
                    (option("", t.any, search.value("method")))
                    @for m in PaymentMethod::ALL { (option(m.as_str(), m.as_str(), search.value("method"))) }
                }
            }
            label { (t.col_status)
                select name="status" {
                    (option("", t.any, search.value("status")))
                    (option("1", t.status_approved, search.value("status")))
                    (option("2", t.status_declined, search.value("status")))
                    (option("3", t.status_processing, search.value("status")))
                }
            }
            label { (t.col_merchant) input type="text" name="merchant" value=(search.value("merchant")) size="14"; }
            label { (t.col_provider) input type="text" name="provider" value=(search.value("provider")) size="10"; }
            label { (t.filter_from) input type="datetime-local" name="from" value=(local_input(search.value("from"))); }
            label { (t.filter_to) input type="datetime-local" name="to" value=(local_input(search.value("to"))); }
            label { (t.filter_search) input type="search" name="q" value=(search.value("q")) size="24" placeholder=(t.filter_search_hint); }
            label { (t.filter_limit) input.short type="number" name="limit" min="1" max=(PAGE_MAX) value=(search.limit); }
            button type="submit" { (t.apply) }
            a.button.plain href=(OPERATIONS) { (t.reset) }
        }
    }
}

fn table(signed: &Signed, t: &Texts, found: &[Listed]) -> Markup {
    let zone = signed.state.zone();
    rows_table(
        found.is_empty(),
        t.nothing_found,
        html! {
            th { (t.col_created) } th { (t.col_operation) } th { (t.col_merchant) }
            th { (t.col_merchant_operation) } th { (t.col_direction) } th { (t.col_method) }
            th { (t.col_status) } th.num { (t.col_amount) } th.num { (t.col_refunded) }
            th { (t.col_provider) } th { (t.col_error) }
        },
        html! {
            @for listed in found {
                @let op = &listed.operation;
                tr {
                    td.nowrap { (zone.format(op.created_at())) }
                    td.mono.nowrap { a href=(format!("{OPERATIONS}/{}", op.id())) { (op.id()) } }
                    td.mono { (op.merchant_id().as_str()) }
                    td.mono { (op.merchant_operation_id().map(|m| m.as_str()).unwrap_or("")) }
                    td { (direction_name(t, op.direction())) }
                    td { (op.method().as_str()) }
                    td.nowrap { (status_badge(t, op.status())) " " span.muted { (op.status().number()) } }
                    td.num { (money(op.amount().minor(), op.currency())) }
                    td.num { (format_minor(listed.refunded, op.currency())) }
                    td { (op.provider()) }
                    td { (op.decline().map(|d| d.code.as_str()).unwrap_or("")) }
                }
            }
        },
    )
}

/// `GET /admin/operations.csv?...filters`: audited as `operations.export` (its target the
/// filter's query string), then the whole filtered list streamed as CSV.
pub(crate) async fn export(signed: Signed, req: HttpRequest) -> Answer {
    let state = &signed.state;
    let search = filters::parse(req.query_string(), state.zone(), false)
        .map_err(|message| signed.fail(Problem::BadRequest(message)))?;
    signed
        .ask(state.audit(
            &signed.name,
            "operations.export",
            &search.filter_query(),
            None,
            None,
        ))
        .await?;
    let rows = csv::rows(state.ports.store.clone(), search.filter);
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/csv; charset=utf-8"))
        .insert_header((
            header::CONTENT_DISPOSITION,
            r#"attachment; filename="operations.csv""#,
        ))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .streaming(rows))
}
