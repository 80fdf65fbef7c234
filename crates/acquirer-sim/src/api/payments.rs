//! `/v1/payments`: create, read, cancel.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::{idempotency_key, reference, Answer, ReferenceQuery};
use crate::error::ApiError;
use crate::model::{Kind, Payment, Recipient};
use crate::sim::Sim;
use crate::store::{Cancel, Created, NewPayment, PaymentRefused};

/// Mounts the payment routes.
pub fn routes(config: &mut web::ServiceConfig) {
    config
        .service(
            web::resource("/payments")
                .route(web::post().to(create))
                .route(web::get().to(by_reference)),
        )
        .route("/payments/{id}", web::get().to(by_id))
        .route("/payments/{id}/cancel", web::post().to(cancel));
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateBody {
    reference: String,
    kind: Kind,
    method: String,
    amount: i64,
    currency: String,
    return_url: Option<String>,
    notify_url: Option<String>,
    not_after: Option<String>,
    expires_at: Option<String>,
    payout: Option<PayoutBody>,
}

#[derive(Debug, Deserialize)]
struct PayoutBody {
    pan: Option<String>,
    phone: Option<String>,
}

fn time_field(name: &str, value: Option<&str>) -> Result<Option<OffsetDateTime>, ApiError> {
    value
        .map(|text| {
            OffsetDateTime::parse(text, &Rfc3339)
                .map_err(|_| ApiError::BadRequest(format!("{name} is not an RFC 3339 time")))
        })
        .transpose()
}

fn recipient(kind: Kind, payout: Option<PayoutBody>) -> Result<Option<Recipient>, ApiError> {
    match (kind, payout) {
        (Kind::Payin, _) => Ok(None),
        (
            Kind::Payout,
            Some(PayoutBody {
                pan: Some(pan),
                phone: None,
            }),
        ) => Ok(Some(Recipient::Card(pan))),
        (
            Kind::Payout,
            Some(PayoutBody {
                pan: None,
                phone: Some(phone),
            }),
        ) => Ok(Some(Recipient::Phone(phone))),
        (Kind::Payout, _) => Err(ApiError::BadRequest(
            "a payout needs payout.pan or payout.phone (one of them)".into(),
        )),
    }
}

fn parse(key: String, request: Value) -> Result<NewPayment, ApiError> {
    let body: CreateBody = serde_json::from_value(request.clone())
        .map_err(|error| ApiError::BadRequest(error.to_string()))?;
    if body.reference.trim().is_empty() {
        return Err(ApiError::BadRequest("reference must not be empty".into()));
    }
    if body.amount <= 0 {
        return Err(ApiError::BadRequest(
            "amount must be a positive integer".into(),
        ));
    }
    if crate::money::exponent(&body.currency).is_none() {
        return Err(ApiError::BadRequest(
            "currency must be an active ISO 4217 code".into(),
        ));
    }
    Ok(NewPayment {
        key,
        not_after: time_field("notAfter", body.not_after.as_deref())?,
        expires_at: time_field("expiresAt", body.expires_at.as_deref())?,
        recipient: recipient(body.kind, body.payout)?,
        request,
        reference: body.reference,
        kind: body.kind,
        method: body.method,
        amount: body.amount,
        currency: body.currency,
        return_url: body.return_url,
        notify_url: body.notify_url,
    })
}

fn answer(sim: &Sim, status: actix_web::http::StatusCode, payment: &Payment) -> HttpResponse {
    HttpResponse::build(status).json(payment.view(&sim.settings().page_base))
}

#[tracing::instrument(skip_all, fields(operation.id))]
async fn create(
    request: HttpRequest,
    sim: web::Data<Sim>,
    body: web::Json<Value>,
) -> Result<HttpResponse, ApiError> {
    use actix_web::http::StatusCode;
    let new = parse(idempotency_key(&request)?, body.into_inner())?;
    tracing::Span::current().record("operation.id", new.reference.as_str());
    let created =
        sim.clone()
            .into_inner()
            .create_payment(new)
            .map_err(|refused| match refused {
                PaymentRefused::NotAfterPassed => ApiError::NotAfterPassed,
            })?;
    Ok(match created {
        Created::New(payment) => answer(&sim, StatusCode::CREATED, &payment),
        Created::Repeat(payment) => answer(&sim, StatusCode::OK, &payment),
        Created::Conflict(payment) => answer(&sim, StatusCode::CONFLICT, &payment),
    })
}

/// A read by id, counted under the payment's reference (an unknown id names none).
async fn by_id(sim: web::Data<Sim>, id: web::Path<String>) -> Answer {
    let payment = sim.payment(&id).ok_or(ApiError::NotFound)?;
    sim.record_read(&payment.order.reference);
    Ok(answer(&sim, actix_web::http::StatusCode::OK, &payment))
}

/// A read by reference, counted under that reference whether it is known or not.
async fn by_reference(sim: web::Data<Sim>, query: web::Query<ReferenceQuery>) -> Answer {
    let reference = reference(query)?;
    sim.record_read(&reference);
    let payment = sim
        .payment_by_reference(&reference)
        .ok_or(ApiError::NotFound)?;
    Ok(answer(&sim, actix_web::http::StatusCode::OK, &payment))
}

async fn cancel(sim: web::Data<Sim>, id: web::Path<String>) -> Result<HttpResponse, ApiError> {
    use actix_web::http::StatusCode;
    match sim.cancel(&id) {
        Cancel::Canceled(payment) => Ok(answer(&sim, StatusCode::OK, &payment)),
        Cancel::AlreadyFinal(payment) => Ok(answer(&sim, StatusCode::CONFLICT, &payment)),
        Cancel::NotFound => Err(ApiError::NotFound),
    }
}
