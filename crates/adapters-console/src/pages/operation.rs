//! `GET /admin/operations/{id}`: one operation as the API shows it (its read shape), the
//! gateway's own record of it, its refunds, discrepancies, provider attempts, ledger entries,
//! callback deliveries and timeline; and its actions (operator or above): retry its callback,
//! cancel it at the provider, the sandbox's approve or decline; an admin also marks a
//! discrepancy resolved (`super::discrepancies`). Each action is audited with the
//! status before and after, then goes back to the page with a flash message.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use domain::callback::CallbackState;
use domain::console::{EventDetail, Need, OperationEvent};
use domain::dispute::DisputeStatus;
use domain::operation::{Decline, DeclineCode, Operation, Outcome};
use domain::refund::Refund;
use domain::service::{CancelError, CompleteError};
use domain::story::{CallbackDelivery, OperationStory};
use domain::{DisputeId, OperationId, RefundId, Status};
use maud::{html, Markup};
use serde_json::{json, Value};

use super::actions::{audit, back, flash_of, queue_again};
use super::callbacks::callback_badge;
use super::discrepancies::discrepancy_table;
pub(crate) use super::discrepancies::resolve as resolve_discrepancy;
use super::disputes::status_badge as dispute_badge;
use crate::auth::{Posted, Signed};
use crate::i18n::{texts, Texts};
use crate::layout::{
    direction_name, flash, money, respond, rows_table, status_badge, status_code_badge,
};
use crate::paths::{dispute_page, operation_page};
use crate::shell::Nav;
use crate::shell::{action_button, shell};
use crate::{Answer, Failure, Problem};

/// The operation id of a path; anything else names no operation (404).
fn parse_id(signed: &Signed, text: &str) -> Result<OperationId, Failure> {
    OperationId::parse(text).map_err(|_| signed.fail(Problem::NotFound))
}

pub(crate) async fn show(signed: Signed, req: HttpRequest, path: web::Path<String>) -> Answer {
    let id = parse_id(&signed, &path)?;
    let state = &signed.state;
    let story = signed
        .ask_found(state.ports.operator.operation_story(id))
        .await?;
    let op = &story.operation;
    let refunds = signed
        .ask(state.ports.gateway.reads().refunds_of(op))
        .await?;
    let disputes = signed.ask(state.ports.gateway.disputes().of(op)).await?;
    let events = signed.ask(state.store().operation_events(id)).await?;
    let now = state.now();
    let shape = (state.ports.read_shape)(op, &refunds, &disputes, now)
        .map_err(|e| signed.fail(Problem::internal(&anyhow::Error::new(e))))?;
    let t = texts(signed.lang);
    let title = format!("{} {}", t.operation, op.id());
    let body = html! {
        h1 { (t.operation) " " code { (op.id()) } " " (status_badge(t, op.status())) }
        (flash(flash_of(&req, signed.lang)))
        (actions(&signed, t, op, &story))
        div.box {
            h2 { (t.api_view) }
            (json_fields(&shape, true))
        }
        div.box {
            h2 { (t.gateway_record) }
            (record(&signed, t, op))
        }
        @if !refunds.is_empty() {
            div.box { h2 { (t.refunds) } (refund_table(&signed, t, &refunds)) }
        }
        @if !disputes.is_empty() {
            div.box { h2 { (t.disputes) } (super::disputes::dispute_table(&signed, t, &disputes, false)) }
        }
        @if !story.discrepancies.is_empty() {
            div.box { h2 { (t.discrepancies) } (discrepancy_table(&signed, t, &story.discrepancies)) }
        }
        div.box { h2 { (t.timeline) } (timeline(&signed, t, op, &events)) }
        div.box { h2 { (t.callbacks) } (deliveries(&signed, t, op, &story.callbacks)) }
        div.box { h2 { (t.attempts) } (attempts(&signed, t, &story)) }
        div.box { h2 { (t.ledger_entries) } (ledger(&signed, t, &story)) }
    };
    Ok(respond(
        StatusCode::OK,
        signed.lang,
        shell(&signed, Nav::Operations, &title, body),
    ))
}

