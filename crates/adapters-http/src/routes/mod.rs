//! The API's routes (the endpoints of docs/api.md) and the operational endpoints.
//!
//! Wrong methods on these paths get actix's own empty 405 (with `Allow`), which the edge
//! middleware turns into the contract's JSON; unknown paths get [`not_found`].

mod balance;
mod create;
mod ops;
mod read;
mod steps;

use actix_web::{web, HttpResponse};
use domain::OperationId;
use serde::Serialize;

use crate::dto::view::Data;
use crate::errors::ApiError;

/// Mounts every route of the API and the operational endpoints.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/api/v1/deposits")
            .route(web::post().to(create::deposit))
            .route(web::get().to(read::deposit_by_merchant_operation_id)),
    )
    .service(web::resource("/api/v1/deposits/{id}").route(web::get().to(read::deposit)))
    .service(web::resource("/api/v1/deposits/{id}/input").route(web::post().to(steps::input)))
    .service(web::resource("/api/v1/deposits/{id}/confirm").route(web::post().to(steps::confirm)))
    .service(
        web::resource("/api/v1/withdrawals")
            .route(web::post().to(create::withdrawal))
            .route(web::get().to(read::withdrawal_by_merchant_operation_id)),
    )
    .service(web::resource("/api/v1/withdrawals/{id}").route(web::get().to(read::withdrawal)))
    .service(web::resource("/api/v1/balance").route(web::get().to(balance::balance)))
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

/// The `{id}` of the path; a malformed one names no operation.
fn path_id(req: &actix_web::HttpRequest) -> Result<OperationId, ApiError> {
    req.match_info()
        .get("id")
        .and_then(|text| OperationId::parse(text).ok())
        .ok_or(ApiError::NotFound)
}
