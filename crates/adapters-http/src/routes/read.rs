//! Reading one operation by id or by merchantOperationId.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::signature::Binding;
use domain::{Direction, MerchantOperationId};
use serde::Deserialize;

use super::{path_id, read_answer, Kind};
use crate::auth::authenticate;
use crate::errors::ApiError;
use crate::state::HttpState;

/// `GET /api/v1/deposits/{id}` and `GET /api/v1/withdrawals/{id}`.
pub async fn one<K: Kind>(
    state: web::Data<HttpState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    by_id(&state, &req, K::DIRECTION).await
}

/// `GET /api/v1/deposits?merchantOperationId=X` and the same of withdrawals.
pub async fn by_reference<K: Kind>(
    state: web::Data<HttpState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    by_merchant_operation_id(&state, &req, K::DIRECTION).await
}

async fn by_id(
    state: &HttpState,
    req: &HttpRequest,
    direction: Direction,
) -> Result<HttpResponse, ApiError> {
    let merchant = authenticate(state, req, direction, b"", Binding::Any).await?;
    let id = path_id(req)?;
    let operation = state
        .gateway()
        .reads()
        .read(&merchant, direction, id)
        .await?;
    read_answer(state.gateway(), &operation).await
}

#[derive(Debug, Deserialize)]
struct Lookup {
    #[serde(rename = "merchantOperationId")]
    merchant_operation_id: Option<String>,
}

async fn by_merchant_operation_id(
    state: &HttpState,
    req: &HttpRequest,
    direction: Direction,
) -> Result<HttpResponse, ApiError> {
    let merchant = authenticate(state, req, direction, b"", Binding::Any).await?;
    const FIELD: &str = "merchantOperationId";
    let query = web::Query::<Lookup>::from_query(req.query_string())
        .map_err(|_| ApiError::field(FIELD, "must be given once, URL-encoded"))?;
    let text = query
        .into_inner()
        .merchant_operation_id
        .ok_or_else(|| ApiError::field(FIELD, "is required"))?;
    let moid = MerchantOperationId::parse(&text).map_err(|e| ApiError::field(FIELD, &e.0))?;
    let operation = state
        .gateway()
        .reads()
        .read_by_merchant_operation_id(&merchant, direction, &moid)
        .await?;
    read_answer(state.gateway(), &operation).await
}
