//! Middleware of `/v1`: bearer auth, then the injected faults around the handler.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, ResponseError};

use crate::error::ApiError;
use crate::sim::Sim;

fn sim(request: &ServiceRequest) -> Result<web::Data<Sim>, actix_web::Error> {
    request
        .app_data::<web::Data<Sim>>()
        .cloned()
        .ok_or_else(|| ApiError::Internal("the simulator is not mounted".into()).into())
}

/// Answers 401 unless `Authorization: Bearer {apiKey}`.
pub async fn authenticate(
    request: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let sim = sim(&request)?;
    let token = request
        .headers()
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    if !token.is_some_and(|token| sim.settings().api_key.matches(token.trim())) {
        return Ok(request.error_response(ApiError::Unauthorized));
    }
    Ok(next.call(request).await?.map_into_boxed_body())
}

/// `failRate` before the handler; `latencyMs`, `ambiguousRate` and `timeoutRate` after it,
/// so the call is processed whatever the caller sees.
pub async fn inject(
    request: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let sim = sim(&request)?;
    if sim.roll(|faults| faults.fail_rate) {
        tracing::info!(path = %request.path(), "injected 503");
        return Ok(request.error_response(ApiError::Unavailable));
    }
    let response = next.call(request).await?.map_into_boxed_body();
    let latency_ms = sim.faults().latency_ms;
    let ambiguous = sim.roll(|faults| faults.ambiguous_rate);
    let timeout = !ambiguous && sim.roll(|faults| faults.timeout_rate);
    if latency_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(latency_ms)).await;
    }
    if ambiguous {
        tracing::info!(path = %response.request().path(), "injected 502 after processing");
        let (request, _) = response.into_parts();
        return Ok(ServiceResponse::new(
            request,
            ApiError::BadGateway.error_response(),
        ));
    }
    if timeout {
        tracing::info!(path = %response.request().path(), "holding the answer (timeout fault)");
        tokio::time::sleep(sim.settings().hold).await;
    }
    Ok(response)
}
