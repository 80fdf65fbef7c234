//! `POST /sandbox/operations/{id}/complete`: finishes a waiting sandbox operation for scripted
//! tests. No signature; JSON in and out, errors in the API's error body. It acts only on
//! operations routed to the sandbox: any other answers 404, as if unknown.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::operation::{Decline, DeclineCode, Outcome};
use domain::service::{Checkout, Gateway};
use domain::OperationId;
use serde_json::{Map, Value};

use crate::body::json_bytes;
use crate::errors::ApiError;
use crate::json::parse_object;

/// The outcome a `{"status": 1 | 2}` body asks for.
pub fn requested_outcome(body: &Map<String, Value>) -> Result<Outcome, ApiError> {
    if let Some(key) = body.keys().find(|key| *key != "status") {
        return Err(ApiError::field(key, "is not a known field"));
    }
    match body.get("status") {
        None | Some(Value::Null) => Err(ApiError::field("status", "is required")),
        Some(Value::Number(n)) if n.as_i64() == Some(1) => Ok(Outcome::Approve),
        Some(Value::Number(n)) if n.as_i64() == Some(2) => Ok(Outcome::Decline(Decline::new(
            DeclineCode::ProviderDeclined,
        ))),
        Some(_) => Err(ApiError::field("status", "must be 1 or 2")),
    }
}

/// `POST /sandbox/operations/{id}/complete` with `{"status": 1}` (approve) or `{"status": 2}`
/// (decline as `ProviderDeclined`): answers the operation's read shape.
#[tracing::instrument(name = "sandbox.complete", skip_all, fields(operation.id = %path))]
pub async fn complete(
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
    checkout: web::Data<Checkout>,
    gateway: web::Data<Gateway>,
) -> Result<HttpResponse, ApiError> {
    let id = OperationId::parse(&path).map_err(|_| ApiError::NotFound)?;
    let body = json_bytes(&req, payload).await?;
    let outcome = requested_outcome(&parse_object(&body)?)?;
    let op = checkout.complete(id, outcome).await?;
    tracing::info!(
        status = op.status().name(),
        "sandbox completed an operation"
    );
    crate::routes::read_answer(&gateway, &op).await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn outcome(value: Value) -> Result<Outcome, &'static str> {
        match value {
            Value::Object(map) => requested_outcome(&map).map_err(|e| e.code()),
            _ => Err("not an object"),
        }
    }

    #[test]
    fn one_approves_and_two_declines_as_provider_declined() {
        assert_eq!(outcome(json!({"status": 1})), Ok(Outcome::Approve));
        assert_eq!(
            outcome(json!({"status": 2})),
            Ok(Outcome::Decline(Decline::new(
                DeclineCode::ProviderDeclined
            )))
        );
    }

    #[test]
    fn anything_else_is_an_invalid_request() {
        for body in [
            json!({}),
            json!({"status": null}),
            json!({"status": 3}),
            json!({"status": 0}),
            json!({"status": 1.5}),
            json!({"status": "1"}),
            json!({"status": true}),
            json!({"status": 1, "extra": 2}),
        ] {
            assert_eq!(outcome(body.clone()), Err("InvalidRequest"), "{body}");
        }
    }
}
