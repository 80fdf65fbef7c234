//! The Acquirer API (`/v1`, bearer auth and faults) and the payin pages, on `--bind`.

mod disputes;
mod evidence;
mod faults;
mod payments;
mod refunds;

use actix_web::{middleware::from_fn, web};
use serde::Deserialize;

use crate::error::ApiError;

/// Mounts `/v1` behind auth and the faults, and the payin pages beside it.
pub fn configure(config: &mut web::ServiceConfig) {
    config
        .app_data(json_config())
        .service(
            web::scope("/v1")
                .wrap(from_fn(faults::inject))
                .wrap(from_fn(faults::authenticate))
                .configure(payments::routes)
                .configure(refunds::routes)
                .configure(disputes::routes),
        )
        .configure(crate::page::routes);
}

/// JSON bodies that do not parse answer 400 with the error body.
pub fn json_config() -> web::JsonConfig {
    web::JsonConfig::default()
        .error_handler(|error, _| ApiError::BadRequest(error.to_string()).into())
}

/// What a handler answers.
type Answer = Result<actix_web::HttpResponse, ApiError>;

/// The query of the reads by reference.
#[derive(Debug, Deserialize)]
struct ReferenceQuery {
    reference: Option<String>,
}

/// The `reference` query parameter, required.
fn reference(query: web::Query<ReferenceQuery>) -> Result<String, ApiError> {
    query
        .into_inner()
        .reference
        .ok_or_else(|| ApiError::BadRequest("the reference query parameter is required".into()))
}

/// The `Idempotency-Key` header, required on creations.
fn idempotency_key(request: &actix_web::HttpRequest) -> Result<String, ApiError> {
    request
        .headers()
        .get("idempotency-key")
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
        .filter(|key| !key.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| ApiError::BadRequest("the Idempotency-Key header is required".into()))
}
