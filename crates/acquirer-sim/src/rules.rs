//! The sandbox's magic values, as pure functions.

use crate::model::{FailureCode, Recipient};

/// The payin cards offered on the payin page: `(number, what it does, the failure it ends
/// with)`. The first approves, as does any number not listed.
pub const TEST_CARDS: [(&str, &str, Option<FailureCode>); 3] = [
    ("4242424242424242", "approved", None),
    (
        "4000000000000002",
        "declined: card_declined",
        Some(FailureCode::CardDeclined),
    ),
    (
        "4000000000009995",
        "declined: insufficient_funds",
        Some(FailureCode::InsufficientFunds),
    ),
];

/// Payout recipients that do not simply succeed: `(card?, number, plan)`; a card's number
/// only ever matches a card, a phone's only a phone.
const PAYOUT_RECIPIENTS: [(bool, &str, PayoutPlan); 6] = {
    use FailureCode::*;
    use PayoutPlan::*;
    [
        (true, "4000000000000002", Settle(Some(CardDeclined))),
        (true, "4000000000000119", FailNow(ProviderUnavailable)),
        (false, "+70000000002", Settle(Some(RecipientNotFound))),
        (false, "+70000000003", FailNow(IssuerUnavailable)),
        (false, "+70000000004", FailNow(ProviderUnavailable)),
        (false, "+70000000005", FailNow(InsufficientFunds)),
    ]
};

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
    let card = matches!(recipient, Recipient::Card(_));
    PAYOUT_RECIPIENTS
        .iter()
        .find(|(is_card, number, _)| *is_card == card && *number == recipient.as_str())
        .map_or(PayoutPlan::Settle(None), |(_, _, plan)| *plan)
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
        // Any number not listed, and methods without a card, approve.
        Decision::Confirm => TEST_CARDS
            .iter()
            .find(|(number, _, _)| Some(*number) == pan.map(str::trim))
            .and_then(|(_, _, failure)| *failure),
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
        let (settle, fail_now) = (PayoutPlan::Settle, PayoutPlan::FailNow);
        let cases = [
            (10000, card(ok), settle(None)),
            (10005, card(ok), fail_now(Declined)),
            (10000, card("4000000000000002"), settle(Some(CardDeclined))),
            (
                10000,
                card("4000000000000119"),
                fail_now(ProviderUnavailable),
            ),
            (
                10000,
                phone("+70000000002"),
                settle(Some(RecipientNotFound)),
            ),
            (10000, phone("+70000000003"), fail_now(IssuerUnavailable)),
            (10000, phone("+70000000004"), fail_now(ProviderUnavailable)),
            (10000, phone("+70000000005"), fail_now(InsufficientFunds)),
            (10000, phone("+79990000000"), settle(None)),
            // The amount rule comes first.
            (10005, phone("+70000000002"), fail_now(Declined)),
        ];
        for (amount, to, plan) in cases {
            assert_eq!(payout_plan(amount, &to), plan, "{amount} to {to:?}");
        }
    }

    #[test]
    fn payin_outcomes() {
        let approve = Some("4242424242424242");
        assert_eq!(payin_outcome(Decision::Confirm, approve), None);
        assert_eq!(payin_outcome(Decision::Confirm, None), None);
        let declined = payin_outcome(Decision::Confirm, Some("4000000000000002"));
        assert_eq!(declined, Some(FailureCode::CardDeclined));
        let short = payin_outcome(Decision::Confirm, Some("4000000000009995"));
        assert_eq!(short, Some(FailureCode::InsufficientFunds));
        let rejected = payin_outcome(Decision::Reject, approve);
        assert_eq!(rejected, Some(FailureCode::Rejected));
    }

    #[test]
    fn refunds_ending_in_05_fail() {
        assert_eq!(refund_outcome(3005), Some(FailureCode::Declined));
        assert_eq!(refund_outcome(3000), None);
    }
}
