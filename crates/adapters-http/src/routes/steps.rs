//! The user's steps on a waiting deposit: `/input` and `/confirm`.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::Direction;

use super::{ok, path_id};
use crate::auth::authenticate;
use crate::body::json_bytes;
use crate::dto::{steps, view::OperationView};
use crate::errors::ApiError;
use crate::json::parse_object;
use crate::state::HttpState;

/// `POST /api/v1/deposits/{id}/input` with `{"fields": {...}}`.
pub async fn input(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let body = json_bytes(&req, payload).await?;
    let merchant = authenticate(&state, &req, Direction::Deposit, &body).await?;
    let values = steps::input(&parse_object(&body)?)?;
    let id = path_id(&req)?;
    let operation = state.gateway().submit_input(&merchant, id, values).await?;
    let now = state.gateway().clock().now();
    Ok(ok(OperationView::read(&operation, now)))
}

/// `POST /api/v1/deposits/{id}/confirm` with `{"code": "..."}`.
pub async fn confirm(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let body = json_bytes(&req, payload).await?;
    let merchant = authenticate(&state, &req, Direction::Deposit, &body).await?;
    let code = steps::confirm(&parse_object(&body)?)?;
    let id = path_id(&req)?;
    let operation = state.gateway().confirm(&merchant, id, &code).await?;
    let now = state.gateway().clock().now();
    Ok(ok(OperationView::read(&operation, now)))
}
