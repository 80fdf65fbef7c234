//! `GET /admin/disputes`: disputes of deposits (appeals and chargebacks), newest first, by
//! merchant, status and kind, with their deadlines. `GET /admin/disputes/{id}`: one dispute,
//! its comment and files (`GET /admin/disputes/{id}/files/{n}` downloads one), and for an open
//! appeal the forms that accept it at an amount or reject it (`POST
//! /admin/disputes/{id}/accept`, `.../reject`; operators and admins), by the same rules as
//! `gateway dispute accept` and `reject`, audited as they are (`dispute.accept`,
//! `dispute.reject`).

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::console::Need;
use domain::dispute::{dispute_text, Dispute, DisputeFilter, DisputeKind, DisputeStatus};
use domain::service::DecideError;
use domain::{format_minor, AmountText, DisputeId, MerchantId};
use maud::{html, Markup};
use serde_json::json;

use super::actions::{audit, back, flash_of, list_page};
use crate::auth::{csrf_field, Posted, Signed};
use crate::i18n::{texts, Texts};
use crate::layout::{flash, money, respond, rows_table};
use crate::paths::{dispute_page, operation_page, DISPUTES};
use crate::shell::{shell, Nav};
use crate::{Answer, Problem};

/// The most disputes one page lists.
const LISTED: u32 = 200;

/// The list's filter from the query: `merchant`, `status`, `kind`, each optional; a
/// malformed one is refused naming it.
fn filter_of(signed: &Signed, req: &HttpRequest) -> Result<DisputeFilter, crate::Failure> {
    let pairs = web::Query::<Vec<(String, String)>>::from_query(req.query_string())
        .map_err(|_| signed.fail(Problem::BadRequest("the query is malformed".into())))?;
    let mut filter = DisputeFilter {
        limit: LISTED,
        ..DisputeFilter::default()
    };
    for (key, value) in pairs.iter().filter(|(_, v)| !v.trim().is_empty()) {
        let value = value.trim();
        let bad = |e: domain::ValueError| signed.fail(Problem::BadRequest(format!("{key}: {e}")));
        match key.as_str() {
            "merchant" => filter.merchant_id = Some(MerchantId::parse(value).map_err(bad)?),
            "status" => filter.status = Some(DisputeStatus::parse(value).map_err(bad)?),
            "kind" => {
                filter.kind = Some(DisputeKind::parse(value).ok_or_else(|| {
                    signed.fail(Problem::BadRequest(
                        "kind: must be appeal or chargeback".into(),
                    ))
                })?)
            }
            _ => {}
        }
    }
    Ok(filter)
}

pub(crate) async fn list(signed: Signed, req: HttpRequest) -> Answer {
    let filter = filter_of(&signed, &req)?;
    let found = signed
        .ask(signed.state.ports.gateway.disputes().list(&filter))
        .await?;
    let t = texts(signed.lang);
    let body = html! {
        (filters(t, &filter))
        (dispute_table(&signed, t, &found, true))
    };
    Ok(list_page(
        &signed,
        &req,
        Nav::Disputes,
        t.nav_disputes,
        body,
    ))
}

fn filters(t: &Texts, filter: &DisputeFilter) -> Markup {
    let merchant = filter.merchant_id.as_ref().map_or("", |m| m.as_str());
    html! {
        form.filters method="get" action=(DISPUTES) {
            label { (t.col_merchant) input type="text" name="merchant" value=(merchant); }
            label { (t.col_status)
                select name="status" {
                    option value="" { "—" }
                    @for s in DisputeStatus::ALL {
                        option value=(s.as_str()) selected[filter.status == Some(s)] { (s.as_str()) }
                    }
                }
            }
            label { (t.dispute_kind)
                select name="kind" {
                    option value="" { "—" }
                    @for k in DisputeKind::ALL {
                        option value=(k.as_str()) selected[filter.kind == Some(k)] { (k.as_str()) }
                    }
                }
            }
            button type="submit" { (t.apply) }
        }
    }
}