/// The buttons the operator's role allows and the operation's state offers.
fn actions(signed: &Signed, t: &Texts, op: &Operation, story: &OperationStory) -> Markup {
    let path = operation_page(op.id());
    let processing = op.status() == Status::Processing;
    let can_act = signed.role.allows(Need::Act);
    let sandbox_complete = processing && op.is_sandbox() && signed.state.ports.checkout.is_some();
    let failed_own = story
        .callbacks
        .iter()
        .any(|c| c.refund_id.is_none() && c.dispute.is_none() && c.state == CallbackState::Failed);
    html! {
        @if can_act && (processing || failed_own) {
            div.box {
                @if failed_own {
                    (action_button(signed, &format!("{path}/callback-retry"), t.retry_callback, &[], false))
                }
                @if processing && !op.is_sandbox() {
                    (action_button(signed, &format!("{path}/cancel"), t.cancel_at_provider, &[], true))
                }
                @if sandbox_complete {
                    span.muted { (t.sandbox) ": " }
                    (action_button(signed, &format!("{path}/complete"), t.approve, &[("outcome", "approve")], false))
                    (action_button(signed, &format!("{path}/complete"), t.decline, &[("outcome", "decline")], true))
                }
            }
        }
    }
}

/// A JSON value as nested fields: objects as lists of names and values, arrays item by item.
/// `top` leaves out `refunds` (shown as their own table).
fn json_fields(value: &Value, top: bool) -> Markup {
    html! {
        @match value {
            Value::Object(map) => {
                dl.fields {
                    @for (key, value) in map {
                        @if !(top && key == "refunds") {
                            dt.mono { (key) }
                            dd { (json_fields(value, false)) }
                        }
                    }
                }
            }
            Value::Array(items) => {
                @if items.is_empty() { span.muted { "[]" } }
                @for item in items { div { (json_fields(item, false)) } }
            }
            Value::String(text) => span.mono { (text) },
            other => span.mono { (other.to_string()) },
        }
    }
}

fn time(signed: &Signed, at: Option<domain::Timestamp>) -> String {
    at.map(|at| signed.state.zone().format(at))
        .unwrap_or_default()
}

/// What the gateway keeps beyond the API's view.
fn record(signed: &Signed, t: &Texts, op: &Operation) -> Markup {
    let urls = op.urls();
    html! {
        dl.fields {
            dt { (t.col_merchant) } dd.mono { (op.merchant_id().as_str()) }
            dt { (t.col_direction) } dd { (direction_name(t, op.direction())) }
            dt { (t.col_method) } dd { (op.method().as_str()) }
            dt { (t.col_provider) } dd { (op.provider()) " · " (t.route) " " (op.route_id()) }
            dt { (t.col_created) } dd { (time(signed, Some(op.created_at()))) }
            dt { (t.col_updated) } dd { (time(signed, Some(op.updated_at()))) }
            @if let Some(at) = op.expires_at() { dt { (t.expires_at) } dd { (time(signed, Some(at))) } }
            @if let Some(at) = op.due_at() { dt { (t.due_at) } dd { (time(signed, Some(at))) } }
            @if let Some(state) = op.provider_state() { dt { (t.provider_state) } dd.mono { (state.as_str()) } }
            @if let Some(decline) = op.decline() {
                dt { (t.col_error) } dd { code { (decline.code.as_str()) } " " (decline.message) }
            }
            @for (name, value) in [("callbackUrl", &urls.callback), ("successUrl", &urls.success), ("failUrl", &urls.fail), ("processingUrl", &urls.processing)] {
                @if let Some(value) = value { dt.mono { (name) } dd.mono { (value.as_str()) } }
            }
            @for (key, value) in op.user_data().entries() {
                dt.mono { "userData." (key) } dd.mono { (value) }
            }
        }
    }
}

fn refund_table(signed: &Signed, t: &Texts, refunds: &[Refund]) -> Markup {
    html! {
        div.scroll { table {
            thead { tr {
                th { (t.col_refund) } th { "merchantRefundId" } th.num { (t.col_amount) }
                th { (t.col_status) } th { (t.col_error) } th { (t.col_provider) }
                th { (t.col_created) } th { (t.col_updated) }
            } }
            tbody {
                @for refund in refunds {
                    tr {
                        td.mono { (refund.id) }
                        td.mono { (refund.merchant_refund_id.as_ref().map(|m| m.as_str()).unwrap_or("")) }
                        td.num { (money(refund.amount.minor(), refund.currency)) }
                        td { (status_badge(t, refund.status())) }
                        td { (refund.decline().map(|d| d.code.as_str()).unwrap_or("")) }
                        td { (refund.provider) }
                        td.nowrap { (time(signed, Some(refund.created_at))) }
                        td.nowrap { (time(signed, Some(refund.updated_at))) }
                    }
                }
            }
        } }
    }
}

