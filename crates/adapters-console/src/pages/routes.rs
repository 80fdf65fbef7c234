//! `GET /admin/routes`: the route table. Admins enable and disable routes and set their
//! priority (higher wins).

use actix_web::{web, HttpRequest};
use domain::console::Need;
use domain::format_minor;
use domain::route::Route;
use maud::html;
use serde_json::json;

use super::actions::{audit, back, list_page, toggled};
use crate::auth::{csrf_field, Posted, Signed};
use crate::i18n::texts;
use crate::layout::{direction_name, enabled_badge, rows_table};
use crate::shell::action_button;
use crate::shell::Nav;
use crate::{Answer, Failure, Problem};

const LIST: &str = "/admin/routes";

pub(crate) async fn list(signed: Signed, req: HttpRequest) -> Answer {
    let routes = signed.ask(signed.state.ports.operator.routes()).await?;
    let t = texts(signed.lang);
    let admin = signed.role.allows(Need::Administer);
    let table = rows_table(
        routes.is_empty(),
        t.nothing_found,
        html! {
            th.num { "id" } th { (t.col_direction) } th { (t.col_method) } th { (t.currency) }
            th.num { (t.min_amount) } th.num { (t.max_amount) } th.num { (t.priority) }
            th { (t.col_provider) } th { (t.flow) } th.num { (t.lifetime) } th { (t.col_state) }
            @if admin { th { (t.col_actions) } }
        },
        html! {
            @for route in &routes {
                tr {
                    td.num { (route.id) }
                    td { (direction_name(t, route.direction)) }
                    td { (route.method.as_str()) }
                    td { (route.currency.as_str()) }
                    td.num { (format_minor(route.min_amount, route.currency)) }
                    td.num { (format_minor(route.max_amount, route.currency)) }
                    td.num { (route.priority) }
                    td { (route.provider) }
                    td { code { (route.flow.as_str()) } }
                    td.num { (route.lifetime_secs.map(|s| format!("{s} s")).unwrap_or_else(|| "—".into())) }
                    td { (enabled_badge(t, route.enabled)) }
                    @if admin {
                        td.nowrap {
                            @if route.enabled {
                                (action_button(&signed, &format!("{LIST}/{}/disable", route.id), t.disable, &[], true))
                            } @else {
                                (action_button(&signed, &format!("{LIST}/{}/enable", route.id), t.enable, &[], false))
                            }
                            form.inline method="post" action=(format!("{LIST}/{}/priority", route.id)) {
                                (csrf_field(&signed.csrf))
                                input.short type="number" name="priority" value=(route.priority) required aria-label=(t.priority);
                                button type="submit" { (t.set_priority) }
                            }
                        }
                    }
                }
            }
        },
    );
    Ok(list_page(&signed, &req, Nav::Routes, t.nav_routes, table))
}

/// The route a path names, as stored now; unknown or malformed is 404.
async fn find(signed: &Signed, text: &str) -> Result<Route, Failure> {
    let id: i64 = text.parse().map_err(|_| signed.fail(Problem::NotFound))?;
    signed
        .ask_found(signed.state.ports.operator.route(id))
        .await
}

async fn set_enabled(posted: Posted, path: web::Path<String>, enabled: bool) -> Answer {
    posted.need(Need::Administer)?;
    let signed = &posted.signed;
    let route = find(signed, &path).await?;
    let operator = &signed.state.ports.operator;
    let done = if enabled {
        operator.enable_route(route.id).await
    } else {
        operator.disable_route(route.id).await
    }
    .map_err(|e| signed.fail(e))?;
    if !done {
        return Err(signed.fail(Problem::NotFound));
    }
    let id = route.id.to_string();
    toggled(&posted, "route", &id, route.enabled, enabled, LIST).await
}

/// `POST /admin/routes/{id}/enable` (admin).
pub(crate) async fn enable(posted: Posted, path: web::Path<String>) -> Answer {
    set_enabled(posted, path, true).await
}

/// `POST /admin/routes/{id}/disable` (admin).
pub(crate) async fn disable(posted: Posted, path: web::Path<String>) -> Answer {
    set_enabled(posted, path, false).await
}

/// `POST /admin/routes/{id}/priority` with `priority` (a whole number; admin).
pub(crate) async fn priority(posted: Posted, path: web::Path<String>) -> Answer {
    posted.need(Need::Administer)?;
    let signed = &posted.signed;
    let priority: i32 = posted.field("priority")?.trim().parse().map_err(|_| {
        posted.fail(Problem::BadRequest(
            "priority: must be a whole number".to_string(),
        ))
    })?;
    let route = find(signed, &path).await?;
    let done = signed
        .ask(
            signed
                .state
                .ports
                .operator
                .set_route_priority(route.id, priority),
        )
        .await?;
    if !done {
        return Err(signed.fail(Problem::NotFound));
    }
    audit(
        &posted,
        "route.set_priority",
        &route.id.to_string(),
        Some(json!({ "priority": route.priority })),
        Some(json!({ "priority": priority })),
    )
    .await?;
    Ok(back(LIST, true, "route_priority"))
}
