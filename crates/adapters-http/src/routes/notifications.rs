//! `POST /providers/{name}/notifications`: an acquirer tells the gateway a payment's status.
//!
//! Checked in this order: an unknown provider is 404; a body over 64 KiB 413; a missing or
//! wrong `x-acquirer-signature` (HMAC-SHA256 of the raw body under the provider's webhook
//! secret, hex in either case, compared in constant time) 401; a body that is not a
//! notification 400; a reference with no attempt at this provider, or another acquirer id,
//! 404. Otherwise the change is committed and only then answered 200. The body is never
//! logged.
//!
//! Between the body's checks and the reference's, a notification past the
//! [`NOTIFICATIONS_AT_ONCE`] this process already has in progress is answered 503 at once
//! (`Retry-After: 1`), and the acquirer sends it again on its own schedule. An acquirer's notifier opens a connection
//! for every notification it cannot send on an idle one, so while the database is saturated
//! the notifications waiting for it would otherwise grow with the acquirer's rate, and the
//! process's memory with them (docs/performance.md, change 34).

use actix_web::{web, HttpRequest, HttpResponse};

use crate::body::read_limited;
use crate::dto::notification;
use crate::errors::ApiError;
use crate::state::{HttpState, NOTIFICATIONS_AT_ONCE};

/// The header carrying the notification's signature.
const SIGNATURE: &str = "x-acquirer-signature";

#[tracing::instrument(name = "provider.notification", skip_all, fields(provider))]
pub async fn receive(
    state: web::Data<HttpState>,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let name = req.match_info().get("name").unwrap_or_default();
    tracing::Span::current().record("provider", name);
    let provider = (state.gateway())
        .acquirer_named(name)
        .await?
        .ok_or(ApiError::NotFound)?;
    let body = read_limited(&req, payload).await?;
    let signature = req
        .headers()
        .get(SIGNATURE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    if !domain::signature::verify(&provider.credentials.webhook_secret, &body, signature) {
        tracing::warn!("provider notification with a bad signature refused");
        return Err(ApiError::Unauthorized);
    }
    let notification = notification::parse(&body)?;
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
        .apply_notification(&provider, notification)
        .await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({"received": true})))
}
