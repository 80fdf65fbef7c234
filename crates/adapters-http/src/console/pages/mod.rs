//! The console's pages and actions, one module per page, and the routes that reach them.

mod audit;
mod callbacks;
mod discrepancies;
mod merchants;
mod operation;
mod operations;
mod overview;
mod providers;
mod routes;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::ports::{Chain, RetryOutcome};
use serde_json::Value;

use super::auth::{self, Posted, Signed};
use super::i18n::{flash_text, texts};
use super::layout::{respond, see_other};
use super::{Answer, ConsoleState, Failure, Problem};
use crate::pages::Lang;

/// The overview, where a sign-in leads.
pub(crate) const OVERVIEW: &str = "/admin";

/// Registers every console route under `/admin`, with `state`.
pub(crate) fn configure(cfg: &mut web::ServiceConfig, state: web::Data<ConsoleState>) {
    cfg.service(
        web::scope("/admin")
            .app_data(state)
            .service(page("", "GET").route(web::get().to(overview::show)))
            .service(page("/", "GET").route(web::get().to(overview::show)))
            .service(
                page("/login", "GET, POST")
                    .route(web::get().to(auth::show_login))
                    .route(web::post().to(auth::sign_in)),
            )
            .service(page("/logout", "POST").route(web::post().to(auth::sign_out)))
            .service(page("/ledger/verify", "POST").route(web::post().to(overview::verify)))
            .service(page("/operations", "GET").route(web::get().to(operations::list)))
            .service(page("/operations.csv", "GET").route(web::get().to(operations::export)))
            .service(page("/operations/{id}", "GET").route(web::get().to(operation::show)))
            .service(
                page("/operations/{id}/callback-retry", "POST")
                    .route(web::post().to(operation::retry_callback)),
            )
            .service(
                page("/operations/{id}/cancel", "POST").route(web::post().to(operation::cancel)),
            )
            .service(
                page("/operations/{id}/complete", "POST")
                    .route(web::post().to(operation::complete)),
            )
            .service(page("/callbacks", "GET").route(web::get().to(callbacks::list)))
            .service(page("/callbacks/{id}/retry", "POST").route(web::post().to(callbacks::retry)))
            .service(
                page("/callbacks/{id}/send-now", "POST").route(web::post().to(callbacks::send_now)),
            )
            .service(
                page("/discrepancies/{id}/resolve", "POST")
                    .route(web::post().to(operation::resolve_discrepancy)),
            )
            .service(page("/merchants", "GET").route(web::get().to(merchants::list)))
            .service(
                page("/merchants/{id}/enable", "POST").route(web::post().to(merchants::enable)),
            )
            .service(
                page("/merchants/{id}/disable", "POST").route(web::post().to(merchants::disable)),
            )
            .service(
                page("/merchants/{id}/balance", "POST").route(web::post().to(merchants::balance)),
            )
            .service(page("/routes", "GET").route(web::get().to(routes::list)))
            .service(page("/routes/{id}/enable", "POST").route(web::post().to(routes::enable)))
            .service(page("/routes/{id}/disable", "POST").route(web::post().to(routes::disable)))
            .service(page("/routes/{id}/priority", "POST").route(web::post().to(routes::priority)))
            .service(page("/providers", "GET").route(web::get().to(providers::list)))
            .service(
                page("/providers/{name}/enable", "POST").route(web::post().to(providers::enable)),
            )
            .service(
                page("/providers/{name}/disable", "POST").route(web::post().to(providers::disable)),
            )
            .service(page("/audit", "GET").route(web::get().to(audit::list)))
            .default_service(web::to(not_found)),
    );
}

/// A console path whose wrong methods answer an HTML 405 naming the `allow`ed ones.
fn page(path: &str, allow: &'static str) -> actix_web::Resource {
    web::resource(path).default_service(web::to(move |req: HttpRequest| async move {
        let lang = Lang::of(&req);
        let t = texts(lang);
        let body = maud::html! {
            h1 { (t.method_title) }
            p { (t.method_hint) " " code { (allow) } }
        };
        let mut answer = respond(
            StatusCode::METHOD_NOT_ALLOWED,
            lang,
            super::layout::bare_shell(lang, t.method_title, body, None),
        );
        answer
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static(allow));
        answer
    }))
}

/// Any other path under `/admin`: an HTML 404.
async fn not_found(req: HttpRequest) -> Result<HttpResponse, Failure> {
    Err(Failure::new(Lang::of(&req), Problem::NotFound))
}

/// The flash message a page's `done=` or `error=` parameter names (after an action's
/// redirect); unknown codes show nothing.
fn flash_of(req: &HttpRequest, lang: Lang) -> Option<(bool, &'static str)> {
    let pairs = web::Query::<Vec<(String, String)>>::from_query(req.query_string()).ok()?;
    pairs.iter().find_map(|(key, code)| match key.as_str() {
        "done" => flash_text(lang, code).map(|text| (true, text)),
        "error" => flash_text(lang, code).map(|text| (false, text)),
        _ => None,
    })
}

/// `303` to `path` with a flash code (`done=` when `good`, else `error=`).
fn back(path: &str, good: bool, code: &str) -> HttpResponse {
    let key = if good { "done" } else { "error" };
    see_other(&format!("{path}?{key}={code}"))
}

/// Audits a change of `target`'s enabled flag from `was` to `now` (`{kind}.enable` or
/// `{kind}.disable`) and answers `303` back to `list` with the flash `{kind}_enabled` or
/// `{kind}_disabled`.
async fn toggled(
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
async fn queue_again(posted: &Posted, target: uuid::Uuid) -> Result<(bool, &'static str), Failure> {
    let signed = &posted.signed;
    let state = &signed.state;
    let retried = state
        .ports
        .outbox
        .retry(target, state.now())
        .await
        .map_err(|e| signed.fail(e))?;
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
async fn audit(
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
