//! `GET /admin/audit?before=N`: the audit log, newest first, a page at a time.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use maud::html;

use crate::auth::Signed;
use crate::i18n::texts;
use crate::layout::{respond, rows_table};
use crate::shell::shell;
use crate::shell::Nav;
use crate::{Answer, Problem};

const LIST: &str = "/admin/audit";

/// Entries on a page.
const PAGE: u32 = 50;

/// `before`: the page older than that entry; a malformed one is 400.
fn parse_before(query: &str) -> Result<Option<i64>, String> {
    let pairs = web::Query::<Vec<(String, String)>>::from_query(query)
        .map_err(|_| "the query could not be read".to_string())?
        .into_inner();
    let mut before = None;
    for (key, value) in pairs {
        match key.as_str() {
            "before" if before.is_some() => return Err("before: is given more than once".into()),
            "before" if value.is_empty() => {}
            "before" => {
                let id = value
                    .parse::<i64>()
                    .ok()
                    .filter(|id| *id > 0)
                    .ok_or_else(|| "before: must be an entry number".to_string())?;
                before = Some(id);
            }
            other => return Err(format!("{other}: is not a parameter of this page")),
        }
    }
    Ok(before)
}

pub(crate) async fn list(signed: Signed, req: HttpRequest) -> Answer {
    let before = parse_before(req.query_string())
        .map_err(|message| signed.fail(Problem::BadRequest(message)))?;
    let state = &signed.state;
    let records = signed.ask(state.store().audit_log(before, PAGE)).await?;
    let older = records
        .last()
        .filter(|_| records.len() >= PAGE as usize)
        .map(|last| last.id);
    let t = texts(signed.lang);
    let zone = state.zone();
    let body = html! {
        h1 { (t.nav_audit) }
        div.box {
            (rows_table(records.is_empty(), t.nothing_found, html! {
                th.num { "#" } th { (t.col_time) } th { (t.actor) } th { (t.action) }
                th { (t.target) } th { (t.before) } th { (t.after) }
            }, html! {
                @for record in &records {
                    @let entry = &record.entry;
                    tr {
                        td.num { (record.id) }
                        td.nowrap { (zone.format(entry.at)) }
                        td { (entry.actor.as_str()) }
                        td { code { (entry.action) } }
                        td.mono { (entry.target) }
                        td.mono { (entry.before.as_deref().unwrap_or("")) }
                        td.mono { (entry.after.as_deref().unwrap_or("")) }
                    }
                }
            }))
            div.pager {
                @if before.is_some() {
                    a.button.plain href=(LIST) { (t.newest) }
                }
                @if let Some(id) = older {
                    a.button.plain rel="next" href=(format!("{LIST}?before={id}")) { (t.older) }
                }
            }
        }
    };
    Ok(respond(
        StatusCode::OK,
        signed.lang,
        shell(&signed, Nav::Audit, t.nav_audit, body),
    ))
}
