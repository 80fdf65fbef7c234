//! Refunds of a deposit: `POST /api/v1/deposits/{id}/refunds` and
//! `GET /api/v1/deposits/{id}/refunds/{refundId}`, signed with the deposit secret.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::signature::Binding;
use domain::{Direction, RefundId};
use serde_json::{Map, Value};

use super::{detached, ok, path_id, signed_on};
use crate::auth::authenticate;
use crate::dto::refund::{self, RefundView};
use crate::errors::ApiError;
use crate::json::canonical;
use crate::state::HttpState;

/// `POST /api/v1/deposits/{id}/refunds`: a new refund and a replay both answer
/// `{"data": Refund}`. The body is judged (400) before the deposit is looked up (404).
pub async fn create(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let read =
        |body: &Map<String, Value>| Ok::<_, ApiError>((refund::request(body)?, canonical(body)));
    let (merchant, deposit, (request, signed)) =
        signed_on(&state, &req, payload, Direction::Deposit, read).await?;
    let gateway = state.gateway().clone();
    // As a creation: once the refund is committed, its provider call and the recording of
    // its answer go on even if the client goes away.
    let created = detached("refund", async move {
        gateway
            .refunds()
            .refund(&merchant, deposit, request, &signed)
            .await
    })
    .await?;
    Ok(ok(RefundView::new(&created.refund)))
}

/// `GET /api/v1/deposits/{id}/refunds/{refundId}`: one refund of the merchant's deposit; an
/// unknown or malformed id of either is 404.
pub async fn one(state: web::Data<HttpState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let merchant = authenticate(&state, &req, Direction::Deposit, b"", Binding::Any).await?;
    let deposit = path_id(&req)?;
    let id = req
        .match_info()
        .get("refund_id")
        .and_then(|text| RefundId::parse(text).ok())
        .ok_or(ApiError::NotFound)?;
    let found = state
        .gateway()
        .refunds()
        .read_refund(&merchant, deposit, id)
        .await?;
    Ok(ok(RefundView::new(&found)))
}
