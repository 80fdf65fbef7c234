//! How an answer, or its absence, is classified (contract 10.3). Pure: no I/O here.

use std::error::Error as StdError;
use std::io;

use domain::acquirer::{AcquirerPayment, CallResult, Lookup};

use crate::object::Object;
use crate::wire::PaymentAnswer;

/// Why a call got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Before any byte of the request left: nothing can have happened at the acquirer.
    NotSent(String),
    /// The request may have arrived (a timeout or a cut connection after connecting).
    MaybeSent(String),
}

/// Statuses that answer a creation with a definite failure: the acquirer did nothing.
const NOTHING_CREATED: [u16; 7] = [400, 401, 403, 404, 422, 429, 503];

/// A creating call's HTTP answer (a payment's creation, a refund), its body read only for a
/// 2xx: the statuses that create nothing are definite failures, and a 2xx must be the
/// object asked for.
pub(crate) fn call_answer<T: Object>(status: u16, body: &[u8], order: &T::Order) -> CallResult<T> {
    if NOTHING_CREATED.contains(&status) {
        return CallResult::Unavailable(format!("HTTP {status}"));
    }
    if !is_success(status) {
        return CallResult::Unknown(format!("HTTP {status}"));
    }
    let Some((answer, object)) = T::parse(body) else {
        return CallResult::Unknown(format!("HTTP {status} answer cannot be parsed"));
    };
    match T::mismatch(&answer, order) {
        Some(field) => CallResult::Unknown(format!("answer's {field} differs")),
        None => CallResult::Answered(object),
    }
}

/// A read by reference: 200 with that object, 404, or a failure.
pub(crate) fn find_answer<T: Object>(status: u16, body: &[u8], reference: &str) -> Lookup<T> {
    match status {
        200 => match T::parse(body) {
            None => Lookup::Failed("HTTP 200 answer cannot be parsed".into()),
            Some((answer, _)) if T::reference(&answer) != reference => {
                Lookup::Failed("answer's reference differs".into())
            }
            Some((_, object)) => Lookup::Found(object),
        },
        404 => Lookup::NotFound,
        _ => Lookup::Failed(format!("HTTP {status}")),
    }
}

/// A cancel: 200 (canceled) or 409 (already final) with that payment, 404, or a failure.
pub(crate) fn cancel_answer(
    status: u16,
    body: &[u8],
    acquirer_id: &str,
) -> Lookup<AcquirerPayment> {
    match status {
        200 | 409 => match PaymentAnswer::parse(body) {
            None => Lookup::Failed(format!("HTTP {status} answer cannot be parsed")),
            Some((_, payment)) if payment.id != acquirer_id => {
                Lookup::Failed("answer's id differs".into())
            }
            Some((_, payment)) => Lookup::Found(payment),
        },
        404 => Lookup::NotFound,
        _ => Lookup::Failed(format!("HTTP {status}")),
    }
}

/// A 2xx status.
pub(crate) fn is_success(status: u16) -> bool {
    (200..300).contains(&status)
}

/// Classifies a failed exchange. Only a failure to connect (DNS, refusal, TLS, the connect
/// timeout) or to build the request is `NotSent`; anything later may have reached the acquirer.
pub(crate) fn transport_failure(error: &reqwest::Error) -> Failure {
    if error.is_builder() {
        return Failure::NotSent("cannot build the request".into());
    }
    if error.is_connect() {
        return Failure::NotSent(if error.is_timeout() {
            "connect timeout".into()
        } else if has_io_kind(error, io::ErrorKind::ConnectionRefused) {
            "connection refused".into()
        } else {
            format!("cannot connect: {}", innermost(error))
        });
    }
    Failure::MaybeSent(if error.is_timeout() {
        "timeout after the request was sent".into()
    } else {
        format!(
            "connection failed after the request was sent: {}",
            innermost(error)
        )
    })
}

