//! Every failure becomes HTTP here, and only here: status, `errorCode` and body (the error rules of docs/api.md).

use std::borrow::Cow;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use domain::service::{
    CancelError, CompleteError, CreateError, DisputeError, NotificationError, ReadError,
    RefundError, StepError,
};
use domain::{FieldError, ValidationErrors};
use serde::Serialize;

/// Why a request was refused, one variant per `errorCode` of the contract.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The body as a whole is bad (malformed JSON, not an object, empty): no `details`.
    #[error("{0}")]
    BadBody(Cow<'static, str>),
    /// Some fields are bad: every one is listed in `details`.
    #[error("{0}")]
    InvalidFields(ValidationErrors),
    #[error("missing or invalid credentials")]
    Unauthorized,
    #[error("the merchant has no access to this payment method in this direction")]
    Forbidden,
    #[error("not found")]
    NotFound,
    #[error("method not allowed on this path")]
    MethodNotAllowed,
    #[error("merchantOperationId was already used with a different request")]
    DuplicateOperation,
    #[error("the operation is not waiting for this step")]
    InvalidState,
    #[error("the body is larger than 64 KiB")]
    PayloadTooLarge,
    #[error("Content-Type must be application/json")]
    UnsupportedMediaType,
    #[error("no enabled route fits this payment method, currency and amount")]
    NoRouteFound,
    #[error("the available balance is lower than the amount")]
    InsufficientBalance,
    #[error("the fee for this amount would be at least the amount")]
    AmountTooSmall,
    #[error("the refunds of this deposit would exceed its amount")]
    RefundExceedsAmount,
    #[error("wrong confirmation code")]
    InvalidCode,
    /// The merchant's rate limit was exceeded; retry after this many seconds.
    #[error("too many requests")]
    TooManyRequests { retry_after_secs: u64 },
    /// A dependency (the database, the provider) cannot be reached; safe to retry.
    #[error("temporarily unavailable")]
    Unavailable(#[source] domain::ports::BoxError),
    /// This process already has as many acquirer notifications in progress as it takes at
    /// once: shed before anything is applied, for the acquirer to send again (503,
    /// `Retry-After: 1`).
    #[error("too many notifications in progress; send it again later")]
    Busy,
    /// A bug: logged once by the edge middleware, answered with a correlation id only.
    #[error("internal error: {0:#}")]
    Internal(anyhow::Error),
}

/// The error body docs/api.md describes.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ErrorBody<'a> {
    error_code: &'static str,
    error_message: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<Vec<Detail<'a>>>,
}

#[derive(Debug, Serialize)]
struct Detail<'a> {
    field: &'a str,
    message: &'a str,
}

impl ApiError {
    /// A field error for one field.
    pub fn field(field: &str, message: &str) -> Self {
        let mut errors = ValidationErrors::default();
        errors.push(field, message);
        ApiError::InvalidFields(errors)
    }

    /// The contract's `errorCode`.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadBody(_) | ApiError::InvalidFields(_) => "InvalidRequest",
            ApiError::Unauthorized => "Unauthorized",
            ApiError::Forbidden => "Forbidden",
            ApiError::NotFound => "NotFound",
            ApiError::MethodNotAllowed => "MethodNotAllowed",
            ApiError::DuplicateOperation => "DuplicateOperation",
            ApiError::InvalidState => "InvalidState",
            ApiError::PayloadTooLarge => "PayloadTooLarge",
            ApiError::UnsupportedMediaType => "UnsupportedMediaType",
            ApiError::NoRouteFound => "NoRouteFound",
            ApiError::InsufficientBalance => "InsufficientBalance",
            ApiError::AmountTooSmall => "AmountTooSmall",
            ApiError::RefundExceedsAmount => "RefundExceedsAmount",
            ApiError::InvalidCode => "InvalidCode",
            ApiError::TooManyRequests { .. } => "TooManyRequests",
            ApiError::Unavailable(_) | ApiError::Busy => "ServiceUnavailable",
            ApiError::Internal(_) => "InternalError",
        }
    }

    /// The answer, with `correlation_id` in the message of a 500.
    pub fn render(&self, correlation_id: Option<&str>) -> HttpResponse {
        let message: Cow<'_, str> = match self {
            ApiError::BadBody(message) => Cow::Borrowed(message),
            ApiError::Unavailable(_) => Cow::Borrowed(
                "the service is temporarily unavailable; retry with the same merchantOperationId or merchantRefundId",
            ),
            ApiError::Internal(_) => Cow::Owned(format!(
                "internal error; correlation id {}",
                correlation_id.unwrap_or("unknown")
            )),
            other => Cow::Owned(other.to_string()),
        };
        let details = match self {
            ApiError::InvalidFields(errors) => Some(errors.0.iter().map(detail).collect()),
            _ => None,
        };
        let body = ErrorBody {
            error_code: self.code(),
            error_message: message,
            details,
        };
        let mut response = HttpResponse::build(self.status_code());
        match self {
            ApiError::TooManyRequests { retry_after_secs } => {
                response.insert_header((header::RETRY_AFTER, HeaderValue::from(*retry_after_secs)));
            }
            ApiError::Busy => {
                response.insert_header((header::RETRY_AFTER, HeaderValue::from(1u64)));
            }
            _ => {}
        }
        response.json(body)
    }
}

fn detail(error: &FieldError) -> Detail<'_> {
    Detail {
        field: &error.field,
        message: &error.message,
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadBody(_) | ApiError::InvalidFields(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden => StatusCode::FORBIDDEN,
            ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::DuplicateOperation | ApiError::InvalidState => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::NoRouteFound
            | ApiError::InsufficientBalance
            | ApiError::AmountTooSmall
            | ApiError::RefundExceedsAmount
            | ApiError::InvalidCode => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable(_) | ApiError::Busy => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        self.render(None)
    }
}

