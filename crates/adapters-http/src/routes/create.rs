//! `POST /api/v1/deposits` and `POST /api/v1/withdrawals`.

use actix_web::{web, HttpRequest, HttpResponse};
use domain::service::Created;
use domain::signature::Binding;
use domain::Direction;

use super::{detached, ok, read_answer, Kind};
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
    let merchant = authenticate(state, req, direction, &body, Binding::Any).await?;
    let object = parse_object(&body)?;
    let gateway = state.gateway().clone();
    let signed = canonical(&object);
    // The creation runs as its own task: a creation that has committed its operation still
    // calls its providers, records their answers and reports to their circuits if the client
    // goes away (its state machine is several kB: boxed, it is not copied at each move).
    let created = match direction {
        Direction::Deposit => {
            let request = create::deposit(&object)?;
            detached("creation", async move {
                gateway
                    .creation()
                    .create_deposit(&merchant, request, &signed)
                    .await
            })
            .await?
        }
        Direction::Withdrawal => {
            let request = create::withdrawal(&object)?;
            detached("creation", async move {
                gateway
                    .creation()
                    .create_withdrawal(&merchant, request, &signed)
                    .await
            })
            .await?
        }
    };
    answer(state, &created).await
}

/// A new operation answers the creation shape; a replay answers the read shape.
async fn answer(state: &HttpState, created: &Created) -> Result<HttpResponse, ApiError> {
    if created.replayed {
        return read_answer(state.gateway(), &created.operation).await;
    }
    state.metrics().operation_created(&created.operation);
    let now = state.gateway().clock().now();
    Ok(ok(OperationView::creation(&created.operation, now)))
}
