//! The discrepancies of one operation, on its page, and `POST /admin/discrepancies/{id}/resolve`
//! with a `note` (admin): marks one resolved by the operator, audited as
//! `discrepancy.resolve`. Resolving changes no status and moves no money; correcting money is
//! a manual entry on the merchants page that names the operation, which resolves its open
//! discrepancies too.

use actix_web::web;
use domain::console::{Actor, Need};
use domain::discrepancy::RecordedDiscrepancy;
use domain::operator::ResolveError;
use maud::{html, Markup};
use serde_json::json;

use super::actions::{audit, back};
use crate::auth::{csrf_field, Posted, Signed};
use crate::i18n::Texts;
use crate::paths::operation_page;
use crate::{Answer, Problem};

/// The action that resolves discrepancy `id`.
fn resolve_path(id: i64) -> String {
    format!("/admin/discrepancies/{id}/resolve")
}

/// Each discrepancy with its state and resolution; an admin gets a form to resolve an open one.
pub(crate) fn discrepancy_table(
    signed: &Signed,
    t: &Texts,
    discrepancies: &[RecordedDiscrepancy],
) -> Markup {
    let admin = signed.role.allows(Need::Administer);
    let zone = signed.state.zone();
    html! {
        div.scroll { table {
            thead { tr {
                th.num { "#" } th { (t.col_provider) } th { (t.reported) } th { (t.col_time) }
                th { (t.col_state) } th { (t.resolution) }
            } }
            tbody {
                @for found in discrepancies {
                    tr {
                        td.num { (found.id) }
                        td { (found.provider) }
                        td { code { (found.reported) } }
                        td.nowrap { (zone.format(found.at)) }
                        @match &found.resolution {
                            Some(done) => {
                                td { span.badge.b-ok { (t.discrepancy_resolved) } }
                                td {
                                    (zone.format(done.at)) " · " (done.actor.as_str()) ": " (done.note.as_str())
                                    @if let Some(entry) = done.ledger_entry { " · " (t.ledger_entry) " #" (entry) }
                                }
                            }
                            None => {
                                td { span.badge.b-bad { (t.discrepancy_open) } }
                                td {
                                    @if admin {
                                        form.inline method="post" action=(resolve_path(found.id)) {
                                            (csrf_field(&signed.csrf))
                                            input type="text" name="note" placeholder=(t.note) maxlength="500" required aria-label=(t.note);
                                            button type="submit" { (t.resolve) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        } }
    }
}

/// `POST /admin/discrepancies/{id}/resolve` with `note` (admin): back to the operation's page.
pub(crate) async fn resolve(posted: Posted, path: web::Path<String>) -> Answer {
    posted.need(Need::Administer)?;
    let signed = &posted.signed;
    let id: i64 = path.parse().map_err(|_| signed.fail(Problem::NotFound))?;
    let note = posted.field("note")?;
    let actor = Actor::operator(&signed.name);
    let operator = &signed.state.ports.operator;
    match operator.resolve_discrepancy(id, &actor, note).await {
        Ok(done) => {
            let after = json!({
                "resolved": true,
                "operationId": done.operation_id.to_string(),
                "note": done.resolution.as_ref().map(|r| r.note.as_str()),
            });
            let before = json!({ "resolved": false });
            audit(
                &posted,
                "discrepancy.resolve",
                &id.to_string(),
                Some(before),
                Some(after),
            )
            .await?;
            Ok(back(
                &operation_page(done.operation_id),
                true,
                "discrepancy_resolved",
            ))
        }
        Err(ResolveError::AlreadyResolved(found)) => Ok(back(
            &operation_page(found.operation_id),
            false,
            "already_resolved",
        )),
        Err(ResolveError::NotFound(_)) => Err(signed.fail(Problem::NotFound)),
        Err(ResolveError::Note(rule)) => {
            Err(posted.fail(Problem::BadRequest(format!("note: {rule}"))))
        }
        Err(ResolveError::Store(e)) => Err(signed.fail(e)),
    }
}
