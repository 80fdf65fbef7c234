//! The user's steps on a waiting deposit: `/input` and `/confirm`.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::merchant::Merchant;
use domain::Direction;
use serde_json::{Map, Value};

use super::{path_id, read_answer};
use crate::auth::authenticate;
use crate::body::json_bytes;
use crate::dto::steps;
use crate::errors::ApiError;
use crate::json::parse_object;
use crate::state::HttpState;

/// `POST /api/v1/deposits/{id}/input` with `{"fields": {...}}`.
pub async fn input(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (merchant, body) = signed_body(&state, &req, payload).await?;
    let values = steps::input(&body)?;
    let operation = (state.gateway())
        .submit_input(&merchant, path_id(&req)?, values)
        .await?;
    Ok(read_answer(&state, &operation))
}

/// `POST /api/v1/deposits/{id}/confirm` with `{"code": "..."}`.
pub async fn confirm(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (merchant, body) = signed_body(&state, &req, payload).await?;
    let code = steps::confirm(&body)?;
    let operation = (state.gateway())
        .confirm(&merchant, path_id(&req)?, &code)
        .await?;
    Ok(read_answer(&state, &operation))
}

/// The deposit merchant who signed this step, and the step's JSON object.
async fn signed_body(
    state: &HttpState,
    req: &HttpRequest,
    payload: web::Payload,
) -> Result<(Merchant, Map<String, Value>), ApiError> {
    let body = json_bytes(req, payload).await?;
    let merchant = authenticate(state, req, Direction::Deposit, &body).await?;
    Ok((merchant, parse_object(&body)?))
}
