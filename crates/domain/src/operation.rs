//! The operation entity, the actions a deposit asks of its user, and the state machine.

use serde::{Deserialize, Serialize};

use crate::{
    Amount, Currency, Direction, HttpUrl, MerchantId, MerchantOperationId, OperationId,
    PaymentMethod, Status, Timestamp, UserData, UserId,
};

/// One choice of a `select` input field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectOption {
    pub value: String,
    pub label: String,
}

/// A field the user fills in during the input-fields flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputField {
    pub name: String,
    pub label: String,
    /// `string` or `select`.
    #[serde(rename = "type")]
    pub kind: String,
    pub required: bool,
    /// Present for `select` fields only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<SelectOption>>,
}

/// One step of an instruction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstructionStep {
    pub title: String,
    pub description: String,
}

/// What a processing deposit asks of its user (the deposit actions of docs/api.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Send the user to `url`.
    Redirect { url: String },
    /// Show these requisites until the lifetime ends (also the `sbp_qr` QR code).
    Requisites {
        requisites: serde_json::Map<String, serde_json::Value>,
    },
    /// Ask the user for these fields, then post them to `/input`.
    InputFields { fields: Vec<InputField> },
    /// Show these steps.
    Instruction {
        category: String,
        steps: Vec<InstructionStep>,
    },
    /// Ask for a code sent over `channels`; `attempts_left` wrong codes decline it.
    Confirmation {
        channels: Vec<String>,
        attempts_left: u8,
    },
}

/// Wrong confirmation codes allowed before a deposit is declined.
pub const CONFIRMATION_ATTEMPTS: u8 = 3;

impl Action {
    /// Whether the creation and read answers show `lifetime` with this action.
    pub fn shows_lifetime(&self) -> bool {
        matches!(self, Action::Requisites { .. })
    }
}

/// Why an operation was declined; the code is one of a closed list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeclineCode {
    ProviderDeclined,
    CardDeclined,
    InsufficientFunds,
    PaymentRejected,
    Expired,
    ConfirmationFailed,
    RecipientNotFound,
}

impl DeclineCode {
    const ALL: [DeclineCode; 7] = [
        DeclineCode::ProviderDeclined,
        DeclineCode::CardDeclined,
        DeclineCode::InsufficientFunds,
        DeclineCode::PaymentRejected,
        DeclineCode::Expired,
        DeclineCode::ConfirmationFailed,
        DeclineCode::RecipientNotFound,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DeclineCode::ProviderDeclined => "ProviderDeclined",
            DeclineCode::CardDeclined => "CardDeclined",
            DeclineCode::InsufficientFunds => "InsufficientFunds",
            DeclineCode::PaymentRejected => "PaymentRejected",
            DeclineCode::Expired => "Expired",
            DeclineCode::ConfirmationFailed => "ConfirmationFailed",
            DeclineCode::RecipientNotFound => "RecipientNotFound",
        }
    }

    /// The default message for merchants.
    pub fn message(self) -> &'static str {
        match self {
            DeclineCode::ProviderDeclined => "The provider declined the operation",
            DeclineCode::CardDeclined => "The card was declined",
            DeclineCode::InsufficientFunds => "The card has insufficient funds",
            DeclineCode::PaymentRejected => "The user rejected the payment",
            DeclineCode::Expired => "The operation expired before it was completed",
            DeclineCode::ConfirmationFailed => "Too many wrong confirmation codes",
            DeclineCode::RecipientNotFound => "The recipient was not found",
        }
    }

    /// The code for a stored name; unknown names are an error, never a default.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// A decline: its code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decline {
    pub code: DeclineCode,
    pub message: String,
}

impl Decline {
    pub fn new(code: DeclineCode) -> Self {
        Self {
            code,
            message: code.message().to_string(),
        }
    }
}

/// The merchant's URLs for one operation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperationUrls {
    pub callback: Option<HttpUrl>,
    pub success: Option<HttpUrl>,
    pub fail: Option<HttpUrl>,
    pub processing: Option<HttpUrl>,
}

