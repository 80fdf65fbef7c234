//! The API's routes (the endpoints of docs/api.md) and the operational endpoints.
//!
//! Wrong methods on these paths get actix's own empty 405 (with `Allow`), which the edge
//! middleware turns into the contract's JSON; unknown paths get [`not_found`].

mod balance;
mod create;
mod notifications;
mod ops;
mod read;
mod steps;

use actix_web::{web, HttpResponse};
use domain::{Direction, OperationId};
use serde::Serialize;

use crate::dto::view::{Data, OperationView};
use crate::errors::ApiError;

/// The operations one path prefix serves: deposits or withdrawals.
pub trait Kind: 'static {
    const DIRECTION: Direction;
}

/// `/api/v1/deposits...`
pub struct Deposits;

/// `/api/v1/withdrawals...`
pub struct Withdrawals;

impl Kind for Deposits {
    const DIRECTION: Direction = Direction::Deposit;
}

impl Kind for Withdrawals {
    const DIRECTION: Direction = Direction::Withdrawal;
}

/// Mounts `/api/v1/{prefix}` (create, look up by merchantOperationId) and
/// `/api/v1/{prefix}/{id}` (read) for one kind.
fn operations<K: Kind>(cfg: &mut web::ServiceConfig, prefix: &str) {
    cfg.service(
        web::resource(format!("/api/v1/{prefix}"))
            .route(web::post().to(create::create::<K>))
            .route(web::get().to(read::by_reference::<K>)),
    )
    .service(
        web::resource(format!("/api/v1/{prefix}/{{id}}")).route(web::get().to(read::one::<K>)),
    );
}

/// Mounts every route of the API and the operational endpoints.
pub fn configure(cfg: &mut web::ServiceConfig) {
    operations::<Deposits>(cfg, "deposits");
    operations::<Withdrawals>(cfg, "withdrawals");
    cfg.service(web::resource("/api/v1/deposits/{id}/input").route(web::post().to(steps::input)))
        .service(
            web::resource("/api/v1/deposits/{id}/confirm").route(web::post().to(steps::confirm)),
        )
        .service(web::resource("/api/v1/balance").route(web::get().to(balance::balance)))
        .service(
            web::resource("/providers/{name}/notifications")
                .route(web::post().to(notifications::receive)),
        )
        .service(web::resource("/healthz").route(web::get().to(ops::healthz)))
        .service(web::resource("/readyz").route(web::get().to(ops::readyz)))
        .service(web::resource("/metrics").route(web::get().to(ops::metrics)));
}

/// The answer to a path no route knows.
pub async fn not_found() -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound)
}

/// `200` with `{"data": data}`.
fn ok<T: Serialize>(data: T) -> HttpResponse {
    HttpResponse::Ok().json(Data { data })
}

/// `200` with the read shape of `operation` (its `lifetime` as of the gateway's clock now).
fn read_answer(
    state: &crate::state::HttpState,
    operation: &domain::operation::Operation,
) -> HttpResponse {
    ok(OperationView::read(
        operation,
        state.gateway().clock().now(),
    ))
}

/// The `{id}` of the path; a malformed one names no operation.
fn path_id(req: &actix_web::HttpRequest) -> Result<OperationId, ApiError> {
    req.match_info()
        .get("id")
        .and_then(|text| OperationId::parse(text).ok())
        .ok_or(ApiError::NotFound)
}
