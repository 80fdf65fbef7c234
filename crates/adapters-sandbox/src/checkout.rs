//! The sandbox behind the domain's [`HostedCheckout`] port: what a typed card or a bank-page
//! decision means (the sandbox rules of docs/api.md).

use async_trait::async_trait;
use domain::operation::{Decline, DeclineCode, Operation, Outcome};
use domain::ports::{HostedCheckout, ProviderError, ProviderVerdict};
use domain::{CardDetails, Direction};

use crate::rules::{card_outcome, sbp_banks};
use crate::SandboxProvider;

/// Hosted pages serve deposits only; anything else is a wiring bug, not a user's mistake.
fn expect_deposit(operation: &Operation) -> Result<(), ProviderError> {
    match operation.direction() {
        Direction::Deposit => Ok(()),
        Direction::Withdrawal => Err(ProviderError(
            "sandbox hosted checkout was asked about a withdrawal".into(),
        )),
    }
}

fn verdict(outcome: Outcome) -> ProviderVerdict {
    match outcome {
        Outcome::Approve => ProviderVerdict::Approve,
        Outcome::Decline(decline) => ProviderVerdict::Decline(decline),
    }
}

#[async_trait]
impl HostedCheckout for SandboxProvider {
    fn provider(&self) -> &'static str {
        crate::PROVIDER_NAME
    }

    // `skip_all`: the card must never reach a span or a log line.
    #[tracing::instrument(name = "sandbox.pay_by_card", skip_all, fields(operation.id = %deposit.id()))]
    async fn pay_by_card(
        &self,
        deposit: &Operation,
        card: &CardDetails,
    ) -> Result<ProviderVerdict, ProviderError> {
        expect_deposit(deposit)?;
        let outcome = card_outcome(&card.pan);
        tracing::info!(
            approved = matches!(outcome, Outcome::Approve),
            "sandbox decided a card payment"
        );
        Ok(verdict(outcome))
    }

    #[tracing::instrument(name = "sandbox.user_decision", skip_all, fields(operation.id = %deposit.id(), approve))]
    async fn user_decision(
        &self,
        deposit: &Operation,
        approve: bool,
    ) -> Result<ProviderVerdict, ProviderError> {
        expect_deposit(deposit)?;
        Ok(if approve {
            ProviderVerdict::Approve
        } else {
            ProviderVerdict::Decline(Decline::new(DeclineCode::PaymentRejected))
        })
    }

    fn sbp_banks(&self) -> Vec<(String, String)> {
        sbp_banks()
            .iter()
            .map(|(id, name)| ((*id).to_string(), (*name).to_string()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use domain::testkit::OperationBuilder;
    use domain::{OperationId, PaymentMethod, Timestamp};
    use futures::executor::block_on;

    use super::*;
    use crate::rules::{CARD_APPROVE, CARD_DECLINED, CARD_INSUFFICIENT_FUNDS};
    use crate::SandboxConfig;

    fn provider() -> SandboxProvider {
        SandboxProvider::new(SandboxConfig {
            public_url: "http://127.0.0.1:8080".into(),
            settle_after: Duration::from_millis(10),
        })
    }

    fn operation(direction: Direction, method: PaymentMethod) -> Operation {
        let op = match direction {
            Direction::Deposit => OperationBuilder::deposit(method),
            Direction::Withdrawal => OperationBuilder::payout(method),
        };
        op.id(OperationId::from_uuid(uuid::Uuid::from_u128(42)))
            .created(Timestamp::from_millis(1_790_000_000_000))
            .build()
    }

    fn card(pan: &str) -> CardDetails {
        CardDetails::parse(pan, "12/39", "123", (2026, 1)).expect("valid card")
    }

    fn pay(pan: &str) -> ProviderVerdict {
        let deposit = operation(Direction::Deposit, PaymentMethod::Card);
        block_on(provider().pay_by_card(&deposit, &card(pan))).expect("a verdict")
    }

    fn declined(code: DeclineCode) -> ProviderVerdict {
        ProviderVerdict::Decline(Decline::new(code))
    }

    #[test]
    fn test_cards_decide_the_card_payment() {
        assert_eq!(pay(CARD_APPROVE), ProviderVerdict::Approve);
        assert_eq!(pay(CARD_DECLINED), declined(DeclineCode::CardDeclined));
        assert_eq!(
            pay(CARD_INSUFFICIENT_FUNDS),
            declined(DeclineCode::InsufficientFunds)
        );
    }

    #[test]
    fn any_other_valid_card_approves() {
        for pan in ["5555555555554444", "2200700000000009", "4111111111111111"] {
            assert_eq!(pay(pan), ProviderVerdict::Approve, "{pan}");
        }
    }

    #[test]
    fn confirm_approves_and_reject_declines_as_payment_rejected() {
        for method in [
            PaymentMethod::Sbp,
            PaymentMethod::SbpQr,
            PaymentMethod::BankAPay,
            PaymentMethod::BankBPay,
            PaymentMethod::BankCPay,
        ] {
            let deposit = operation(Direction::Deposit, method);
            let confirm = block_on(provider().user_decision(&deposit, true));
            let reject = block_on(provider().user_decision(&deposit, false));
            assert_eq!(confirm.ok(), Some(ProviderVerdict::Approve), "{method}");
            assert_eq!(
                reject.ok(),
                Some(declined(DeclineCode::PaymentRejected)),
                "{method}"
            );
        }
    }

    #[test]
    fn withdrawals_have_no_hosted_checkout() {
        let payout = operation(Direction::Withdrawal, PaymentMethod::Card);
        assert!(block_on(provider().pay_by_card(&payout, &card(CARD_APPROVE))).is_err());
        assert!(block_on(provider().user_decision(&payout, true)).is_err());
    }

    #[test]
    fn sbp_banks_are_the_sandbox_list() {
        let banks = HostedCheckout::sbp_banks(&provider());
        let expected: Vec<(String, String)> = sbp_banks()
            .iter()
            .map(|(id, name)| (id.to_string(), name.to_string()))
            .collect();
        assert_eq!(banks, expected);
        assert!(!banks.is_empty());
    }
}
