//! An acquirer's notification: `POST` to the gateway with the body `{"object", "id",
//! "reference", "status", "failureCode", "updatedAt"}` (a dispute's: `{"event": "dispute",
//! "disputeId", "paymentId", "reference", "amount", "status", "dueBy", ...}`) and
//! `x-acquirer-signature`, the hex
//! HMAC-SHA256 of the raw body under the provider's webhook secret (either case, compared in
//! constant time). The signature is checked before anything of the body is read; unknown
//! keys are ignored.

use domain::acquirer::{Notification, NotificationRefusal, NotifiedObject};
use domain::provider::AcquirerProvider;
use serde::Deserialize;

use crate::dispute_wire::DisputeNotice;
use crate::words;

/// What tells a dispute's notification from a payment's or refund's.
#[derive(Deserialize)]
struct Event {
    #[serde(default)]
    event: Option<String>,
}

/// The header carrying a notification's signature.
pub const SIGNATURE_HEADER: &str = "x-acquirer-signature";

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

/// Authenticates `body` with `signature` under `provider`'s webhook secret, then reads it.
pub fn read(
    provider: &AcquirerProvider,
    signature: &str,
    body: &[u8],
) -> Result<Notification, NotificationRefusal> {
    if !domain::signature::verify(&provider.credentials.webhook_secret, body, signature) {
        return Err(NotificationRefusal::BadSignature);
    }
    parse(body)
}

/// Reads a notification's body; one that is not this JSON object is `BadBody`.
fn parse(body: &[u8]) -> Result<Notification, NotificationRefusal> {
    let bad = NotificationRefusal::BadBody;
    let event: Event =
        serde_json::from_slice(body).map_err(|_| bad("body: must be a JSON object"))?;
    if event.event.as_deref() == Some("dispute") {
        return parse_dispute(body);
    }
    let body: Body = serde_json::from_slice(body).map_err(|_| {
        bad("body: must be a JSON object with object, id, reference and status strings")
    })?;
    let object = match body.object.as_str() {
        "payment" => NotifiedObject::Payment,
        "refund" => NotifiedObject::Refund,
        _ => return Err(bad("object: must be payment or refund")),
    };
    let status = words::payment_status(&body.status).ok_or_else(|| {
        bad("status: must be pending, action_required, succeeded, failed or canceled")
    })?;
    Ok(Notification {
        object,
        id: body.id,
        reference: body.reference,
        status,
        failure: body.failure_code.as_deref().map(words::failure),
        dispute: None,
    })
}

/// Reads a dispute's notification.
fn parse_dispute(body: &[u8]) -> Result<Notification, NotificationRefusal> {
    let bad = NotificationRefusal::BadBody(
        "body: a dispute needs disputeId, paymentId, reference, a positive amount and status open, won or lost",
    );
    let notice: DisputeNotice = serde_json::from_slice(body).map_err(|_| bad.clone())?;
    let dispute = notice.meaning().ok_or(bad)?;
    Ok(Notification {
        object: NotifiedObject::Dispute,
        id: dispute.id.clone(),
        reference: dispute.reference.clone(),
        status: domain::acquirer::PaymentStatus::Pending,
        failure: None,
        dispute: Some(dispute),
    })
}

#[cfg(test)]
mod tests {
    use domain::acquirer::{Failure, FailureReason, PaymentStatus};
    use domain::merchant::Secret;
    use domain::provider::{Credentials, ProviderName, ProviderUrl};
    use domain::signature::sign;

    use super::*;

    const SECRET: &str = "bank-webhook-secret-value";

    fn bank() -> AcquirerProvider {
        AcquirerProvider {
            name: ProviderName::parse("bank").expect("a name"),
            protocol: domain::provider::ProtocolName::from_stored("acquirer".into()),
            url: ProviderUrl::parse("https://acq.example/api", false).expect("a URL"),
            credentials: Credentials::new("bank-api-key-value", SECRET).expect("credentials"),
            timeout: std::time::Duration::from_secs(5),
            allow_insecure: false,
            enabled: true,
        }
    }

    fn signed(body: &[u8]) -> String {
        sign(&Secret::new(SECRET), body)
    }

    #[test]
    fn a_signed_notification_is_read_and_unknown_keys_are_ignored() {
        let body = br#"{"object":"payment","id":"acq_1","reference":"r","status":"failed","failureCode":"card_declined","updatedAt":"2026-01-01T00:00:00Z","extra":1}"#;
        let read = read(&bank(), &signed(body), body).expect("readable");
        assert_eq!(read.object, NotifiedObject::Payment);
        assert_eq!(read.status, PaymentStatus::Failed);
        assert_eq!(
            read.failure,
            Some(Failure::new(FailureReason::CardDeclined, "card_declined"))
        );
    }

    #[test]
    fn the_signature_is_checked_before_the_body_is_read() {
        let body = b"not json";
        for signature in ["", "00", &signed(b"another body")] {
            assert_eq!(
                read(&bank(), signature, body),
                Err(NotificationRefusal::BadSignature),
                "{signature:?}"
            );
        }
        let upper = signed(body).to_uppercase();
        assert!(matches!(
            read(&bank(), &upper, body),
            Err(NotificationRefusal::BadBody(_))
        ));
    }

    #[test]
    fn a_dispute_notification_is_read_as_a_dispute() {
        let body = br#"{"event":"dispute","object":"dispute","disputeId":"dsp_1","paymentId":"acq_1","reference":"r","amount":6000,"currency":"RUB","status":"lost","dueBy":"2026-01-08T12:00:00.250Z","updatedAt":"2026-01-01T12:00:00.250Z"}"#;
        let read = read(&bank(), &signed(body), body).expect("readable");
        assert_eq!(read.object, NotifiedObject::Dispute);
        let dispute = read.dispute.expect("a dispute");
        assert_eq!(
            (
                dispute.id.as_str(),
                dispute.reference.as_str(),
                dispute.amount.minor()
            ),
            ("dsp_1", "r", 6000)
        );
        assert_eq!(
            dispute.status,
            domain::acquirer::AcquirerDisputeStatus::Lost
        );
        // Unsigned: refused before the body is read.
        assert_eq!(
            super::read(&bank(), "", body),
            Err(NotificationRefusal::BadSignature)
        );
        for bad in [
            &br#"{"event":"dispute","disputeId":"dsp_1","paymentId":"acq_1","reference":"r","amount":6000,"status":"pending"}"#[..],
            br#"{"event":"dispute","disputeId":"dsp_1","reference":"r","status":"open"}"#,
        ] {
            assert!(matches!(
                super::read(&bank(), &signed(bad), bad),
                Err(NotificationRefusal::BadBody(_))
            ));
        }
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
                matches!(
                    read(&bank(), &signed(body), body),
                    Err(NotificationRefusal::BadBody(_))
                ),
                "{:?}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
