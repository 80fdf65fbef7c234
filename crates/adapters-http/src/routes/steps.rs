//! The user's steps on a waiting deposit: `/input` and `/confirm`.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::signature::Binding;
use domain::Direction;

use super::{path_id, read_answer, signed_object};
use crate::dto::steps;
use crate::errors::ApiError;
use crate::state::HttpState;

/// `POST /api/v1/deposits/{id}/input` with `{"fields": {...}}`.
pub async fn input(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (merchant, body) =
        signed_object(&state, &req, payload, Direction::Deposit, Binding::Object).await?;
    let values = steps::input(&body)?;
    let operation = (state.gateway())
        .steps()
        .submit_input(&merchant, path_id(&req)?, values)
        .await?;
    read_answer(state.gateway(), &operation).await
}

/// `POST /api/v1/deposits/{id}/confirm` with `{"code": "..."}`.
pub async fn confirm(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (merchant, body) =
        signed_object(&state, &req, payload, Direction::Deposit, Binding::Object).await?;
    let code = steps::confirm(&body)?;
    let operation = (state.gateway())
        .steps()
        .confirm(&merchant, path_id(&req)?, &code)
        .await?;
    read_answer(state.gateway(), &operation).await
}
