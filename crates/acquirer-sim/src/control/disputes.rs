//! Disputes on the control listener: `POST /_sim/payments/{reference}/dispute` opens one,
//! `POST /_sim/disputes/{id}/resolve` decides it.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::error::ApiError;
use crate::model::Outcome;
use crate::sim::Sim;
use crate::store::{DisputeRefused, NewDispute};

/// Mounts the dispute routes.
pub fn routes(config: &mut web::ServiceConfig) {
    config
        .route("/_sim/payments/{reference}/dispute", web::post().to(open))
        .route("/_sim/disputes/{id}/resolve", web::post().to(resolve));
}

/// A JSON body that may be left out: an empty body is `{}`.
fn optional_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let text = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}".as_slice()
    } else {
        body
    };
    serde_json::from_slice(text).map_err(|error| ApiError::BadRequest(error.to_string()))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OpenBody {
    amount: Option<i64>,
    due_in_seconds: Option<i64>,
}

async fn open(
    sim: web::Data<Sim>,
    reference: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let body: OpenBody = optional_json(&body)?;
    let new = NewDispute {
        reference: reference.into_inner(),
        amount: body.amount,
        due_in_seconds: body.due_in_seconds,
    };
    let dispute = sim
        .clone()
        .into_inner()
        .open_dispute(new)
        .map_err(|refused| match refused {
            DisputeRefused::NoPayment => ApiError::NotFound,
            DisputeRefused::NotDisputable => ApiError::WrongState(refused.to_string()),
            DisputeRefused::BadAmount | DisputeRefused::BadDueIn => {
                ApiError::InvalidRequest(refused.to_string())
            }
        })?;
    Ok(HttpResponse::Created().json(serde_json::json!({"disputeId": dispute.id})))
}

#[derive(Debug, Deserialize)]
struct ResolveBody {
    /// Any JSON value: only `"won"` and `"lost"` are outcomes, anything else is 422.
    status: Option<serde_json::Value>,
}

async fn resolve(
    sim: web::Data<Sim>,
    id: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let body: ResolveBody = optional_json(&body)?;
    let outcome = body
        .status
        .as_ref()
        .and_then(serde_json::Value::as_str)
        .and_then(Outcome::parse)
        .ok_or_else(|| ApiError::InvalidRequest("status must be won or lost".into()))?;
    Ok(
        match sim
            .resolve_dispute(&id, outcome)
            .ok_or(ApiError::NotFound)?
        {
            Ok(dispute) => HttpResponse::Ok().json(dispute.view()),
            Err(dispute) => HttpResponse::build(StatusCode::CONFLICT).json(dispute.view()),
        },
    )
}
