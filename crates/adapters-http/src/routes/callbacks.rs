//! `GET /api/v1/callbacks`, `POST /api/v1/callbacks/{callbackId}/retry` and `POST
//! /api/v1/callbacks/replay`: a merchant's callbacks in one direction, the one `direction`
//! in the query names (read before anything else: it picks the secret). The POSTs take a
//! version-2 signature only, bound to their path.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::callback_log::{CallbackOwner, Requeue};
use domain::merchant::Merchant;
use domain::signature::Binding;
use domain::Direction;
use serde_json::{Map, Value};

use super::{ok, signed_object};
use crate::auth::authenticate;
use crate::dto::callback_log::{self, CallbacksView, Requeued};
use crate::errors::ApiError;
use crate::state::HttpState;

/// Whose callbacks `merchant` signed for.
fn owner(merchant: &Merchant, direction: Direction) -> CallbackOwner {
    CallbackOwner {
        merchant_id: merchant.id.clone(),
        direction,
    }
}

/// A POST under `/api/v1/callbacks`: the query's direction (400), then the body signed with
/// that direction's secret in version 2 (415, 413, 401, 400): whose callbacks, and the body.
async fn signed_post(
    state: &HttpState,
    req: &HttpRequest,
    payload: web::Payload,
) -> Result<(CallbackOwner, Map<String, Value>), ApiError> {
    let direction = callback_log::direction(req.query_string())?;
    let (merchant, body) = signed_object(state, req, payload, direction, Binding::Object).await?;
    Ok((owner(&merchant, direction), body))
}

/// A page of the merchant's callbacks in the query's direction, newest first.
pub async fn list(state: web::Data<HttpState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let direction = callback_log::direction(req.query_string())?;
    let merchant = authenticate(&state, &req, direction, b"", Binding::Any).await?;
    let query = callback_log::read_query(owner(&merchant, direction), req.query_string())?;
    let page = state.gateway().callbacks().page(&query).await?;
    Ok(ok(CallbacksView::new(&page)))
}

/// Sends one callback again on a fresh schedule: `{"requeued": 1}`, or 0 while an attempt at
/// it is under way; 404 for an id that is not one of the merchant's callbacks in this
/// direction. The body is exactly `{}`.
pub async fn retry(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (whose, body) = signed_post(&state, &req, payload).await?;
    callback_log::retry(&body)?;
    let id = req
        .match_info()
        .get("callback_id")
        .and_then(|text| uuid::Uuid::parse_str(text).ok())
        .ok_or(ApiError::NotFound)?;
    let requeued = state
        .gateway()
        .callbacks()
        .requeue(&whose, &Requeue::One(id))
        .await?;
    Ok(ok(Requeued { requeued }))
}

/// Sends again every callback in the body's `status` (failed or held) queued since its
/// `since`, each on a fresh schedule: `{"requeued": N}`.
pub async fn replay(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (whose, body) = signed_post(&state, &req, payload).await?;
    let which = callback_log::replay(&body)?;
    let requeued = state.gateway().callbacks().requeue(&whose, &which).await?;
    Ok(ok(Requeued { requeued }))
}