/// The deepest cause's text: the specific one (`dns error: ...` sits in the middle of the
/// chain, the resolver's message at its end); reqwest's own text would name the URL.
fn innermost(error: &reqwest::Error) -> String {
    let mut last: &(dyn StdError + 'static) = error;
    while let Some(next) = last.source() {
        last = next;
    }
    last.to_string()
}

fn has_io_kind(error: &reqwest::Error, kind: io::ErrorKind) -> bool {
    let mut source: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(e) = source {
        if e.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == kind)
        {
            return true;
        }
        source = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use domain::acquirer::{
        AcquirerPayment, AcquirerRefund, PaymentOrder, PaymentStatus, RefundOrder,
    };
    use domain::{Amount, Currency, Direction, PaymentMethod, Timestamp};
    use domain::{OperationId, RefundId};
    use serde_json::json;

    use super::*;

    fn order() -> PaymentOrder {
        PaymentOrder {
            reference: OperationId::parse("6f1c2a52-3c7e-4bd0-9a3f-7a1d3c2b9e10").expect("uuid"),
            direction: Direction::Deposit,
            method: PaymentMethod::Card,
            amount: Amount::from_minor(10_000).expect("amount"),
            currency: Currency::RUB,
            notify_url: "https://gw/providers/a/notifications".into(),
            not_after: Timestamp::from_millis(60_000),
            return_url: None,
            expires_at: None,
            payout: None,
        }
    }

    fn body(order: &PaymentOrder) -> Vec<u8> {
        json!({"id": "acq_1", "reference": order.reference.to_string(), "kind": "payin",
               "method": "card", "amount": 10_000, "currency": "RUB", "status": "pending",
               "updatedAt": "2026-11-21T10:00:00Z"})
        .to_string()
        .into_bytes()
    }

    fn pending() -> AcquirerPayment {
        AcquirerPayment {
            id: "acq_1".into(),
            status: PaymentStatus::Pending,
            redirect_url: None,
            failure: None,
        }
    }

    #[test]
    fn creation_statuses_follow_the_contract() {
        let order = order();
        let body = body(&order);
        for status in [200, 201] {
            assert_eq!(
                call_answer::<AcquirerPayment>(status, &body, &order),
                CallResult::Answered(pending())
            );
        }
        for status in NOTHING_CREATED {
            assert_eq!(
                call_answer::<AcquirerPayment>(status, &body, &order),
                CallResult::Unavailable(format!("HTTP {status}"))
            );
        }
        for status in [
            100, 301, 302, 303, 307, 308, 402, 405, 408, 409, 410, 500, 502, 504,
        ] {
            assert_eq!(
                call_answer::<AcquirerPayment>(status, &body, &order),
                CallResult::Unknown(format!("HTTP {status}")),
                "{status}"
            );
        }
        assert!(matches!(
            call_answer::<AcquirerPayment>(204, b"", &order),
            CallResult::Unknown(_)
        ));
    }

    #[test]
    fn reads_and_cancels_know_their_payment() {
        let order = order();
        let body = body(&order);
        assert_eq!(
            find_answer::<AcquirerPayment>(200, &body, &order.reference.to_string()),
            Lookup::Found(pending())
        );
        let other = OperationId::parse("00000000-0000-4000-8000-000000000000").expect("uuid");
        assert!(matches!(
            find_answer::<AcquirerPayment>(200, &body, &other.to_string()),
            Lookup::Failed(_)
        ));
        assert_eq!(
            find_answer::<AcquirerPayment>(404, b"", &other.to_string()),
            Lookup::NotFound
        );
        assert!(matches!(
            find_answer::<AcquirerPayment>(409, &body, &other.to_string()),
            Lookup::Failed(_)
        ));

        for status in [200, 409] {
            assert_eq!(
                cancel_answer(status, &body, "acq_1"),
                Lookup::Found(pending())
            );
        }
        assert!(matches!(
            cancel_answer(200, &body, "acq_2"),
            Lookup::Failed(_)
        ));
        assert!(matches!(
            cancel_answer(409, br#"{"error":{"code":"conflict"}}"#, "acq_1"),
            Lookup::Failed(_)
        ));
        assert_eq!(cancel_answer(404, b"", "acq_1"), Lookup::NotFound);
    }

    fn refund_order() -> RefundOrder {
        RefundOrder {
            payment_id: "acq_1".into(),
            reference: RefundId::parse("0f1c2a52-3c7e-4bd0-9a3f-7a1d3c2b9e11").expect("uuid"),
            amount: Amount::from_minor(3_000).expect("amount"),
        }
    }

    fn refund_body(order: &RefundOrder, status: &str) -> Vec<u8> {
        json!({"id": "ref_1", "reference": order.reference.to_string(), "paymentId": "acq_1",
               "amount": 3_000, "status": status, "failureCode": "declined",
               "updatedAt": "2026-11-21T10:00:00Z"})
        .to_string()
        .into_bytes()
    }

    #[test]
    fn refund_answers_are_classified_like_creations() {
        use domain::acquirer::RefundStatus;
        let order = refund_order();
        let pending = AcquirerRefund {
            id: "ref_1".into(),
            status: RefundStatus::Pending,
            failure: None,
        };
        for status in [200, 201] {
            assert_eq!(
                call_answer::<AcquirerRefund>(status, &refund_body(&order, "pending"), &order),
                CallResult::Answered(pending.clone())
            );
        }
        assert_eq!(
            call_answer::<AcquirerRefund>(201, &refund_body(&order, "failed"), &order),
            CallResult::Answered(AcquirerRefund {
                status: RefundStatus::Failed,
                failure: Some(crate::words::failure("declined")),
                ..pending.clone()
            })
        );
        for status in NOTHING_CREATED {
            assert!(matches!(
                call_answer::<AcquirerRefund>(status, b"", &order),
                CallResult::Unavailable(_)
            ));
        }
        for status in [302, 409, 500, 502, 504] {
            assert!(matches!(
                call_answer::<AcquirerRefund>(status, b"", &order),
                CallResult::Unknown(_)
            ));
        }
        let other_amount = RefundOrder {
            amount: Amount::from_minor(3_001).expect("amount"),
            ..order.clone()
        };
        assert_eq!(
            call_answer::<AcquirerRefund>(201, &refund_body(&order, "pending"), &other_amount),
            CallResult::Unknown("answer's amount differs".into())
        );
        assert!(matches!(
            call_answer::<AcquirerRefund>(201, b"{}", &order),
            CallResult::Unknown(_)
        ));

        let body = refund_body(&order, "succeeded");
        assert!(matches!(
            find_answer::<AcquirerRefund>(200, &body, &order.reference.to_string()),
            Lookup::Found(AcquirerRefund {
                status: RefundStatus::Succeeded,
                ..
            })
        ));
        let other = RefundId::parse("00000000-0000-4000-8000-000000000000").expect("uuid");
        assert!(matches!(
            find_answer::<AcquirerRefund>(200, &body, &other.to_string()),
            Lookup::Failed(_)
        ));
        assert_eq!(
            find_answer::<AcquirerRefund>(404, b"", &other.to_string()),
            Lookup::NotFound
        );
        assert!(matches!(
            find_answer::<AcquirerRefund>(503, b"", &other.to_string()),
            Lookup::Failed(_)
        ));
    }

    #[test]
    fn evidence_calls_are_classified_as_creating_calls() {
        use domain::acquirer::{AcquirerDispute, AcquirerDisputeStatus};
        let order = "dsp_1".to_string();
        let body = json!({"id": "dsp_1", "paymentId": "acq_1", "reference": "r", "amount": 6000,
                          "currency": "RUB", "status": "open", "evidence": 1,
                          "dueBy": "2026-01-08T12:00:00.250Z", "updatedAt": "2026-01-01T12:00:00.250Z"})
        .to_string()
        .into_bytes();
        match call_answer::<AcquirerDispute>(200, &body, &order) {
            CallResult::Answered(dispute) => {
                assert_eq!(
                    (dispute.status, dispute.evidence),
                    (AcquirerDisputeStatus::Open, 1)
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            call_answer::<AcquirerDispute>(200, &body, &"dsp_2".to_string()),
            CallResult::Unknown(_)
        ));
        for status in [503, 429, 401] {
            assert!(matches!(
                call_answer::<AcquirerDispute>(status, &body, &order),
                CallResult::Unavailable(_)
            ));
        }
        // A decided dispute answers 409; a 502 may have counted the evidence: both are read.
        for status in [409, 500, 502, 504] {
            assert!(matches!(
                call_answer::<AcquirerDispute>(status, &body, &order),
                CallResult::Unknown(_)
            ));
        }
        assert!(matches!(
            find_answer::<AcquirerDispute>(200, &body, "dsp_1"),
            Lookup::Found(_)
        ));
        assert!(matches!(
            find_answer::<AcquirerDispute>(200, &body, "dsp_2"),
            Lookup::Failed(_)
        ));
        assert!(matches!(
            find_answer::<AcquirerDispute>(404, b"", "dsp_1"),
            Lookup::NotFound
        ));
    }
}
