//! Disputes of a deposit: `POST /api/v1/deposits/{id}/appeals` (signature version 2, a body
//! of up to 4 MiB for its receipt), `POST /api/v1/disputes/{disputeId}/evidence` (a
//! chargeback's evidence, likewise) and `GET /api/v1/disputes/{disputeId}`, with the deposit
//! secret.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::signature::Binding;
use domain::{Direction, DisputeId};

use super::{ok, path_id};
use crate::auth::authenticate;
use crate::body::{json_bytes_within, FILE_BODY_LIMIT};
use crate::dto::dispute::{self, DisputeView};
use crate::errors::ApiError;
use crate::json::parse_object;
use crate::state::HttpState;

/// `POST /api/v1/deposits/{id}/appeals`: the merchant's appeal, answered `{"data":
/// Dispute}` with status `open`. The body is judged (400) before the deposit is looked up
/// (404), and the deposit's state (409) after.
pub async fn appeal(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let body = json_bytes_within(&req, payload, FILE_BODY_LIMIT).await?;
    let merchant = authenticate(&state, &req, Direction::Deposit, &body, Binding::Object).await?;
    let request = dispute::appeal(&parse_object(&body)?)?;
    let deposit = path_id(&req)?;
    let opened = state
        .gateway()
        .disputes()
        .appeal(&merchant, deposit, request)
        .await?;
    Ok(ok(DisputeView::new(&opened)))
}

/// `POST /api/v1/disputes/{disputeId}/evidence`: the merchant's evidence for its open
/// chargeback, stored, then forwarded to the acquirer once; answered `{"data": Dispute}`
/// (`under_review` once the acquirer took it, still `open` while that is not known). The
/// body is judged (400) before the dispute is looked up (404), its state (409) after; 503
/// when nothing reached the acquirer (the evidence may be sent again).
pub async fn evidence(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let body = json_bytes_within(&req, payload, FILE_BODY_LIMIT).await?;
    let merchant = authenticate(&state, &req, Direction::Deposit, &body, Binding::Object).await?;
    let request = dispute::evidence(&parse_object(&body)?)?;
    let id = dispute_id(&req)?;
    let found = state
        .gateway()
        .disputes()
        .evidence(&merchant, id, request)
        .await?;
    Ok(ok(DisputeView::new(&found)))
}

/// The path's dispute id; a malformed one is 404, as an unknown one.
fn dispute_id(req: &HttpRequest) -> Result<DisputeId, ApiError> {
    req.match_info()
        .get("dispute_id")
        .and_then(|text| DisputeId::parse(text).ok())
        .ok_or(ApiError::NotFound)
}

/// `GET /api/v1/disputes/{disputeId}`: one of the merchant's disputes; another merchant's,
/// an unknown or a malformed id is 404.
pub async fn one(state: web::Data<HttpState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let merchant = authenticate(&state, &req, Direction::Deposit, b"", Binding::Any).await?;
    let id = dispute_id(&req)?;
    let found = state.gateway().disputes().read(&merchant, id).await?;
    Ok(ok(DisputeView::new(&found)))
}
