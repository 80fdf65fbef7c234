//! `GET /admin/callbacks`: pending, held and failed callbacks, newest first. A failed one can
//! be queued again with a fresh schedule (`callback.retry`), a pending one made due at once
//! (`callback.send_now`); both need the operator role. A held one (its merchant is disabled)
//! goes out only once its merchant is enabled again.

use actix_web::{web, HttpRequest};
use domain::callback::CallbackState;
use domain::console::Need;
use maud::{html, Markup};
use serde_json::json;

use super::actions::{audit, back, list_page, queue_again};
use crate::auth::{Posted, Signed};
use crate::i18n::{texts, Texts};
use crate::layout::rows_table;
use crate::shell::action_button;
use crate::shell::Nav;
use crate::{Answer, Failure, Problem};

const LIST: &str = "/admin/callbacks";

/// The most callbacks the page lists.
const SHOWN: u32 = 200;

pub(crate) async fn list(signed: Signed, req: HttpRequest) -> Answer {
    let state = &signed.state;
    let open = signed.ask(state.store().open_callbacks(SHOWN)).await?;
    let t = texts(signed.lang);
    let zone = state.zone();
    let can_act = signed.role.allows(Need::Act);
    let table = rows_table(
        open.is_empty(),
        t.no_open_callbacks,
        html! {
            th { (t.col_operation) } th { (t.col_refund) } th { (t.col_merchant) } th { "URL" }
            th { (t.col_state) } th.num { (t.col_attempts) } th { (t.next_attempt) }
            th { (t.last_error) } th {}
        },
        html! {
            @for callback in &open {
                // The callback's own key: a dispute change's, a refund's or the operation's.
                @let target = match (callback.dispute, callback.refund_id) {
                    (Some(change), _) => change.change_id,
                    (None, Some(refund)) => refund.as_uuid(),
                    (None, None) => callback.operation_id.as_uuid(),
                };
                tr {
                    td.mono.nowrap { a href=(format!("/admin/operations/{}", callback.operation_id)) { (callback.operation_id) } }
                    td.mono {
                        (callback.refund_id.map(|r| r.to_string()).unwrap_or_default())
                        @if let Some(change) = callback.dispute { (t.dispute) " " (change.dispute_id) }
                    }
                    td.mono { (callback.merchant_id.as_str()) }
                    td.mono { (callback.url) }
                    td {
                        (callback_badge(t, callback.state))
                    }
                    td.num { (callback.attempts) }
                    td.nowrap { (callback.next_attempt_at.map(|at| zone.format(at)).unwrap_or_default()) }
                    td { (callback.last_error.as_deref().unwrap_or("")) }
                    td.nowrap {
                        @match callback.state {
                            CallbackState::Failed if can_act => (action_button(&signed, &format!("{LIST}/{target}/retry"), t.retry_callback, &[], false)),
                            CallbackState::Pending if can_act => (action_button(&signed, &format!("{LIST}/{target}/send-now"), t.send_now, &[], false)),
                            // Nothing sends it but enabling its merchant.
                            CallbackState::Held => span.muted { (t.held_hint) },
                            CallbackState::Failed | CallbackState::Pending | CallbackState::Delivered => {},
                        }
                    }
                }
            }
        },
    );
    Ok(list_page(
        &signed,
        &req,
        Nav::Callbacks,
        t.nav_callbacks,
        table,
    ))
}

/// A callback's state as a badge.
pub(crate) fn callback_badge(t: &Texts, state: CallbackState) -> Markup {
    match state {
        CallbackState::Pending => html! { span.badge.b-wait { (t.cb_pending) } },
        CallbackState::Held => html! { span.badge.b-wait { (t.cb_held) } },
        CallbackState::Delivered => html! { span.badge.b-ok { (t.cb_delivered) } },
        CallbackState::Failed => html! { span.badge.b-bad { (t.cb_failed) } },
    }
}

/// The callback id of a path: an operation's or a refund's id (a UUID).
fn parse_target(signed: &Signed, text: &str) -> Result<uuid::Uuid, Failure> {
    uuid::Uuid::parse_str(text).map_err(|_| signed.fail(Problem::NotFound))
}

/// `POST /admin/callbacks/{id}/retry` (operator+).
pub(crate) async fn retry(posted: Posted, path: web::Path<String>) -> Answer {
    posted.need(Need::Act)?;
    let signed = &posted.signed;
    let target = parse_target(signed, &path)?;
    let (queued, code) = queue_again(&posted, target).await?;
    Ok(back(LIST, queued, code))
}

/// `POST /admin/callbacks/{id}/send-now` (operator+): due at once, its schedule unchanged.
pub(crate) async fn send_now(posted: Posted, path: web::Path<String>) -> Answer {
    posted.need(Need::Act)?;
    let signed = &posted.signed;
    let target = parse_target(signed, &path)?;
    let state = &signed.state;
    let now = state.now();
    let sent = signed
        .ask(state.store().send_callback_now(target, now))
        .await?;
    if !sent {
        return Ok(back(LIST, false, "no_pending_callback"));
    }
    audit(
        &posted,
        "callback.send_now",
        &target.to_string(),
        Some(json!({ "state": "pending" })),
        Some(json!({ "state": "pending", "dueAt": now.to_rfc3339() })),
    )
    .await?;
    Ok(back(LIST, true, "callback_sent"))
}
