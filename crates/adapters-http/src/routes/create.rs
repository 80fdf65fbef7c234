//! `POST /api/v1/deposits` and `POST /api/v1/withdrawals`.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::service::Created;
use domain::Direction;

use super::{ok, Kind};
use crate::auth::authenticate;
use crate::body::json_bytes;
use crate::dto::{create, view::OperationView};
use crate::errors::ApiError;
use crate::json::{canonical, parse_object};
use crate::state::HttpState;

/// `POST /api/v1/deposits` and `POST /api/v1/withdrawals`.
pub async fn create<K: Kind>(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    create_operation(&state, &req, payload, K::DIRECTION).await
}

/// Content type and size, signature and rate limit, parse and validation; the domain does
/// access, idempotency, route, balance and the provider.
async fn create_operation(
    state: &HttpState,
    req: &HttpRequest,
    payload: web::Payload,
    direction: Direction,
) -> Result<HttpResponse, ApiError> {
    let body = json_bytes(req, payload).await?;
    let merchant = authenticate(state, req, direction, &body).await?;
    let object = parse_object(&body)?;
    let gateway = state.gateway();
    let created = match direction {
        Direction::Deposit => {
            let request = create::deposit(&object)?;
            gateway
                .create_deposit(&merchant, request, &canonical(&object))
                .await?
        }
        Direction::Withdrawal => {
            let request = create::withdrawal(&object)?;
            gateway
                .create_withdrawal(&merchant, request, &canonical(&object))
                .await?
        }
    };
    Ok(answer(state, &created))
}

/// A new operation answers the creation shape; a replay answers the read shape.
fn answer(state: &HttpState, created: &Created) -> HttpResponse {
    let now = state.gateway().clock().now();
    if created.replayed {
        ok(OperationView::read(&created.operation, now))
    } else {
        state.metrics().operation_created(&created.operation);
        ok(OperationView::creation(&created.operation, now))
    }
}