/// A deposit or withdrawal and everything known about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    pub id: OperationId,
    pub merchant_id: MerchantId,
    pub direction: Direction,
    pub method: PaymentMethod,
    pub status: Status,
    pub amount: Amount,
    pub currency: Currency,
    pub user_id: UserId,
    pub merchant_operation_id: Option<MerchantOperationId>,
    pub urls: OperationUrls,
    /// Requisites as stored: deposits' as given (card numbers masked, CVCs dropped), payouts' masked.
    pub requisites: Option<serde_json::Map<String, serde_json::Value>>,
    pub user_data: UserData,
    /// What the user must do while the deposit is processing.
    pub action: Option<Action>,
    pub decline: Option<Decline>,
    pub route_id: i64,
    /// When a waiting deposit expires; payouts never expire.
    pub expires_at: Option<Timestamp>,
    /// The provider's own state (for the sandbox: the planned payout result).
    pub provider_state: Option<serde_json::Value>,
    /// When the provider next wants to look at a processing payout.
    pub due_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// The result asked of an operation that is still processing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Approve,
    Decline(Decline),
}

impl Outcome {
    pub fn status(&self) -> Status {
        match self {
            Outcome::Approve => Status::Approved,
            Outcome::Decline(_) => Status::Declined,
        }
    }
}

/// The operation is final (or otherwise not waiting for what was asked).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the operation is {0:?}, not waiting for this step")]
pub struct NotProcessing(pub Status);

impl Operation {
    /// Processing -> Approved | Declined; a final operation never changes again.
    pub fn finish(&self, outcome: &Outcome, at: Timestamp) -> Result<Operation, NotProcessing> {
        match self.status {
            Status::Processing => {
                let mut done = self.clone();
                done.status = outcome.status();
                done.decline = match outcome {
                    Outcome::Approve => None,
                    Outcome::Decline(decline) => Some(decline.clone()),
                };
                done.updated_at = at;
                done.due_at = None;
                Ok(done)
            }
            Status::Approved | Status::Declined => Err(NotProcessing(self.status)),
        }
    }

    /// Whether a processing deposit's lifetime has passed at `now`.
    pub fn is_expired(&self, now: Timestamp) -> bool {
        self.status == Status::Processing && self.expires_at.is_some_and(|at| at <= now)
    }

