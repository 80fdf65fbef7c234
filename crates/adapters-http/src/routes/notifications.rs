//! `POST /providers/{name}/notifications`: an acquirer tells the gateway a payment's status.
//!
//! Checked in this order: an unknown provider is 404; a body over 64 KiB 413; a missing or
//! wrong signature 401; a body that is not a notification 400 (the signature, its header
//! and the body are the provider protocol's, read by its adapter through the `Acquirer`
//! port); a reference with no attempt at this provider, or another acquirer id,
//! 404. Otherwise the change is committed and only then answered 200. The body is never
//! logged.
//!
//! Between the body's checks and the reference's, a notification past the
//! [`NOTIFICATIONS_AT_ONCE`] this process already has in progress is answered 503 at once
//! (`Retry-After: 1`), and the acquirer sends it again on its own schedule. An acquirer's notifier opens a connection
//! for every notification it cannot send on an idle one, so while the database is saturated
//! the notifications waiting for it would otherwise grow with the acquirer's rate, and the
//! process's memory with them (docs/performance.md, change 34).

use std::borrow::Cow;

use actix_web::{web, HttpRequest, HttpResponse};
use domain::acquirer::NotificationRefusal;

use crate::body::read_limited;
use crate::errors::ApiError;
use crate::state::{HttpState, NOTIFICATIONS_AT_ONCE};

#[tracing::instrument(name = "provider.notification", skip_all, fields(provider))]
pub async fn receive(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let name = req.match_info().get("name").unwrap_or_default();
    tracing::Span::current().record("provider", name);
    let provider = (state.gateway())
        .answers()
        .acquirer_named(name)
        .await?
        .ok_or(ApiError::NotFound)?;
    let body = read_limited(&req, payload).await?;
    let gateway = state.gateway();
    let signature = req
        .headers()
        .get(gateway.answers().notification_signature_header(&provider))
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let notification = match gateway
        .answers()
        .read_notification(&provider, signature, &body)
    {
        Ok(notification) => notification,
        Err(NotificationRefusal::BadSignature) => {
            tracing::warn!("provider notification with a bad signature refused");
            return Err(ApiError::Unauthorized);
        }
        Err(NotificationRefusal::BadBody(reason)) => {
            return Err(ApiError::BadBody(Cow::Borrowed(reason)))
        }
    };
    // Taken only now, so that requests nobody signed cannot hold the slots (a slow body,
    // say), and held until the answer: the bound is on notifications in progress.
    let Ok(_slot) = state.notification_slots().try_acquire() else {
        // Counted by `http_requests_total` (503 on this route); a line each would flood the
        // log at the very moment the process is short of time.
        tracing::debug!("provider notification shed: {NOTIFICATIONS_AT_ONCE} in progress");
        return Err(ApiError::Busy);
    };
    state
        .gateway()
        .answers()
        .apply_notification(&provider, notification)
        .await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({"received": true})))
}
