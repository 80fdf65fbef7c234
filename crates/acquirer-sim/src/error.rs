//! Error answers: every one has the body `{"error": {"code", "message"}}`.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde_json::json;

/// An error answer of the Acquirer API or the control API.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// No or a wrong bearer token.
    #[error("missing or wrong bearer token")]
    Unauthorized,
    /// A malformed request.
    #[error("{0}")]
    BadRequest(String),
    /// Nothing under that id or reference.
    #[error("not found")]
    NotFound,
    /// A creation received after its `notAfter`.
    #[error("the request arrived after its notAfter")]
    NotAfterPassed,
    /// A refund, or a dispute's amount or due time, that is not allowed.
    #[error("{0}")]
    InvalidRequest(String),
    /// A call the record's status does not allow (disputing a payment that is not a
    /// succeeded payin).
    #[error("{0}")]
    WrongState(String),
    /// Injected by `failRate`.
    #[error("service unavailable")]
    Unavailable,
    /// Injected by `ambiguousRate`.
    #[error("bad gateway")]
    BadGateway,
    /// The simulator itself failed.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    fn code(&self) -> &'static str {
        match self {
            ApiError::Unauthorized => "unauthorized",
            ApiError::BadRequest(_) | ApiError::InvalidRequest(_) => "invalid_request",
            ApiError::NotFound => "not_found",
            ApiError::NotAfterPassed => "expired",
            ApiError::WrongState(_) => "invalid_state",
            ApiError::Unavailable | ApiError::BadGateway => "provider_unavailable",
            ApiError::Internal(_) => "internal_error",
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::WrongState(_) => StatusCode::CONFLICT,
            ApiError::NotAfterPassed | ApiError::InvalidRequest(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::BadGateway => StatusCode::BAD_GATEWAY,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        if let ApiError::Internal(cause) = self {
            tracing::error!(error = %cause, "internal error");
        }
        HttpResponse::build(self.status_code())
            .json(json!({"error": {"code": self.code(), "message": self.to_string()}}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::to_bytes;

    #[actix_web::test]
    async fn error_bodies_have_code_and_message() {
        let response = ApiError::InvalidRequest("too much".into()).error_response();
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let bytes = to_bytes(response.into_body()).await.expect("body");
        let body: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
        assert_eq!(
            body,
            json!({"error": {"code": "invalid_request", "message": "too much"}})
        );
    }
}