/// The disputes as a table, each linking its page; `merchants` shows whose it is.
pub(crate) fn dispute_table(
    signed: &Signed,
    t: &Texts,
    disputes: &[Dispute],
    merchants: bool,
) -> Markup {
    let zone = signed.state.zone();
    rows_table(
        disputes.is_empty(),
        t.no_disputes,
        html! {
            th { (t.dispute) } th { (t.dispute_kind) } th { (t.col_status) } th { (t.reason) }
            th.num { (t.col_amount) }
            @if merchants { th { (t.col_merchant) } th { (t.operation) } }
            th { (t.due_by) } th { (t.col_created) }
        },
        html! {
            @for d in disputes {
                tr {
                    td.mono { a href=(dispute_page(d.id)) { (d.id) } }
                    td { (d.kind.as_str()) }
                    td { (status_badge(d.status)) }
                    td { (d.reason) }
                    td.num { (money(d.amount.minor(), d.currency)) }
                    @if merchants {
                        td.mono { (d.merchant_id.as_str()) }
                        td.mono { a href=(operation_page(d.operation_id)) { (d.operation_id) } }
                    }
                    td.nowrap { (d.due_by.map(|at| zone.format(at)).unwrap_or_else(|| "—".into())) }
                    td.nowrap { (zone.format(d.created_at)) }
                }
            }
        },
    )
}

/// A dispute status as a badge: decided ones in the colour of their outcome.
pub(crate) fn status_badge(status: DisputeStatus) -> Markup {
    let class = match status {
        DisputeStatus::Open | DisputeStatus::UnderReview => "badge b-wait",
        DisputeStatus::Accepted | DisputeStatus::Won => "badge b-ok",
        DisputeStatus::Rejected | DisputeStatus::Lost => "badge b-bad",
    };
    html! { span class=(class) { (status.as_str()) } }
}

/// The `{id}` of the path; a malformed one names no dispute.
fn parse_id(signed: &Signed, text: &str) -> Result<DisputeId, crate::Failure> {
    DisputeId::parse(text).map_err(|_| signed.fail(Problem::NotFound))
}

pub(crate) async fn show(signed: Signed, req: HttpRequest, path: web::Path<String>) -> Answer {
    let id = parse_id(&signed, &path)?;
    let (dispute, files) = signed
        .ask(signed.state.ports.gateway.disputes().with_files(id))
        .await?;
    let t = texts(signed.lang);
    let zone = signed.state.zone();
    let decides = dispute.is_open_appeal() && signed.role.allows(Need::Act);
    let title = format!("{} {}", t.dispute, dispute.id);
    let body = html! {
        h1 { (t.dispute) " " code { (dispute.id) } " " (status_badge(dispute.status)) }
        (flash(flash_of(&req, signed.lang)))
        div.box { table.fields { tbody {
            tr { th { (t.dispute_kind) } td { (dispute.kind.as_str()) } }
            tr { th { (t.operation) } td.mono { a href=(operation_page(dispute.operation_id)) { (dispute.operation_id) } } }
            tr { th { (t.col_merchant) } td.mono { (dispute.merchant_id.as_str()) } }
            tr { th { (t.reason) } td { (dispute.reason) } }
            tr { th { (t.col_amount) } td { (money(dispute.amount.minor(), dispute.currency)) } }
            tr { th { (t.due_by) } td { (dispute.due_by.map(|at| zone.format(at)).unwrap_or_else(|| "—".into())) } }
            tr { th { (t.comment) } td { (dispute.comment.as_deref().unwrap_or("—")) } }
            tr { th { (t.resolution) } td { (dispute.resolution.as_deref().unwrap_or("—")) } }
            tr { th { (t.col_created) } td { (zone.format(dispute.created_at)) } }
            tr { th { (t.col_updated) } td { (zone.format(dispute.updated_at)) } }
        } } }
        div.box {
            h2 { (t.files) }
            (rows_table(files.is_empty(), t.no_files, html! { th { "#" } th { (t.file_name) } th { (t.file_type) } th.num { (t.file_size) } }, html! {
                @for (n, file) in files.iter().enumerate() {
                    tr {
                        td.num { a href=(format!("{}/files/{}", dispute_page(dispute.id), n + 1)) { (n + 1) } }
                        td { (file.file_name) }
                        td { (file.content_type.as_str()) }
                        td.num { (file.data.len()) }
                    }
                }
            }))
        }
        @if decides { (decide_forms(&signed, t, &dispute)) }
    };
    Ok(respond(
        StatusCode::OK,
        signed.lang,
        shell(&signed, Nav::Disputes, &title, body),
    ))
}

/// The forms that accept (at an amount, the claimed one by default) or reject an open appeal.
fn decide_forms(signed: &Signed, t: &Texts, dispute: &Dispute) -> Markup {
    let page = dispute_page(dispute.id);
    let claimed = format_minor(dispute.amount.minor(), dispute.currency);
    html! {
        div.box {
            h2 { (t.decide_appeal) }
            p.muted { (t.decide_appeal_hint) }
            form.filters method="post" action=(format!("{page}/accept")) {
                (csrf_field(&signed.csrf))
                label { (t.col_amount) input.short type="text" name="amount" value=(claimed) inputmode="decimal" required; }
                label { (t.reason) input type="text" name="reason" maxlength="2000" required; }
                button type="submit" { (t.accept) }
            }
            form.filters method="post" action=(format!("{page}/reject")) {
                (csrf_field(&signed.csrf))
                label { (t.reason) input type="text" name="reason" maxlength="2000" required; }
                button type="submit" { (t.reject) }
            }
        }
    }
}