/// Every event of the operation and its refunds, oldest first.
fn timeline(signed: &Signed, t: &Texts, op: &Operation, events: &[OperationEvent]) -> Markup {
    rows_table(
        events.is_empty(),
        t.no_events,
        html! { th { (t.col_time) } th { (t.col_event) } th { (t.col_detail) } },
        html! {
            @for event in events {
                tr {
                    td.nowrap { (time(signed, Some(event.at))) }
                    (event_cells(t, op, event))
                }
            }
        },
    )
}

fn event_cells(t: &Texts, op: &Operation, event: &OperationEvent) -> Markup {
    let refund = event
        .refund_id
        .map(|id| html! { " · " (t.col_refund) " " code { (id) } });
    match &event.detail {
        EventDetail::Created { status } => html! {
            td { (t.event_created) } td { (status_code_badge(t, *status)) (refund.unwrap_or_default()) }
        },
        EventDetail::Status {
            from,
            to,
            error_code,
            action,
        } => html! {
            td { (t.event_status) }
            td {
                (status_code_badge(t, *from)) " → " (status_code_badge(t, *to))
                @if let Some(code) = error_code { " " code { (code) } }
                @if let Some(action) = action { " · " (t.waits_for) " " code { (action) } }
                (refund.unwrap_or_default())
            }
        },
        EventDetail::Attempt {
            number,
            provider,
            state,
        } => html! {
            td { (t.event_attempt) " #" (number) } td { (provider) " · " code { (state) } }
        },
        EventDetail::Refund {
            refund_id,
            status,
            amount,
        } => html! {
            td { (t.event_refund) }
            td { code { (refund_id) } " " (status_code_badge(t, *status)) " " (money(*amount, op.currency())) }
        },
        EventDetail::Dispute {
            dispute_id,
            dispute_kind,
            status,
            amount,
            evidence,
        } => html! {
            td { (t.event_dispute) }
            td {
                (dispute_link(dispute_id)) " " (dispute_kind) " "
                @match DisputeStatus::parse(status) {
                    Ok(status) => (dispute_badge(status)),
                    Err(_) => code { (status) },
                }
                " " (money(*amount, op.currency()))
                @if let Some(evidence) = evidence { " · " (t.evidence) " " code { (evidence) } }
            }
        },
        EventDetail::Discrepancy { provider, note } => html! {
            td { span.badge.b-bad { (t.event_discrepancy) } } td { (provider) ": " (note) }
        },
        EventDetail::DiscrepancyResolved {
            discrepancy,
            actor,
            note,
            ledger_entry,
        } => html! {
            td { span.badge.b-ok { (t.event_discrepancy_resolved) } " #" (discrepancy) }
            td {
                (actor) ": " (note)
                @if let Some(entry) = ledger_entry { " · " (t.ledger_entry) " #" (entry) }
            }
        },
        EventDetail::Callback {
            refund_id,
            dispute_id,
            attempt,
            http_status,
            latency_ms,
            error,
        } => html! {
            td { (t.event_callback) " #" (attempt) }
            td {
                @match http_status {
                    Some(code) if (200..300).contains(code) => span.badge.b-ok { "HTTP " (code) },
                    Some(code) => span.badge.b-bad { "HTTP " (code) },
                    None => span.badge.b-bad { (t.no_answer) },
                }
                " " (latency_ms) " ms"
                @if let Some(error) = error { " · " (error) }
                @if let Some(id) = refund_id { " · " (t.col_refund) " " code { (id) } }
                @if let Some(id) = dispute_id { " · " (t.dispute) " " (dispute_link(id)) }
            }
        },
    }
}

/// A dispute's id as a link to its page (as plain text if it is not a dispute id).
fn dispute_link(id: &str) -> Markup {
    match DisputeId::parse(id) {
        Ok(parsed) => html! { a.mono href=(dispute_page(parsed)) { (id) } },
        Err(_) => html! { code { (id) } },
    }
}

