//! HTTP adapter: the signed JSON API of docs/api.md, health and metrics on actix-web.
//! The API's JSON is written here, callback bodies too ([`JsonCallbackFormat`]), from one
//! shape of a money movement.
//!
//! The app builds an [`HttpState`] around the domain [`Gateway`](domain::service::Gateway) and
//! calls [`server`] with a bound listener. Every request passes, in the contract's order:
//! path and method (404/405), content type and size (415/413), signature (401), rate limit
//! (429), body parse and validation (400); the domain does the rest and its errors are mapped
//! in [`errors`].

pub mod auth;
pub mod body;
mod dto;
pub mod json;
pub mod pages;
mod rate_limit;
mod routes;
mod state;

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod tests;

// The edge, its errors and its metrics are shared with the operator console (`web-edge`).
use web_edge::metrics;
pub use web_edge::{edge, errors};

#[cfg(test)]
use testkit::fixtures as test_support;

use std::net::TcpListener;
use std::num::NonZeroUsize;

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{web, App, HttpServer};

pub use dto::callback::JsonCallbackFormat;
pub use errors::ApiError;
pub use state::{AlwaysReady, HttpSettings, HttpState, Readiness, ReadyFn};

/// The read shape of `operation` (docs/api.md, "Creation and read shapes"): exactly the
/// `data` that `GET /api/v1/deposits/{id}` or `GET /api/v1/withdrawals/{id}` answers, with
/// `lifetime` counted at `now`. `refunds` are the operation's refunds, oldest first
/// (`Reads::refunds_of`; none for a withdrawal), and `disputes` its disputes
/// (`Disputes::of`). For other tools that show operations (the CLI's `operation show`), so
/// what they show never differs from the API.
pub fn read_shape(
    operation: &domain::operation::Operation,
    refunds: &[domain::refund::Refund],
    disputes: &[domain::dispute::Dispute],
    now: domain::Timestamp,
) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::to_value(dto::view::OperationView::read(
        operation, refunds, disputes, now,
    ))
}

/// A dispute as the API answers it and its callbacks report it (`Dispute`), for the CLI and
/// the console.
pub fn dispute_shape(dispute: &domain::dispute::Dispute) -> serde_json::Value {
    serde_json::to_value(dto::dispute::DisputeView::new(dispute)).unwrap_or_default()
}

/// How long an idle client connection is kept open. Clients keep idle connections pooled
/// for longer than actix-web's default of 5 s (Go's and reqwest's pools for 90 s, a load
/// balancer in front for 60 s or more), and a request sent on a connection just as the server
/// closes it fails without an answer; the longer the server keeps them, the rarer that is.
/// 75 s, as nginx does, outlasts a load balancer's usual 60 s.
pub const KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(75);

/// Serves the API on `listener` (bind `127.0.0.1:0` in tests and read the port from it) with
/// `workers` worker threads, or actix-web's default (one per core) when `None`.
///
/// `extra` mounts more routes on the same app (hosted pages, sandbox routes); they get the
/// same request ids, metrics and JSON error bodies, and can take `web::Data<HttpState>`.
/// The returned server runs when awaited or spawned; stop it through its handle.
pub fn server(
    listener: TcpListener,
    state: HttpState,
    workers: Option<NonZeroUsize>,
    extra: impl Fn(&mut web::ServiceConfig) + Clone + Send + 'static,
) -> std::io::Result<Server> {
    let state = web::Data::new(state);
    let mut server =
        HttpServer::new(move || app(state.clone(), extra.clone())).keep_alive(KEEP_ALIVE);
    if let Some(workers) = workers {
        server = server.workers(workers.get());
    }
    Ok(server.listen(listener)?.run())
}

/// The actix app: the edge middleware around the API routes, `extra`, and a JSON 404.
pub(crate) fn app(
    state: web::Data<HttpState>,
    extra: impl FnOnce(&mut web::ServiceConfig),
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let edge = edge::Edge::new(state.metrics().clone());
    App::new()
        .app_data(state)
        .wrap(edge)
        .configure(routes::configure)
        .configure(extra)
        .default_service(web::to(routes::not_found))
}
