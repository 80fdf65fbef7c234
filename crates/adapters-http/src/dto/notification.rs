//! An acquirer's notification body: `{"object", "id", "reference", "status", "failureCode",
//! "updatedAt"}`. Unknown keys are ignored; anything unreadable is a 400.

use std::borrow::Cow;

use domain::acquirer::PaymentStatus;
use domain::service::{Notification, NotifiedObject};
use serde::Deserialize;

use crate::errors::ApiError;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Body {
    object: String,
    id: String,
    reference: String,
    status: String,
    #[serde(default)]
    failure_code: Option<String>,
}

/// Reads a notification; a body that is not this JSON object is `BadBody`.
pub fn parse(body: &[u8]) -> Result<Notification, ApiError> {
    let bad = |message: &'static str| ApiError::BadBody(Cow::Borrowed(message));
    let body: Body = serde_json::from_slice(body).map_err(|_| {
        bad("body: must be a JSON object with object, id, reference and status strings")
    })?;
    let object = match body.object.as_str() {
        "payment" => NotifiedObject::Payment,
        "refund" => NotifiedObject::Refund,
        _ => return Err(bad("object: must be payment or refund")),
    };
    let status = PaymentStatus::parse(&body.status).ok_or_else(|| {
        bad("status: must be pending, action_required, succeeded, failed or canceled")
    })?;
    Ok(Notification {
        object,
        id: body.id,
        reference: body.reference,
        status,
        failure_code: body.failure_code,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notification_is_read_and_unknown_keys_are_ignored() {
        let body = br#"{"object":"payment","id":"acq_1","reference":"r","status":"failed","failureCode":"card_declined","updatedAt":"2026-01-01T00:00:00Z","extra":1}"#;
        let read = parse(body).expect("readable");
        assert_eq!(read.object, NotifiedObject::Payment);
        assert_eq!(read.status, PaymentStatus::Failed);
        assert_eq!(read.failure_code.as_deref(), Some("card_declined"));
    }

    #[test]
    fn unreadable_notifications_are_bad_bodies() {
        for body in [
            &b"not json"[..],
            b"[]",
            br#"{"object":"payment","id":"a","reference":"r"}"#,
            br#"{"object":"charge","id":"a","reference":"r","status":"failed"}"#,
            br#"{"object":"payment","id":"a","reference":"r","status":"done"}"#,
            br#"{"object":"payment","id":1,"reference":"r","status":"failed"}"#,
        ] {
            assert!(
                matches!(parse(body), Err(ApiError::BadBody(_))),
                "{:?}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