/// The callbacks queued for the operation and its refunds, each with every attempt.
fn deliveries(
    signed: &Signed,
    t: &Texts,
    op: &Operation,
    callbacks: &[CallbackDelivery],
) -> Markup {
    let can_act = signed.role.allows(Need::Act);
    html! {
        @if callbacks.is_empty() {
            p.muted { (t.no_callbacks) }
        }
        @for callback in callbacks {
            h2 {
                @match (callback.refund_id, callback.dispute) {
                    (_, Some(change)) => { (t.dispute) " " code { (change.dispute_id) } }
                    (Some(id), None) => { (t.col_refund) " " code { (id) } }
                    (None, None) => { (t.operation) }
                }
                " " (callback_badge(t, callback.state))
            }
            dl.fields {
                dt { "URL" } dd.mono { (callback.url) }
                dt { (t.col_attempts) } dd { (callback.attempts) }
                dt { (t.queued_at) } dd { (time(signed, Some(callback.queued_at))) }
                @if let Some(at) = callback.next_attempt_at { dt { (t.next_attempt) } dd { (time(signed, Some(at))) } }
                @if let Some(error) = &callback.last_error { dt { (t.last_error) } dd { (error) } }
                @if callback.state == CallbackState::Held { dt {} dd.muted { (t.held_hint) } }
            }
            @if can_act && callback.state == CallbackState::Failed {
                @let hidden: Vec<(&str, String)> = match (callback.refund_id, callback.dispute) {
                    (_, Some(change)) => vec![("change", change.change_id.to_string())],
                    (Some(id), None) => vec![("refund", id.to_string())],
                    (None, None) => Vec::new(),
                };
                @let hidden: Vec<(&str, &str)> = hidden.iter().map(|(k, v)| (*k, v.as_str())).collect();
                (action_button(signed, &format!("{}/callback-retry", operation_page(op.id())), t.retry_callback, &hidden, false))
            }
            @if !callback.deliveries.is_empty() {
                div.scroll { table {
                    thead { tr {
                        th.num { "#" } th { (t.col_time) } th { "HTTP" } th.num { (t.col_latency) } th { (t.col_error) }
                    } }
                    tbody {
                        @for attempt in &callback.deliveries {
                            tr {
                                td.num { (attempt.attempt) }
                                td.nowrap { (time(signed, Some(attempt.at))) }
                                td { (attempt.http_status.map(|s| s.to_string()).unwrap_or_else(|| "—".into())) }
                                td.num { (attempt.duration_ms) " ms" }
                                td { (attempt.error.as_deref().unwrap_or("")) }
                            }
                        }
                    }
                } }
            }
        }
    }
}

fn attempts(signed: &Signed, t: &Texts, story: &OperationStory) -> Markup {
    rows_table(
        story.attempts.is_empty(),
        t.no_attempts,
        html! {
            th.num { "#" } th { (t.col_provider) } th.num { (t.route) } th { (t.col_state) }
            th { (t.acquirer_id) } th { (t.col_error) } th.num { (t.col_latency) }
            th { (t.col_created) } th { (t.col_updated) }
        },
        html! {
            @for attempt in &story.attempts {
                tr {
                    td.num { (attempt.number) }
                    td { (attempt.provider) }
                    td.num { (attempt.route_id) }
                    td { code { (attempt.state.as_str()) } }
                    td.mono { (attempt.acquirer_id.as_deref().unwrap_or("")) }
                    td { (attempt.failure_code.as_deref().unwrap_or("")) }
                    td.num { (attempt.latency_ms.map(|ms| format!("{ms} ms")).unwrap_or_default()) }
                    td.nowrap { (time(signed, Some(attempt.created_at))) }
                    td.nowrap { (time(signed, Some(attempt.updated_at))) }
                }
            }
        },
    )
}

fn ledger(signed: &Signed, t: &Texts, story: &OperationStory) -> Markup {
    rows_table(
        story.ledger.is_empty(),
        t.no_ledger,
        html! {
            th.num { "#" } th { (t.col_kind) } th.num { (t.available) } th.num { (t.held) }
            th { (t.col_time) } th { (t.col_refund) } th { (t.reason) }
        },
        html! {
            @for entry in &story.ledger {
                tr {
                    td.num { (entry.id) }
                    td { code { (entry.kind.as_str()) } }
                    td.num { (money(entry.available, entry.currency)) }
                    td.num { (money(entry.held, entry.currency)) }
                    td.nowrap { (time(signed, Some(entry.at))) }
                    td.mono { (entry.refund_id.map(|id| id.to_string()).unwrap_or_default()) }
                    td {
                        @if let Some(note) = &entry.note { (note.actor.as_str()) ": " (note.reason) }
                    }
                }
            }
        },
    )
}

/// `{"status": n}` (the API's number), with the decline's code when there is one.
fn status_json(op: &Operation) -> Value {
    match op.decline() {
        Some(decline) => {
            json!({ "status": op.status().number(), "errorCode": decline.code.as_str() })
        }
        None => json!({ "status": op.status().number() }),
    }
}