    /// Seconds of lifetime left, for the answers' `lifetime` field.
    pub fn lifetime_left(&self, now: Timestamp) -> Option<i64> {
        self.expires_at.map(|at| at.seconds_after(now))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::testkit::{at, id, OperationBuilder};

    fn waiting() -> Operation {
        OperationBuilder::deposit(PaymentMethod::SbpQr)
            .id(id(7))
            .merchant("m-1")
            .amount("10.00")
            .user("u")
            .merchant_operation_id("o-1")
            .action(Action::Requisites {
                requisites: serde_json::Map::new(),
            })
            .route(3)
            .expires(at(600))
            .due(at(5))
            .build()
    }

    #[test]
    fn processing_finishes_approved_with_the_time_of_the_change() {
        let op = waiting();

        let done = op.finish(&Outcome::Approve, at(30)).unwrap();

        assert_eq!(done.status, Status::Approved);
        assert_eq!(done.decline, None);
        assert_eq!(done.updated_at, at(30));
        assert_eq!(done.created_at, at(0));
        assert_eq!(done.due_at, None);
        let unchanged = Operation {
            status: op.status,
            updated_at: op.updated_at,
            due_at: op.due_at,
            ..done.clone()
        };
        assert_eq!(unchanged, op, "nothing else changes");
    }

    #[test]
    fn processing_finishes_declined_with_its_reason() {
        let decline = Decline::new(DeclineCode::CardDeclined);

        let done = waiting()
            .finish(&Outcome::Decline(decline.clone()), at(30))
            .unwrap();

        assert_eq!(done.status, Status::Declined);
        assert_eq!(done.decline, Some(decline));
    }

    #[test]
    fn a_final_operation_never_changes_again() {
        let approved = waiting().finish(&Outcome::Approve, at(1)).unwrap();
        let declined = waiting()
            .finish(&Outcome::Decline(Decline::new(DeclineCode::Expired)), at(1))
            .unwrap();
        for done in [approved, declined] {
            for outcome in [
                Outcome::Approve,
                Outcome::Decline(Decline::new(DeclineCode::PaymentRejected)),
            ] {
                assert_eq!(
                    done.finish(&outcome, at(2)),
                    Err(NotProcessing(done.status)),
                    "{:?} -> {outcome:?}",
                    done.status
                );
            }
        }
        let error = NotProcessing(Status::Approved).to_string();
        assert!(error.contains("Approved"), "{error}");
    }

    #[test]
    fn outcomes_name_their_final_status() {
        assert_eq!(Outcome::Approve.status(), Status::Approved);
        assert_eq!(
            Outcome::Decline(Decline::new(DeclineCode::Expired)).status(),
            Status::Declined
        );
        assert!(Outcome::Approve.status().is_final());
    }

    #[test]
    fn a_processing_deposit_expires_when_its_lifetime_is_reached() {
        let op = waiting();
        assert!(!op.is_expired(at(599)));
        assert!(!op.is_expired(at(600).plus_millis(-1)));
        assert!(op.is_expired(at(600)));
        assert!(op.is_expired(at(6_000)));
    }

    #[test]
    fn final_operations_and_those_without_lifetime_never_expire() {
        let done = waiting().finish(&Outcome::Approve, at(1)).unwrap();
        assert!(!done.is_expired(at(6_000)));
        let payout = Operation {
            direction: Direction::Withdrawal,
            expires_at: None,
            ..waiting()
        };
        assert!(!payout.is_expired(at(1_000_000)));
    }

    #[test]
    fn lifetime_left_counts_whole_seconds_down_to_zero() {
        let op = waiting();
        assert_eq!(op.lifetime_left(at(0)), Some(600));
        assert_eq!(
            op.lifetime_left(at(0).plus_millis(1)),
            Some(600),
            "rounds up"
        );
        assert_eq!(op.lifetime_left(at(599)), Some(1));
        assert_eq!(op.lifetime_left(at(600)), Some(0));
        assert_eq!(op.lifetime_left(at(900)), Some(0), "never negative");
        let none = Operation {
            expires_at: None,
            ..waiting()
        };
        assert_eq!(none.lifetime_left(at(0)), None);
    }

    #[test]
    fn decline_codes_round_trip_through_their_names() {
        let mut names = std::collections::HashSet::new();
        for code in DeclineCode::ALL {
            assert_eq!(DeclineCode::parse(code.as_str()), Some(code));
            assert!(!code.message().is_empty());
            assert_eq!(Decline::new(code).message, code.message());
            assert!(names.insert(code.as_str()), "{} twice", code.as_str());
        }
        assert_eq!(names.len(), 7);
        for unknown in ["", "expired", "EXPIRED", "Unknown"] {
            assert_eq!(DeclineCode::parse(unknown), None, "{unknown:?}");
        }
    }

    #[test]
    fn only_requisites_show_a_lifetime() {
        let requisites = Action::Requisites {
            requisites: serde_json::Map::new(),
        };
        assert!(requisites.shows_lifetime());
        for other in [
            Action::Redirect {
                url: "https://x.example".into(),
            },
            Action::InputFields { fields: Vec::new() },
            Action::Instruction {
                category: "DoPayment".into(),
                steps: Vec::new(),
            },
            Action::Confirmation {
                channels: vec!["sms".into()],
                attempts_left: CONFIRMATION_ATTEMPTS,
            },
        ] {
            assert!(!other.shows_lifetime(), "{other:?}");
        }
    }

    #[test]
    fn actions_round_trip_through_their_stored_json() {
        let select = InputField {
            name: "bank".into(),
            label: "Bank".into(),
            kind: "select".into(),
            required: true,
            options: Some(vec![SelectOption {
                value: "a".into(),
                label: "Bank A".into(),
            }]),
        };
        let text = InputField {
            kind: "string".into(),
            options: None,
            ..select.clone()
        };
        let action = Action::InputFields {
            fields: vec![select, text],
        };

        let json = serde_json::to_value(&action).unwrap();

        assert_eq!(json["kind"], "input_fields");
        assert_eq!(json["fields"][0]["type"], "select");
        assert!(json["fields"][1].get("options").is_none(), "not null");
        assert_eq!(serde_json::from_value::<Action>(json).unwrap(), action);
        let confirmation = Action::Confirmation {
            channels: vec!["sms".into()],
            attempts_left: 2,
        };
        let json = serde_json::to_value(&confirmation).unwrap();
        assert_eq!(json["kind"], "confirmation");
        assert_eq!(
            serde_json::from_value::<Action>(json).unwrap(),
            confirmation
        );
    }
}
