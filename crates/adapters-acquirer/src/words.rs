//! The Acquirer API's words and what each means to the gateway: payment and refund
//! statuses, and failure codes (contract 10.1 and its failure-code table). Another protocol
//! has its own words and its own table in its own adapter.

use domain::acquirer::{
    AcquirerDisputeStatus, Failure, FailureReason, PaymentStatus, RefundStatus,
};

/// A payment's status word.
pub(crate) fn payment_status(word: &str) -> Option<PaymentStatus> {
    Some(match word {
        "pending" => PaymentStatus::Pending,
        "action_required" => PaymentStatus::ActionRequired,
        "succeeded" => PaymentStatus::Succeeded,
        "failed" => PaymentStatus::Failed,
        "canceled" => PaymentStatus::Canceled,
        _ => return None,
    })
}

/// The word for a payment's status.
pub(crate) fn payment_status_word(status: PaymentStatus) -> &'static str {
    match status {
        PaymentStatus::Pending => "pending",
        PaymentStatus::ActionRequired => "action_required",
        PaymentStatus::Succeeded => "succeeded",
        PaymentStatus::Failed => "failed",
        PaymentStatus::Canceled => "canceled",
    }
}

/// A dispute's status word.
pub(crate) fn dispute_status(word: &str) -> Option<AcquirerDisputeStatus> {
    Some(match word {
        "open" => AcquirerDisputeStatus::Open,
        "won" => AcquirerDisputeStatus::Won,
        "lost" => AcquirerDisputeStatus::Lost,
        _ => return None,
    })
}

/// A refund's status word.
pub(crate) fn refund_status(word: &str) -> Option<RefundStatus> {
    Some(match word {
        "pending" => RefundStatus::Pending,
        "succeeded" => RefundStatus::Succeeded,
        "failed" => RefundStatus::Failed,
        _ => return None,
    })
}

/// The word for a refund's status.
pub(crate) fn refund_status_word(status: RefundStatus) -> &'static str {
    match status {
        RefundStatus::Pending => "pending",
        RefundStatus::Succeeded => "succeeded",
        RefundStatus::Failed => "failed",
    }
}

/// What a failure code means; a code the table does not name (`declined`,
/// `invalid_request`, any new one) is `Other`, which the gateway takes as a decline.
pub(crate) fn failure(code: &str) -> Failure {
    let reason = match code {
        "provider_unavailable" => FailureReason::ProviderUnavailable,
        "issuer_unavailable" => FailureReason::IssuerUnavailable,
        "insufficient_funds" => FailureReason::InsufficientFunds,
        "card_declined" => FailureReason::CardDeclined,
        "recipient_not_found" => FailureReason::RecipientNotFound,
        "rejected" => FailureReason::Rejected,
        "expired" => FailureReason::Expired,
        _ => FailureReason::Other,
    };
    Failure::new(reason, code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_codes_read_as_the_table_says() {
        use FailureReason::*;
        for (code, reason) in [
            ("provider_unavailable", ProviderUnavailable),
            ("issuer_unavailable", IssuerUnavailable),
            ("insufficient_funds", InsufficientFunds),
            ("card_declined", CardDeclined),
            ("recipient_not_found", RecipientNotFound),
            ("rejected", Rejected),
            ("expired", Expired),
            ("declined", Other),
            ("invalid_request", Other),
            ("something_new", Other),
        ] {
            assert_eq!(failure(code), Failure::new(reason, code), "{code}");
        }
    }

    #[test]
    fn status_words_read_back() {
        for status in [
            PaymentStatus::Pending,
            PaymentStatus::ActionRequired,
            PaymentStatus::Succeeded,
            PaymentStatus::Failed,
            PaymentStatus::Canceled,
        ] {
            assert_eq!(payment_status(payment_status_word(status)), Some(status));
        }
        for status in [
            RefundStatus::Pending,
            RefundStatus::Succeeded,
            RefundStatus::Failed,
        ] {
            assert_eq!(refund_status(refund_status_word(status)), Some(status));
        }
        assert_eq!(payment_status("refunded"), None);
        assert_eq!(refund_status("canceled"), None);
    }
}
