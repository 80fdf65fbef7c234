//! A payout's planned result, kept in the operation's `provider_state`.
//!
//! The full card number is never stored, so the result is decided when the payout starts and
//! stored as `{"sandbox":{"outcome":"approve"}}` or
//! `{"sandbox":{"outcome":"decline","errorCode":"CardDeclined"}}`.

use domain::operation::{Decline, DeclineCode, Outcome, ProviderState};
use domain::ports::ProviderError;
use serde_json::{json, Value};

use crate::SandboxError;

/// The provider state recording `outcome`, as JSON text.
pub(crate) fn to_state(outcome: &Outcome) -> ProviderState {
    let plan = match outcome {
        Outcome::Approve => json!({"sandbox": {"outcome": "approve"}}),
        Outcome::Decline(decline) => json!({
            "sandbox": {"outcome": "decline", "errorCode": decline.code.as_str()}
        }),
    };
    ProviderState::new(plan.to_string())
}

/// The outcome recorded in a provider state; anything missing or unknown is an error,
/// never a default approval.
pub(crate) fn from_state(state: Option<&ProviderState>) -> Result<Outcome, ProviderError> {
    let garbled = |why: &'static str| ProviderError::from(SandboxError::GarbledState(why));
    let text = state.ok_or_else(|| garbled("is missing"))?;
    let plan: Value = serde_json::from_str(text.as_str()).map_err(|_| garbled("is not JSON"))?;
    let plan = plan
        .get("sandbox")
        .ok_or_else(|| garbled("has no `sandbox` key"))?;
    match plan.get("outcome").and_then(Value::as_str) {
        Some("approve") => Ok(Outcome::Approve),
        Some("decline") => {
            let code = plan
                .get("errorCode")
                .and_then(Value::as_str)
                .and_then(DeclineCode::parse)
                .ok_or_else(|| garbled("has a decline without a known errorCode"))?;
            Ok(Outcome::Decline(Decline::new(code)))
        }
        Some(_) | None => Err(garbled("has no known outcome")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_round_trip_through_the_state() {
        for outcome in [
            Outcome::Approve,
            Outcome::Decline(Decline::new(DeclineCode::CardDeclined)),
            Outcome::Decline(Decline::new(DeclineCode::RecipientNotFound)),
        ] {
            let state = to_state(&outcome);
            assert_eq!(from_state(Some(&state)).expect("readable"), outcome);
        }
    }

    #[test]
    fn states_have_the_documented_shape() {
        assert_eq!(
            to_state(&Outcome::Approve).as_str(),
            r#"{"sandbox":{"outcome":"approve"}}"#
        );
        assert_eq!(
            to_state(&Outcome::Decline(Decline::new(DeclineCode::CardDeclined))).as_str(),
            r#"{"sandbox":{"errorCode":"CardDeclined","outcome":"decline"}}"#
        );
    }

    #[test]
    fn missing_or_garbled_states_are_errors_not_approvals() {
        assert!(from_state(None).is_err());
        for bad in [
            json!(null),
            json!({}),
            json!("approve"),
            json!({"sandbox": {}}),
            json!({"sandbox": {"outcome": "maybe"}}),
            json!({"sandbox": {"outcome": 1}}),
            json!({"sandbox": {"outcome": "decline"}}),
            json!({"sandbox": {"outcome": "decline", "errorCode": "Nope"}}),
            json!({"other": {"outcome": "approve"}}),
        ] {
            let state = ProviderState::new(bad.to_string());
            assert!(from_state(Some(&state)).is_err(), "{bad}");
        }
        for text in ["", "{", "approve"] {
            assert!(
                from_state(Some(&ProviderState::new(text))).is_err(),
                "{text:?}"
            );
        }
    }
}
