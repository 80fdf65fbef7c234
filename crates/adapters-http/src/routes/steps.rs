//! The user's steps on a waiting deposit: `/input` and `/confirm`.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::Direction;

use super::{read_answer, signed_on};
use crate::dto::steps;
use crate::errors::ApiError;
use crate::state::HttpState;

/// `POST /api/v1/deposits/{id}/input` with `{"fields": {...}}`.
pub async fn input(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (merchant, id, values) =
        signed_on(&state, &req, payload, Direction::Deposit, steps::input).await?;
    let operation = (state.gateway())
        .steps()
        .submit_input(&merchant, id, values)
        .await?;
    read_answer(state.gateway(), &operation).await
}

/// `POST /api/v1/deposits/{id}/confirm` with `{"code": "..."}`.
pub async fn confirm(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (merchant, id, code) =
        signed_on(&state, &req, payload, Direction::Deposit, steps::confirm).await?;
    let operation = (state.gateway())
        .steps()
        .confirm(&merchant, id, &code)
        .await?;
    read_answer(state.gateway(), &operation).await
}
