//! The edge middleware around every route: a request id, a tracing span, the request
//! metrics, and the rule that every error answer has the contract's JSON body (framework
//! text bodies and empty 404/405 answers are replaced; deliberate JSON or HTML is kept).

use std::future::{ready, Ready};
use std::rc::Rc;
use std::time::Instant;

use actix_web::body::{BodySize, EitherBody, MessageBody};
use actix_web::dev::{forward_ready, Service, ServiceRequest, ServiceResponse, Transform};
use actix_web::error::InternalError;
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::{Error, HttpMessage, HttpResponse};
use futures::future::LocalBoxFuture;
use tracing::Instrument;

use crate::errors::{for_status, ApiError};
use crate::metrics::{method_label, Metrics, UNMATCHED_ROUTE};

/// The header carrying the request id, in and out.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The id of one request: the caller's `x-request-id` if sane, else a fresh UUID.
/// Handlers find it in the request extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(pub String);

impl RequestId {
    fn for_request(req: &ServiceRequest) -> Self {
        let given = req
            .headers()
            .get(&REQUEST_ID_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|v| is_sane(v));
        match given {
            Some(id) => Self(id.to_string()),
            None => Self(uuid::Uuid::new_v4().simple().to_string()),
        }
    }
}

/// 1 to 64 characters of letters, digits, `-`, `_` and `.` (safe to log and echo).
fn is_sane(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// The middleware factory; wrap the whole `App` in it.
pub struct Edge {
    metrics: Rc<Metrics>,
}

impl Edge {
    /// Records into `metrics`.
    pub fn new(metrics: Metrics) -> Self {
        Self {
            metrics: Rc::new(metrics),
        }
    }
}

impl<S, B> Transform<S, ServiceRequest> for Edge
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    B: MessageBody + 'static,
{
    type Response = ServiceResponse<EitherBody<B>>;
    type Error = Error;
    type Transform = EdgeService<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(EdgeService {
            service,
            metrics: Rc::clone(&self.metrics),
        }))
    }
}

/// The middleware service built by [`Edge`].
pub struct EdgeService<S> {
    service: S,
    metrics: Rc<Metrics>,
}

impl<S, B> Service<ServiceRequest> for EdgeService<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    B: MessageBody + 'static,
{
    type Response = ServiceResponse<EitherBody<B>>;
    type Error = Error;
    type Future = LocalBoxFuture<'static, Result<Self::Response, Self::Error>>;

    forward_ready!(service);

    fn call(&self, req: ServiceRequest) -> Self::Future {
        let started = Instant::now();
        let id = RequestId::for_request(&req);
        let method = method_label(req.method());
        let span = tracing::info_span!(
            "http.request",
            request.id = %id.0,
            http.method = method,
            http.route = tracing::field::Empty,
            http.status = tracing::field::Empty,
            merchant.id = tracing::field::Empty,
        );
        req.extensions_mut().insert(id.clone());
        let future = {
            let _entered = span.enter();
            self.service.call(req)
        };
        let metrics = Rc::clone(&self.metrics);
        let inner_span = span.clone();
        Box::pin(
            async move {
                let res = match future.await {
                    Ok(res) => res,
                    Err(e) => {
                        // No request is left to answer with: hand actix a finished answer.
                        let mut answer = error_answer(&e, &id.0);
                        if let Ok(value) = HeaderValue::from_str(&id.0) {
                            answer.headers_mut().insert(REQUEST_ID_HEADER, value);
                        }
                        let status = answer.status();
                        metrics.observe_request(
                            UNMATCHED_ROUTE,
                            method,
                            status.as_str(),
                            started.elapsed(),
                        );
                        return Err(InternalError::from_response("service error", answer).into());
                    }
                };
                let mut res = json_errors(res, &id.0);
                let route = res.request().match_pattern();
                let route = route.as_deref().unwrap_or(UNMATCHED_ROUTE);
                if let Ok(value) = HeaderValue::from_str(&id.0) {
                    res.headers_mut().insert(REQUEST_ID_HEADER, value);
                }
                let status = res.status();
                let elapsed = started.elapsed();
                metrics.observe_request(route, method, status.as_str(), elapsed);
                inner_span.record("http.route", route);
                inner_span.record("http.status", status.as_u16());
                tracing::info!(duration_ms = elapsed.as_millis() as u64, "request finished");
                Ok(res)
            }
            .instrument(span),
        )
    }
}

/// Gives every error answer the contract's JSON body, logging a 500's cause once.
fn json_errors<B>(res: ServiceResponse<B>, request_id: &str) -> ServiceResponse<EitherBody<B>>
where
    B: MessageBody,
{
    let status = res.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return res.map_into_left_body();
    }
    let error = res.response().error();
    if let Some(api) = error.and_then(|e| e.as_error::<ApiError>()) {
        return match api {
            ApiError::Internal(cause) => {
                tracing::error!(error = %format!("{cause:#}"), "internal error");
                let answer = api.render(Some(request_id));
                res.into_response(answer).map_into_right_body()
            }
            ApiError::Unavailable(why) => {
                tracing::warn!(reason = %domain::ports::Chain(why.as_ref()), "dependency unavailable");
                res.map_into_left_body()
            }
            _ => res.map_into_left_body(),
        };
    }
    if !is_framework_body(res.response()) {
        return res.map_into_left_body();
    }
    let api = for_status(status);
    if status.is_server_error() {
        match error {
            Some(e) => tracing::error!(error = %e, "internal error"),
            None => tracing::error!(%status, "internal error"),
        }
    }
    let mut answer = api.render(Some(request_id));
    for name in [header::ALLOW, header::RETRY_AFTER] {
        if let Some(value) = res.headers().get(&name) {
            answer.headers_mut().insert(name, value.clone());
        }
    }
    res.into_response(answer).map_into_right_body()
}

/// The answer for an error a service returned instead of a response.
fn error_answer(error: &Error, request_id: &str) -> HttpResponse {
    if let Some(api) = error.as_error::<ApiError>() {
        if let ApiError::Internal(cause) = api {
            tracing::error!(error = %format!("{cause:#}"), "internal error");
        }
        return api.render(Some(request_id));
    }
    let status = error.as_response_error().status_code();
    if status.is_server_error() {
        tracing::error!(error = %error, "internal error");
    }
    for_status(status).render(Some(request_id))
}

/// An empty body, or a text/plain one (what actix's own errors answer with).
fn is_framework_body<B: MessageBody>(response: &HttpResponse<B>) -> bool {
    let empty = matches!(response.body().size(), BodySize::None | BodySize::Sized(0));
    let text = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_none_or(|v| v.starts_with("text/plain"));
    empty || text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_from_callers_must_be_short_and_plain() {
        assert!(is_sane("abc-123_X.y"));
        assert!(!is_sane(""));
        assert!(!is_sane(&"a".repeat(65)));
        assert!(!is_sane("a b"));
        assert!(!is_sane("a\nb"));
        assert!(!is_sane("ид"));
    }
}