/// `GET /admin/disputes/{id}/files/{n}`: the file as a download of its own type, never shown
/// inline, named `dispute-{id}-{n}` with its type's extension.
pub(crate) async fn file(signed: Signed, path: web::Path<(String, usize)>) -> Answer {
    let (id, n) = path.into_inner();
    let id = parse_id(&signed, &id)?;
    let (_, files) = signed
        .ask(signed.state.ports.gateway.disputes().with_files(id))
        .await?;
    let file = n
        .checked_sub(1)
        .and_then(|i| files.get(i))
        .ok_or_else(|| signed.fail(Problem::NotFound))?;
    // Named by the gateway, with the extension of the type its bytes were checked to be: the
    // merchant's name (shown on the page) could say `.html` or `.bat` of a file that only
    // begins like a PDF.
    let name = format!("dispute-{id}-{n}.{}", file.content_type.extension());
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, file.content_type.as_str()))
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!(r#"attachment; filename="{name}""#),
        ))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .body(file.data.clone()))
}

/// The form's `reason`: 1 to 2000 characters once trimmed.
fn reason_of(posted: &Posted) -> Result<String, crate::Failure> {
    match dispute_text(posted.field("reason")?) {
        Ok(Some(reason)) => Ok(reason),
        Ok(None) => Err(posted.fail(Problem::BadRequest("reason: must not be empty".into()))),
        Err(e) => Err(posted.fail(Problem::BadRequest(format!("reason: {e}")))),
    }
}

/// `POST /admin/disputes/{id}/accept` with `amount` and `reason` (operators).
pub(crate) async fn accept(posted: Posted, path: web::Path<String>) -> Answer {
    posted.need(Need::Act)?;
    let id = parse_id(&posted.signed, &path)?;
    let reason = reason_of(&posted)?;
    let amount = posted
        .optional("amount")?
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(AmountText::parse)
        .transpose()
        .map_err(|e| posted.fail(Problem::BadRequest(format!("amount: {e}"))))?;
    let decided = posted
        .signed
        .state
        .ports
        .gateway
        .disputes()
        .accept(id, amount, Some(reason))
        .await;
    finish(&posted, id, "dispute.accept", decided).await
}

/// `POST /admin/disputes/{id}/reject` with `reason` (operators).
pub(crate) async fn reject(posted: Posted, path: web::Path<String>) -> Answer {
    posted.need(Need::Act)?;
    let id = parse_id(&posted.signed, &path)?;
    let reason = reason_of(&posted)?;
    let decided = posted
        .signed
        .state
        .ports
        .gateway
        .disputes()
        .reject(id, Some(reason))
        .await;
    finish(&posted, id, "dispute.reject", decided).await
}

/// Audits a decision and goes back to the dispute's page with what happened.
async fn finish(
    posted: &Posted,
    id: DisputeId,
    action: &str,
    decided: Result<Dispute, DecideError>,
) -> Answer {
    let page = dispute_page(id);
    match decided {
        Ok(done) => {
            let after = json!({
                "status": done.status.as_str(),
                "amount": format_minor(done.amount.minor(), done.currency),
                "resolution": done.resolution,
            });
            let before = Some(json!({"status": "open"}));
            audit(posted, action, &id.to_string(), before, Some(after)).await?;
            Ok(back(&page, true, "dispute_decided"))
        }
        Err(DecideError::NotOpenAppeal) => Ok(back(&page, false, "dispute_not_open")),
        Err(DecideError::AmountTooSmall) => Ok(back(&page, false, "dispute_amount_too_small")),
        Err(DecideError::InsufficientBalance) => {
            Ok(back(&page, false, "dispute_insufficient_balance"))
        }
        Err(DecideError::Invalid(errors)) => {
            let why = errors.0.first().map_or("invalid", |e| e.message.as_str());
            Err(posted.fail(Problem::BadRequest(format!("amount: {why}"))))
        }
        Err(DecideError::NotFound) => Err(posted.fail(Problem::NotFound)),
        Err(DecideError::Unavailable(why)) => Err(posted.fail(Problem::Unavailable(why))),
        Err(DecideError::Unknown(e)) => Err(posted.fail(Problem::internal(&e))),
    }
}
