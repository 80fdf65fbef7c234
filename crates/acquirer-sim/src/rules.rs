//! The sandbox's magic values, as pure functions.

use crate::model::{FailureCode, Recipient};

/// Payout card that fails with `card_declined` when it settles; payin card that is declined.
pub const CARD_DECLINED: &str = "4000000000000002";
/// Payout card that fails at once with `provider_unavailable`.
pub const CARD_PROVIDER_UNAVAILABLE: &str = "4000000000000119";
/// Payin card that is declined with `insufficient_funds`.
pub const CARD_INSUFFICIENT_FUNDS: &str = "4000000000009995";
/// Payin card that approves (as does any other number).
pub const CARD_APPROVE: &str = "4242424242424242";
/// Payout phone that fails with `recipient_not_found` when it settles.
pub const PHONE_RECIPIENT_NOT_FOUND: &str = "+70000000002";
/// Payout phone that fails at once with `issuer_unavailable`.
pub const PHONE_ISSUER_UNAVAILABLE: &str = "+70000000003";
/// Payout phone that fails at once with `provider_unavailable`.
pub const PHONE_PROVIDER_UNAVAILABLE: &str = "+70000000004";
/// Payout phone that fails at once with `insufficient_funds`.
pub const PHONE_INSUFFICIENT_FUNDS: &str = "+70000000005";

/// The test cards offered on the payin page: `(number, what it does)`.
pub const TEST_CARDS: [(&str, &str); 3] = [
    (CARD_APPROVE, "approved"),
    (CARD_DECLINED, "declined: card_declined"),
    (CARD_INSUFFICIENT_FUNDS, "declined: insufficient_funds"),
];

/// Whether an amount is declined at creation: its minor units end in `05`.
pub fn declined_amount(amount: i64) -> bool {
    amount.rem_euclid(100) == 5
}

/// How a new payout starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayoutPlan {
    /// Failed at once with this code, executing nothing.
    FailNow(FailureCode),
    /// Pending; when it settles it succeeds (`None`) or fails with the code.
    Settle(Option<FailureCode>),
}

/// The plan for a payout of `amount` to `recipient`.
pub fn payout_plan(amount: i64, recipient: &Recipient) -> PayoutPlan {
    if declined_amount(amount) {
        return PayoutPlan::FailNow(FailureCode::Declined);
    }
    match recipient {
        Recipient::Card(pan) => match pan.as_str() {
            CARD_DECLINED => PayoutPlan::Settle(Some(FailureCode::CardDeclined)),
            CARD_PROVIDER_UNAVAILABLE => PayoutPlan::FailNow(FailureCode::ProviderUnavailable),
            _ => PayoutPlan::Settle(None),
        },
        Recipient::Phone(phone) => match phone.as_str() {
            PHONE_RECIPIENT_NOT_FOUND => PayoutPlan::Settle(Some(FailureCode::RecipientNotFound)),
            PHONE_ISSUER_UNAVAILABLE => PayoutPlan::FailNow(FailureCode::IssuerUnavailable),
            PHONE_PROVIDER_UNAVAILABLE => PayoutPlan::FailNow(FailureCode::ProviderUnavailable),
            PHONE_INSUFFICIENT_FUNDS => PayoutPlan::FailNow(FailureCode::InsufficientFunds),
            _ => PayoutPlan::Settle(None),
        },
    }
}

/// The payer's choice on a payin page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Pay.
    Confirm,
    /// Refuse.
    Reject,
}

/// The failure a payin ends with after the payer's choice (`None`: it succeeds).
pub fn payin_outcome(decision: Decision, pan: Option<&str>) -> Option<FailureCode> {
    match decision {
        Decision::Reject => Some(FailureCode::Rejected),
        Decision::Confirm => match pan.map(str::trim) {
            Some(CARD_DECLINED) => Some(FailureCode::CardDeclined),
            Some(CARD_INSUFFICIENT_FUNDS) => Some(FailureCode::InsufficientFunds),
            // CARD_APPROVE, any other number, and methods without a card approve.
            _ => None,
        },
    }
}

/// The failure a refund of `amount` ends with when it settles (`None`: it succeeds).
pub fn refund_outcome(amount: i64) -> Option<FailureCode> {
    declined_amount(amount).then_some(FailureCode::Declined)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(pan: &str) -> Recipient {
        Recipient::Card(pan.to_owned())
    }

    fn phone(number: &str) -> Recipient {
        Recipient::Phone(number.to_owned())
    }

    #[test]
    fn amounts_ending_in_05_are_declined() {
        assert!(declined_amount(10005));
        assert!(declined_amount(5));
        assert!(!declined_amount(10050));
        assert!(!declined_amount(10000));
        assert!(!declined_amount(10015));
    }

    #[test]
    fn payout_magic_values() {
        use FailureCode::*;
        let ok = "4111111111111111";
        assert_eq!(payout_plan(10000, &card(ok)), PayoutPlan::Settle(None));
        assert_eq!(payout_plan(10005, &card(ok)), PayoutPlan::FailNow(Declined));
        assert_eq!(
            payout_plan(10000, &card(CARD_DECLINED)),
            PayoutPlan::Settle(Some(CardDeclined))
        );
        assert_eq!(
            payout_plan(10000, &card(CARD_PROVIDER_UNAVAILABLE)),
            PayoutPlan::FailNow(ProviderUnavailable)
        );
        assert_eq!(
            payout_plan(10000, &phone(PHONE_RECIPIENT_NOT_FOUND)),
            PayoutPlan::Settle(Some(RecipientNotFound))
        );
        assert_eq!(
            payout_plan(10000, &phone(PHONE_ISSUER_UNAVAILABLE)),
            PayoutPlan::FailNow(IssuerUnavailable)
        );
        assert_eq!(
            payout_plan(10000, &phone(PHONE_PROVIDER_UNAVAILABLE)),
            PayoutPlan::FailNow(ProviderUnavailable)
        );
        assert_eq!(
            payout_plan(10000, &phone(PHONE_INSUFFICIENT_FUNDS)),
            PayoutPlan::FailNow(InsufficientFunds)
        );
        assert_eq!(
            payout_plan(10000, &phone("+79990000000")),
            PayoutPlan::Settle(None)
        );
        // The amount rule comes first.
        assert_eq!(
            payout_plan(10005, &phone(PHONE_RECIPIENT_NOT_FOUND)),
            PayoutPlan::FailNow(Declined)
        );
    }

    #[test]
    fn payin_outcomes() {
        assert_eq!(payin_outcome(Decision::Confirm, Some(CARD_APPROVE)), None);
        assert_eq!(payin_outcome(Decision::Confirm, None), None);
        assert_eq!(
            payin_outcome(Decision::Confirm, Some(CARD_DECLINED)),
            Some(FailureCode::CardDeclined)
        );
        assert_eq!(
            payin_outcome(Decision::Confirm, Some(CARD_INSUFFICIENT_FUNDS)),
            Some(FailureCode::InsufficientFunds)
        );
        assert_eq!(
            payin_outcome(Decision::Reject, Some(CARD_APPROVE)),
            Some(FailureCode::Rejected)
        );
    }

    #[test]
    fn refunds_ending_in_05_fail() {
        assert_eq!(refund_outcome(3005), Some(FailureCode::Declined));
        assert_eq!(refund_outcome(3000), None);
    }
}
