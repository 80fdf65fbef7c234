//! The API's routes (the endpoints of docs/api.md) and the operational endpoints.
//!
//! Wrong methods on these paths get actix's own empty 405 (with `Allow`), which the edge
//! middleware turns into the contract's JSON; unknown paths get [`not_found`].

mod balance;
mod callbacks;
mod cancel;
mod create;
mod disputes;
pub(crate) mod notifications;
mod ops;
mod read;
mod refunds;
mod steps;

use std::future::Future;

use actix_web::{web, HttpRequest, HttpResponse};
use domain::merchant::Merchant;
use domain::operation::Operation;
use domain::service::Gateway;
use domain::signature::Binding;
use domain::{Direction, OperationId};
use serde::Serialize;
use serde_json::{Map, Value};
use tracing::Instrument;

use crate::auth::authenticate;
use crate::body::json_bytes;
use crate::dto::view::{Data, OperationView};
use crate::errors::ApiError;
use crate::json::parse_object;
use crate::state::HttpState;

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

/// Mounts `/api/v1/{prefix}` (create, look up by merchantOperationId),
/// `/api/v1/{prefix}/{id}` (read) and `/api/v1/{prefix}/{id}/cancel` for one kind.
fn operations<K: Kind>(cfg: &mut web::ServiceConfig, prefix: &str) {
    cfg.service(
        web::resource(format!("/api/v1/{prefix}"))
            .route(web::post().to(create::create::<K>))
            .route(web::get().to(read::by_reference::<K>)),
    )
    .service(web::resource(format!("/api/v1/{prefix}/{{id}}")).route(web::get().to(read::one::<K>)))
    .service(
        web::resource(format!("/api/v1/{prefix}/{{id}}/cancel"))
            .route(web::post().to(cancel::cancel::<K>)),
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
        .service(
            web::resource("/api/v1/deposits/{id}/refunds").route(web::post().to(refunds::create)),
        )
        .service(
            web::resource("/api/v1/deposits/{id}/refunds/{refund_id}")
                .route(web::get().to(refunds::one)),
        )
        .service(
            web::resource("/api/v1/deposits/{id}/appeals").route(web::post().to(disputes::appeal)),
        )
        .service(web::resource("/api/v1/disputes/{dispute_id}").route(web::get().to(disputes::one)))
        .service(
            web::resource("/api/v1/disputes/{dispute_id}/evidence")
                .route(web::post().to(disputes::evidence)),
        )
        .service(web::resource("/api/v1/balance").route(web::get().to(balance::balance)))
        .service(
            web::resource("/api/v1/balance/transactions")
                .route(web::get().to(balance::transactions)),
        )
        .service(web::resource("/api/v1/callbacks").route(web::get().to(callbacks::list)))
        .service(web::resource("/api/v1/callbacks/replay").route(web::post().to(callbacks::replay)))
        .service(
            web::resource("/api/v1/callbacks/{callback_id}/retry")
                .route(web::post().to(callbacks::retry)),
        )
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

/// `200` with the read shape of `operation`: a deposit's with its refunds and disputes,
/// `lifetime` as of the gateway's clock now.
pub(crate) async fn read_answer(
    gateway: &Gateway,
    operation: &Operation,
) -> Result<HttpResponse, ApiError> {
    let refunds = gateway.reads().refunds_of(operation).await?;
    let disputes = gateway.disputes().of(operation).await?;
    let now = gateway.clock().now();
    Ok(ok(OperationView::read(operation, &refunds, &disputes, now)))
}

/// The JSON body of a POST with the merchant who signed it with its secret for `direction`,
/// in a version `binding` allows: content type and size (415, 413), signature and rate limit
/// (401, 429), then one JSON object (400).
async fn signed_object(
    state: &HttpState,
    req: &HttpRequest,
    payload: web::Payload,
    direction: Direction,
    binding: Binding,
) -> Result<(Merchant, Map<String, Value>), ApiError> {
    let body = json_bytes(req, payload).await?;
    let merchant = authenticate(state, req, direction, &body, binding).await?;
    Ok((merchant, parse_object(&body)?))
}

/// A signed POST on one operation (`.../{id}/...`): the signed body as `read` judges it (400),
/// before the id in the path is looked at (404).
async fn signed_on<T, E>(
    state: &HttpState,
    req: &HttpRequest,
    payload: web::Payload,
    direction: Direction,
    read: impl FnOnce(&Map<String, Value>) -> Result<T, E>,
) -> Result<(Merchant, OperationId, T), ApiError>
where
    ApiError: From<E>,
{
    let (merchant, body) = signed_object(state, req, payload, direction, Binding::Object).await?;
    let value = read(&body)?;
    Ok((merchant, path_id(req)?, value))
}

/// Runs a use case that may move money (`what`, for the log) as a task of its own and waits
/// for it: if the client goes away, actix drops the handler, but a use case that has
/// committed goes on calling its provider and recording the answer. Boxed, so spawning it
/// moves a pointer rather than the use case's whole state machine.
async fn detached<T, E>(
    what: &'static str,
    work: impl Future<Output = Result<T, E>> + 'static,
) -> Result<T, ApiError>
where
    T: 'static,
    E: 'static,
    ApiError: From<E>,
{
    let task = actix_web::rt::spawn(Box::pin(work).in_current_span());
    let done = task.await.map_err(|failed| {
        ApiError::Internal(anyhow::anyhow!("the {what} task failed: {failed}"))
    })?;
    Ok(done?)
}

/// The `{id}` of the path; a malformed one names no operation.
fn path_id(req: &HttpRequest) -> Result<OperationId, ApiError> {
    req.match_info()
        .get("id")
        .and_then(|text| OperationId::parse(text).ok())
        .ok_or(ApiError::NotFound)
}
