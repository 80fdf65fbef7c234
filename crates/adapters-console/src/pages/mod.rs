//! The console's pages and actions, one module per page, and the routes that reach them.

mod actions;
mod audit;
mod callbacks;
mod discrepancies;
mod disputes;
mod merchants;
mod operation;
mod operations;
mod overview;
mod providers;
mod routes;
mod statements;
mod tariffs;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use super::auth;
use super::i18n::texts;
use super::layout::respond;
use super::{ConsoleState, Failure, Problem};
use web_edge::Lang;

/// The overview, where a sign-in leads.
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
            .service(page("/disputes", "GET").route(web::get().to(disputes::list)))
            .service(page("/disputes/{id}", "GET").route(web::get().to(disputes::show)))
            .service(page("/disputes/{id}/files/{n}", "GET").route(web::get().to(disputes::file)))
            .service(page("/disputes/{id}/accept", "POST").route(web::post().to(disputes::accept)))
            .service(page("/disputes/{id}/reject", "POST").route(web::post().to(disputes::reject)))
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
            .service(
                page("/tariffs", "GET, POST")
                    .route(web::get().to(tariffs::list))
                    .route(web::post().to(tariffs::set)),
            )
            .service(page("/tariffs/remove", "POST").route(web::post().to(tariffs::remove)))
            .service(page("/statements", "GET").route(web::get().to(statements::show)))
            .service(page("/statements.csv", "GET").route(web::get().to(statements::export)))
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