/// The error that stands for a framework answer of `status` (actix's own 404, 405, 413, ...),
/// so that no framework text body ever reaches a client.
pub fn for_status(status: StatusCode) -> ApiError {
    match status.as_u16() {
        401 => ApiError::Unauthorized,
        403 => ApiError::Forbidden,
        404 => ApiError::NotFound,
        405 => ApiError::MethodNotAllowed,
        409 => ApiError::InvalidState,
        413 => ApiError::PayloadTooLarge,
        415 => ApiError::UnsupportedMediaType,
        429 => ApiError::TooManyRequests {
            retry_after_secs: 1,
        },
        503 => ApiError::Unavailable(format!("the framework answered {status}").into()),
        400..=499 => ApiError::BadBody(Cow::Borrowed("the request is malformed")),
        _ => ApiError::Internal(anyhow::anyhow!("framework answered {status}")),
    }
}

impl From<ValidationErrors> for ApiError {
    fn from(errors: ValidationErrors) -> Self {
        ApiError::InvalidFields(errors)
    }
}

impl From<CreateError> for ApiError {
    fn from(error: CreateError) -> Self {
        match error {
            CreateError::Forbidden => ApiError::Forbidden,
            CreateError::DuplicateOperation => ApiError::DuplicateOperation,
            CreateError::NoRouteFound => ApiError::NoRouteFound,
            CreateError::InsufficientBalance => ApiError::InsufficientBalance,
            CreateError::AmountTooSmall => ApiError::AmountTooSmall,
            CreateError::Unavailable(why) => ApiError::Unavailable(why),
            CreateError::Unknown(e) => ApiError::Internal(e),
        }
    }
}

impl From<ReadError> for ApiError {
    fn from(error: ReadError) -> Self {
        match error {
            ReadError::NotFound => ApiError::NotFound,
            ReadError::Unavailable(why) => ApiError::Unavailable(why),
            ReadError::Unknown(e) => ApiError::Internal(e),
        }
    }
}

impl From<StepError> for ApiError {
    fn from(error: StepError) -> Self {
        match error {
            StepError::NotFound => ApiError::NotFound,
            StepError::InvalidState => ApiError::InvalidState,
            StepError::InvalidCode => ApiError::InvalidCode,
            StepError::Invalid(errors) => ApiError::InvalidFields(errors),
            StepError::Unavailable(why) => ApiError::Unavailable(why),
            StepError::Unknown(e) => ApiError::Internal(e),
        }
    }
}

impl From<CompleteError> for ApiError {
    fn from(error: CompleteError) -> Self {
        match error {
            CompleteError::NotFound => ApiError::NotFound,
            CompleteError::InvalidState => ApiError::InvalidState,
            CompleteError::Unavailable(why) => ApiError::Unavailable(why),
            CompleteError::Unknown(e) => ApiError::Internal(e),
        }
    }
}

impl From<RefundError> for ApiError {
    fn from(error: RefundError) -> Self {
        match error {
            RefundError::NotFound => ApiError::NotFound,
            RefundError::Invalid(errors) => ApiError::InvalidFields(errors),
            RefundError::DuplicateRefund => ApiError::DuplicateOperation,
            RefundError::InvalidState => ApiError::InvalidState,
            RefundError::ExceedsAmount => ApiError::RefundExceedsAmount,
            RefundError::InsufficientBalance => ApiError::InsufficientBalance,
            RefundError::Unavailable(why) => ApiError::Unavailable(why),
            RefundError::Unknown(e) => ApiError::Internal(e),
        }
    }
}

impl From<DisputeError> for ApiError {
    fn from(error: DisputeError) -> Self {
        match error {
            DisputeError::NotFound => ApiError::NotFound,
            DisputeError::Invalid(errors) => ApiError::InvalidFields(errors),
            DisputeError::InvalidState => ApiError::InvalidState,
            DisputeError::Unavailable(why) => ApiError::Unavailable(why),
            DisputeError::Unknown(e) => ApiError::Internal(e),
        }
    }
}

impl From<CancelError> for ApiError {
    fn from(error: CancelError) -> Self {
        match error {
            CancelError::NotFound => ApiError::NotFound,
            CancelError::Final(_) => ApiError::InvalidState,
            // The acquirer's cancel failed or its answer is unknown: nothing changed.
            CancelError::Unavailable(why) => ApiError::Unavailable(why.into()),
            // The merchant's cancel sends only acquirer operations to their provider.
            CancelError::NotAtAcquirer => ApiError::Internal(anyhow::anyhow!(
                "a merchant's cancel reached an operation that is not at an acquirer"
            )),
            CancelError::Complete(e) => e.into(),
        }
    }
}

impl From<NotificationError> for ApiError {
    fn from(error: NotificationError) -> Self {
        match error {
            NotificationError::NotFound => ApiError::NotFound,
            NotificationError::Unavailable(why) => ApiError::Unavailable(why),
            NotificationError::Unknown(e) => ApiError::Internal(e),
        }
    }
}

impl From<domain::service::RequeueError> for ApiError {
    fn from(error: domain::service::RequeueError) -> Self {
        match error {
            domain::service::RequeueError::NotFound => ApiError::NotFound,
            domain::service::RequeueError::Store(e) => e.into(),
        }
    }
}

impl From<domain::ports::StoreError> for ApiError {
    fn from(error: domain::ports::StoreError) -> Self {
        match error {
            domain::ports::StoreError::Unavailable(why) => ApiError::Unavailable(why),
            domain::ports::StoreError::Other(e) => ApiError::Internal(e),
        }
    }
}

#[cfg(test)]
#[path = "errors_tests.rs"]
mod tests;
