//! The sandbox's fixed, scriptable rules (the sandbox rules of docs/api.md), as pure functions.

use domain::operation::{Decline, DeclineCode, Outcome};
use domain::{Amount, Pan, WithdrawalRequisites};

/// The name routes use for this provider.
pub const PROVIDER_NAME: &str = "sandbox";

/// The confirmation code that approves a deposit in the confirmation flow.
pub const CONFIRMATION_CODE: &str = "123456";

/// Test card that approves.
pub const CARD_APPROVE: &str = "4242424242424242";
/// Test card that is declined with `CardDeclined` (deposits and payouts).
pub const CARD_DECLINED: &str = "4000000000000002";
/// Test card that is declined with `InsufficientFunds` (deposits).
pub const CARD_INSUFFICIENT_FUNDS: &str = "4000000000009995";
/// SBP phone whose payouts are declined with `RecipientNotFound`.
pub const PHONE_RECIPIENT_NOT_FOUND: &str = "+70000000002";

/// The receiving card shown in the requisites flow (Luhn-valid, shown in full on purpose).
pub const RECEIVING_CARD_NUMBER: &str = "2200700000000009";
/// The bank shown with the receiving card.
pub const RECEIVING_BANK_NAME: &str = "Sandbox Bank";
/// The holder shown with the receiving card.
pub const RECEIVING_HOLDER_NAME: &str = "SANDBOX MERCHANT";

const SBP_BANKS: [(&str, &str); 4] = [
    ("bank_a", "Bank A"),
    ("bank_b", "Bank B"),
    ("bank_c", "Bank C"),
    ("sandbox_bank", "Sandbox Bank"),
];

/// Whether an amount is declined at creation: its minor units end in `05` (e.g. `100.05`).
pub fn declined_at_creation(amount: Amount) -> bool {
    amount.minor() % 100 == 5
}

/// How a sandbox refund settles: declined `ProviderDeclined` when its minor units end in
/// `05`, else approved (refunds are never declined at creation).
pub fn refund_outcome(amount: Amount) -> Outcome {
    if declined_at_creation(amount) {
        Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined))
    } else {
        Outcome::Approve
    }
}

/// The result of paying with a card on the hosted card page.
pub fn card_outcome(pan: &Pan) -> Outcome {
    match pan.expose() {
        CARD_DECLINED => Outcome::Decline(Decline::new(DeclineCode::CardDeclined)),
        CARD_INSUFFICIENT_FUNDS => Outcome::Decline(Decline::new(DeclineCode::InsufficientFunds)),
        // CARD_APPROVE and every other valid card number approve.
        _ => Outcome::Approve,
    }
}

/// The planned result of a payout to these requisites.
pub fn payout_outcome(requisites: &WithdrawalRequisites) -> Outcome {
    match requisites {
        WithdrawalRequisites::Card { pan, .. } if pan.expose() == CARD_DECLINED => {
            Outcome::Decline(Decline::new(DeclineCode::CardDeclined))
        }
        WithdrawalRequisites::Sbp { phone, .. } if phone.as_str() == PHONE_RECIPIENT_NOT_FOUND => {
            Outcome::Decline(Decline::new(DeclineCode::RecipientNotFound))
        }
        WithdrawalRequisites::Card { .. } | WithdrawalRequisites::Sbp { .. } => Outcome::Approve,
    }
}

/// The banks offered on the SBP bank picker: `(id, display name)`.
pub fn sbp_banks() -> &'static [(&'static str, &'static str)] {
    &SBP_BANKS
}

/// The display name of an SBP bank id, if it is one of [`sbp_banks`].
pub fn sbp_bank_name(id: &str) -> Option<&'static str> {
    SBP_BANKS
        .iter()
        .find(|(bank, _)| *bank == id)
        .map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pan(text: &str) -> Pan {
        Pan::parse(text).expect("valid test card")
    }

    fn code(outcome: &Outcome) -> Option<DeclineCode> {
        match outcome {
            Outcome::Approve => None,
            Outcome::Decline(decline) => Some(decline.code),
        }
    }

    #[test]
    fn amounts_ending_in_05_are_declined() {
        for (minor, declined) in [
            (10_005, true),
            (5, true),
            (105, true),
            (10_000, false),
            (10_050, false),
            (10_015, false),
            (1, false),
        ] {
            let amount = Amount::from_minor(minor).expect("positive");
            assert_eq!(declined_at_creation(amount), declined, "{minor}");
        }
    }

    #[test]
    fn refunds_ending_in_05_settle_declined() {
        let amount = |minor| Amount::from_minor(minor).expect("amount");
        assert_eq!(refund_outcome(amount(3_000)), Outcome::Approve);
        assert_eq!(
            code(&refund_outcome(amount(3_005))),
            Some(DeclineCode::ProviderDeclined)
        );
        assert_eq!(refund_outcome(amount(3_050)), Outcome::Approve);
    }

    #[test]
    fn test_cards_have_their_outcomes() {
        assert_eq!(card_outcome(&pan(CARD_APPROVE)), Outcome::Approve);
        assert_eq!(
            code(&card_outcome(&pan(CARD_DECLINED))),
            Some(DeclineCode::CardDeclined)
        );
        assert_eq!(
            code(&card_outcome(&pan(CARD_INSUFFICIENT_FUNDS))),
            Some(DeclineCode::InsufficientFunds)
        );
        assert_eq!(card_outcome(&pan("5555555555554444")), Outcome::Approve);
        assert_eq!(card_outcome(&pan(RECEIVING_CARD_NUMBER)), Outcome::Approve);
    }

    #[test]
    fn declines_carry_the_default_message() {
        let Outcome::Decline(decline) = card_outcome(&pan(CARD_DECLINED)) else {
            panic!("expected a decline");
        };
        assert_eq!(decline.message, DeclineCode::CardDeclined.message());
    }

    #[test]
    fn payouts_are_planned_from_the_requisites() {
        let card = |p: &str| WithdrawalRequisites::card(Some(p), Some("IVAN IVANOV"));
        let sbp = |p: &str| WithdrawalRequisites::sbp(Some(p), Some("Ivan"), Some("Bank A"));
        let cases = [
            (card(CARD_APPROVE), None),
            (card(CARD_DECLINED), Some(DeclineCode::CardDeclined)),
            // Only the card rule above applies to payouts.
            (card(CARD_INSUFFICIENT_FUNDS), None),
            (sbp("+79001234567"), None),
            (
                sbp(PHONE_RECIPIENT_NOT_FOUND),
                Some(DeclineCode::RecipientNotFound),
            ),
        ];
        for (requisites, expected) in cases {
            let requisites = requisites.expect("valid requisites");
            assert_eq!(
                code(&payout_outcome(&requisites)),
                expected,
                "{requisites:?}"
            );
        }
    }

    #[test]
    fn receiving_card_is_luhn_valid() {
        assert!(Pan::parse(RECEIVING_CARD_NUMBER).is_ok());
        assert!(RECEIVING_CARD_NUMBER.starts_with("2200"));
    }

    #[test]
    fn sbp_banks_are_a_short_unique_list() {
        let banks = sbp_banks();
        assert!((2..=8).contains(&banks.len()));
        for (i, (id, name)) in banks.iter().enumerate() {
            assert!(!name.is_empty());
            assert_eq!(sbp_bank_name(id), Some(*name));
            assert!(banks[i + 1..].iter().all(|(other, _)| other != id));
        }
        assert_eq!(sbp_bank_name("nope"), None);
    }
}
