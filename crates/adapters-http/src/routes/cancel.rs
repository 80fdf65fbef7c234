//! `POST /api/v1/deposits/{id}/cancel` and `POST /api/v1/withdrawals/{id}/cancel`: the
//! merchant's cancel of an operation that has not happened yet.

use actix_web::{web, HttpRequest, HttpResponse};

use super::{detached, read_answer, signed_on, Kind};
use crate::dto::refund;
use crate::errors::ApiError;
use crate::state::HttpState;

/// The body must be exactly `{}` (400 otherwise, before the operation is looked up); answers
/// the read shape of the canceled operation.
pub async fn cancel<K: Kind>(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (merchant, id, ()) = signed_on(&state, &req, payload, K::DIRECTION, refund::cancel).await?;
    let gateway = state.gateway().clone();
    // An acquirer's cancel is applied even if the client goes away meanwhile.
    let operation = detached("cancel", async move {
        gateway.refunds().cancel(&merchant, K::DIRECTION, id).await
    })
    .await?;
    read_answer(state.gateway(), &operation).await
}
