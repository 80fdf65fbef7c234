//! What the console's actions share: the flash message a redirect carries, the list page it
//! shows on, the redirect back, the audit entry written after a change, and the two changes
//! several pages offer (enable or disable, queue a failed callback again).

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::ports::{Chain, RetryOutcome};
use maud::{html, Markup};
use serde_json::Value;

use crate::auth::{Posted, Signed};
use crate::i18n::flash_text;
use crate::layout::{flash, respond, see_other};
use crate::shell::{shell, Nav};
use crate::{Answer, Failure, Problem};
use web_edge::Lang;

/// The flash message a page's `done=` or `error=` parameter names (after an action's
/// redirect); unknown codes show nothing.
pub(super) fn flash_of(req: &HttpRequest, lang: Lang) -> Option<(bool, &'static str)> {
    let pairs = web::Query::<Vec<(String, String)>>::from_query(req.query_string()).ok()?;
    pairs.iter().find_map(|(key, code)| match key.as_str() {
        "done" => flash_text(lang, code).map(|text| (true, text)),
        "error" => flash_text(lang, code).map(|text| (false, text)),
        _ => None,
    })
}

/// A list page: its title, the flash message of the action that led back to it, and its
/// table.
pub(super) fn list_page(
    signed: &Signed,
    req: &HttpRequest,
    nav: Nav,
    title: &str,
    table: Markup,
) -> HttpResponse {
    let body = html! {
        h1 { (title) }
        (flash(flash_of(req, signed.lang)))
        div.box { (table) }
    };
    respond(StatusCode::OK, signed.lang, shell(signed, nav, title, body))
}

/// `303` to `path` with a flash code (`done=` when `good`, else `error=`).
pub(super) fn back(path: &str, good: bool, code: &str) -> HttpResponse {
    let key = if good { "done" } else { "error" };
    see_other(&format!("{path}?{key}={code}"))
}

/// Audits a change of `target`'s enabled flag from `was` to `now` (`{kind}.enable` or
/// `{kind}.disable`) and answers `303` back to `list` with the flash `{kind}_enabled` or
/// `{kind}_disabled`.
pub(super) async fn toggled(
    posted: &Posted,
    kind: &str,
    target: &str,
    was: bool,
    now: bool,
    list: &str,
) -> Answer {
    let verb = if now { "enable" } else { "disable" };
    let action = format!("{kind}.{verb}");
    let before = Some(serde_json::json!({ "enabled": was }));
    let after = Some(serde_json::json!({ "enabled": now }));
    audit(posted, &action, target, before, after).await?;
    Ok(back(list, true, &format!("{kind}_{verb}d")))
}

/// Queues `target`'s failed callback (an operation's or a refund's) again and audits it; the
/// flash code of what happened (a held callback, or none failed, changes nothing) and whether
/// it was queued.
pub(super) async fn queue_again(
    posted: &Posted,
    target: uuid::Uuid,
) -> Result<(bool, &'static str), Failure> {
    let signed = &posted.signed;
    let state = &signed.state;
    let retried = signed
        .ask(state.ports.outbox.retry(target, state.now()))
        .await?;
    match retried {
        RetryOutcome::Queued => {
            let before = Some(serde_json::json!({ "state": "failed" }));
            let after = Some(serde_json::json!({ "state": "pending" }));
            audit(posted, "callback.retry", &target.to_string(), before, after).await?;
            Ok((true, "callback_retried"))
        }
        RetryOutcome::Held => Ok((false, "callback_held")),
        RetryOutcome::NotFailed => Ok((false, "no_failed_callback")),
    }
}

/// Writes an audit entry for `posted`'s operator after its change was made. A failure to write
/// it answers a page that says the change was made (never "nothing changed", which would
/// invite a second one).
pub(super) async fn audit(
    posted: &Posted,
    action: &str,
    target: &str,
    before: Option<Value>,
    after: Option<Value>,
) -> Result<(), Failure> {
    let signed: &Signed = &posted.signed;
    signed
        .state
        .audit(&signed.name, action, target, before, after)
        .await
        .map_err(|e| {
            let correlation = uuid::Uuid::new_v4().to_string();
            tracing::error!(
                correlation.id = %correlation, action, target, error = %Chain(&e),
                "console change made but not audited"
            );
            signed.fail(Problem::Unaudited { correlation })
        })
}