/// Audits `action`'s change of an operation's status, `before` to `after`.
async fn audit_status(
    posted: &Posted,
    action: &str,
    before: &Operation,
    after: &Operation,
) -> Result<(), Failure> {
    let target = before.id().to_string();
    audit(
        posted,
        action,
        &target,
        Some(status_json(before)),
        Some(status_json(after)),
    )
    .await
}

/// `POST .../callback-retry` (operator+; `refund` names a refund's callback, `change` a
/// dispute change's): queues the failed callback again with a fresh schedule.
pub(crate) async fn retry_callback(posted: Posted, path: web::Path<String>) -> Answer {
    posted.need(Need::Act)?;
    let signed = &posted.signed;
    let id = parse_id(signed, &path)?;
    let change = posted.optional("change")?.filter(|c| !c.is_empty());
    let target = match (posted.optional("refund")?.filter(|r| !r.is_empty()), change) {
        (_, Some(text)) => uuid::Uuid::parse_str(text)
            .map_err(|e| posted.fail(Problem::BadRequest(format!("change: {e}"))))?,
        (Some(text), None) => RefundId::parse(text)
            .map_err(|e| posted.fail(Problem::BadRequest(format!("refund: {e}"))))?
            .as_uuid(),
        (None, None) => id.as_uuid(),
    };
    let (queued, code) = queue_again(&posted, target).await?;
    Ok(back(&operation_page(id), queued, code))
}

/// `POST .../cancel` (operator+): asks the acquirer to cancel the processing operation and
/// applies its answer. A refusal is shown as a flash message.
pub(crate) async fn cancel(posted: Posted, path: web::Path<String>) -> Answer {
    posted.need(Need::Act)?;
    let signed = &posted.signed;
    let id = parse_id(signed, &path)?;
    let gateway = &signed.state.ports.gateway;
    let before = signed.ask(gateway.reads().operation(id)).await?;
    let page = operation_page(id);
    let (after, good, code) = match gateway.refunds().cancel_at_provider(id).await {
        Ok(done) => (done, true, "canceled"),
        Err(CancelError::Final(current)) => (*current, false, "already_final"),
        Err(CancelError::NotFound) => return Err(signed.fail(Problem::NotFound)),
        Err(CancelError::NotAtAcquirer) => return Ok(back(&page, false, "not_at_acquirer")),
        Err(CancelError::Unavailable(why)) => {
            tracing::warn!(operation.id = %id, reason = %why, "cancel at the provider: answer not known");
            return Ok(back(&page, false, "provider_unavailable"));
        }
        Err(CancelError::Complete(error)) => return complete_failure(signed, &page, error),
    };
    if after.status() != before.status() || good {
        audit_status(&posted, "operation.cancel", &before, &after).await?;
    }
    Ok(back(&page, good, code))
}

/// A completion that failed: flash for a state that moved on, else the failure page.
fn complete_failure(signed: &Signed, page: &str, error: CompleteError) -> Answer {
    match error {
        CompleteError::InvalidState => Ok(back(page, false, "already_final")),
        CompleteError::NotFound => Err(signed.fail(Problem::NotFound)),
        CompleteError::Unavailable(why) => Err(signed.fail(Problem::Unavailable(why))),
        CompleteError::Unknown(error) => Err(signed.fail(Problem::internal(&error))),
    }
}

/// `POST .../complete` with `outcome=approve|decline` (operator+): the sandbox's completion
/// of a processing sandbox operation (declined as `ProviderDeclined`).
pub(crate) async fn complete(posted: Posted, path: web::Path<String>) -> Answer {
    posted.need(Need::Act)?;
    let signed = &posted.signed;
    let id = parse_id(signed, &path)?;
    let outcome = match posted.field("outcome")? {
        "approve" => Outcome::Approve,
        "decline" => Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined)),
        _ => {
            return Err(posted.fail(Problem::BadRequest(
                "outcome: must be approve or decline".into(),
            )))
        }
    };
    let page = operation_page(id);
    let state = &signed.state;
    let Some(checkout) = &state.ports.checkout else {
        return Ok(back(&page, false, "sandbox_off"));
    };
    let before = signed
        .ask(state.ports.gateway.reads().operation(id))
        .await?;
    if !before.is_sandbox() {
        return Ok(back(&page, false, "not_sandbox"));
    }
    if before.status().is_final() {
        return Ok(back(&page, false, "already_final"));
    }
    let after = match checkout.complete(id, outcome).await {
        Ok(after) => after,
        Err(error) => return complete_failure(signed, &page, error),
    };
    audit_status(&posted, "sandbox.complete", &before, &after).await?;
    Ok(back(&page, true, "completed"))
}
