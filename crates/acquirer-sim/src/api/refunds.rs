//! Refunds: `POST /v1/payments/{id}/refunds`, `GET /v1/refunds?reference=`, `GET /v1/refunds/{id}`.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::Value;

use super::{idempotency_key, reference, Answer, ReferenceQuery};
use crate::error::ApiError;
use crate::sim::Sim;
use crate::store::{Created, NewRefund, RefundRefused};

/// Mounts the refund routes.
pub fn routes(config: &mut web::ServiceConfig) {
    config
        .route("/payments/{id}/refunds", web::post().to(create))
        .route("/refunds", web::get().to(by_reference))
        .route("/refunds/{id}", web::get().to(by_id));
}

#[derive(Debug, Deserialize)]
struct CreateBody {
    reference: String,
    amount: i64,
}

#[tracing::instrument(skip_all, fields(payment.id = %payment_id))]
async fn create(
    request: HttpRequest,
    sim: web::Data<Sim>,
    payment_id: web::Path<String>,
    body: web::Json<Value>,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency_key(&request)?;
    let body = body.into_inner();
    let parsed: CreateBody = serde_json::from_value(body.clone())
        .map_err(|error| ApiError::BadRequest(error.to_string()))?;
    if parsed.reference.trim().is_empty() {
        return Err(ApiError::BadRequest("reference must not be empty".into()));
    }
    let new = NewRefund {
        key,
        request: body,
        reference: parsed.reference,
        amount: parsed.amount,
    };
    let created = sim
        .clone()
        .into_inner()
        .create_refund(&payment_id, new)
        .map_err(|refused| match refused {
            RefundRefused::NoPayment => ApiError::NotFound,
            RefundRefused::NotRefundable | RefundRefused::OverAmount => {
                ApiError::InvalidRequest(refused.to_string())
            }
        })?;
    Ok(match created {
        Created::New(refund) => HttpResponse::Created().json(refund.view()),
        Created::Repeat(refund) => HttpResponse::Ok().json(refund.view()),
        Created::Conflict(refund) => HttpResponse::build(StatusCode::CONFLICT).json(refund.view()),
    })
}

async fn by_reference(sim: web::Data<Sim>, query: web::Query<ReferenceQuery>) -> Answer {
    let refund = sim
        .refund_by_reference(&reference(query)?)
        .ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(refund.view()))
}

async fn by_id(sim: web::Data<Sim>, id: web::Path<String>) -> Answer {
    let refund = sim.refund(&id).ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(refund.view()))
}
