//! Operational endpoints outside `/api/v1`, without signatures.

use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::errors::ApiError;
use crate::state::HttpState;

/// `GET /healthz`: the process is alive.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// `GET /readyz`: 200 when the database answers, 503 otherwise.
pub async fn readyz(state: web::Data<HttpState>) -> Result<HttpResponse, ApiError> {
    if state.readiness().ready().await {
        Ok(HttpResponse::Ok().json(json!({"status": "ready"})))
    } else {
        Err(ApiError::Unavailable("readiness check failed".into()))
    }
}

/// `GET /metrics`: every metric of the shared registry in the Prometheus text format.
pub async fn metrics(state: web::Data<HttpState>) -> Result<HttpResponse, ApiError> {
    let text = state
        .metrics()
        .render()
        .map_err(|e| ApiError::Internal(e.into()))?;
    Ok(HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(text))
}
