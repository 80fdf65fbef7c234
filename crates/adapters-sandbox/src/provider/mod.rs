//! [`SandboxProvider`]: the sandbox behind the domain's [`PaymentProvider`] port.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use domain::operation::{Action, Decline, DeclineCode, Operation, Outcome};
use domain::ports::{DepositStart, PaymentProvider, PayoutStart, ProviderError, ProviderVerdict};
use domain::refund::Refund;
use domain::route::{Flow, Route};
use domain::{Direction, Timestamp, WithdrawalRequisites};

use crate::rules::{declined_at_creation, payout_outcome, refund_outcome, CONFIRMATION_CODE};
use crate::{actions, plan, qr, SandboxError};

/// How long a sandbox payout takes to settle unless configured (`GATEWAY_SANDBOX_SETTLE_MS`).
pub const DEFAULT_SETTLE_AFTER: Duration = Duration::from_millis(2000);

/// The sandbox's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// Base of the hosted pages and QR links, e.g. `http://127.0.0.1:8080` (a trailing `/` is dropped).
    pub public_url: String,
    /// How long after its creation a payout settles.
    pub settle_after: Duration,
}

/// The built-in test-mode provider, with the fixed rules docs/api.md lists under the sandbox.
#[derive(Debug, Clone)]
pub struct SandboxProvider {
    public_url: String,
    settle_after_ms: i64,
}

impl SandboxProvider {
    /// A sandbox provider with this configuration.
    pub fn new(config: SandboxConfig) -> Self {
        Self {
            public_url: config.public_url.trim_end_matches('/').to_string(),
            settle_after_ms: i64::try_from(config.settle_after.as_millis()).unwrap_or(i64::MAX),
        }
    }

    /// The base URL of the hosted pages, without a trailing `/`.
    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    fn deposit_action(&self, deposit: &Operation, route: &Route) -> Result<Action, ProviderError> {
        let action = match route.flow {
            Flow::Redirect => Action::Redirect {
                url: actions::pay_url(&self.public_url, deposit.id()),
            },
            Flow::Qr => {
                let text = actions::qr_target_url(&self.public_url, deposit.id());
                let uri = qr::qr_png_data_uri(&text).map_err(SandboxError::Qr)?;
                actions::qr_requisites(uri)
            }
            Flow::Requisites => actions::card_requisites(),
            Flow::InputFields => actions::input_fields(),
            Flow::Instruction => {
                actions::instruction(deposit.amount(), deposit.currency(), deposit.id())
            }
            Flow::Confirmation => actions::confirmation(),
            Flow::Payout => return Err(SandboxError::PayoutFlowForDeposit(route.id).into()),
        };
        Ok(action)
    }
}

fn outcome_verdict(outcome: Outcome) -> ProviderVerdict {
    match outcome {
        Outcome::Approve => ProviderVerdict::Approve,
        Outcome::Decline(decline) => ProviderVerdict::Decline(decline),
    }
}

fn expect_direction(operation: &Operation, direction: Direction) -> Result<(), ProviderError> {
    if operation.direction() == direction {
        Ok(())
    } else {
        Err(SandboxError::WrongDirection {
            given: operation.direction(),
            expected: direction,
        }
        .into())
    }
}

#[async_trait]
impl PaymentProvider for SandboxProvider {
    #[tracing::instrument(
        name = "sandbox.start_deposit",
        skip_all,
        fields(operation.id = %deposit.id(), route.id = route.id, flow = route.flow.as_str())
    )]
    async fn start_deposit(
        &self,
        deposit: &Operation,
        route: &Route,
    ) -> Result<DepositStart, ProviderError> {
        expect_direction(deposit, Direction::Deposit)?;
        if declined_at_creation(deposit.amount()) {
            tracing::info!("sandbox declines the deposit: amount ends in 05");
            return Ok(DepositStart::Declined(Decline::new(
                DeclineCode::ProviderDeclined,
            )));
        }
        self.deposit_action(deposit, route).map(DepositStart::Wait)
    }

    #[tracing::instrument(
        name = "sandbox.start_payout",
        skip_all,
        fields(operation.id = %payout.id(), route.id = route.id)
    )]
    async fn start_payout(
        &self,
        payout: &Operation,
        requisites: &WithdrawalRequisites,
        route: &Route,
    ) -> Result<PayoutStart, ProviderError> {
        expect_direction(payout, Direction::Withdrawal)?;
        if route.flow != Flow::Payout {
            // The sandbox pays out one way only; the route's flow has no say here.
            tracing::warn!(
                flow = route.flow.as_str(),
                "payout route has a deposit flow"
            );
        }
        if declined_at_creation(payout.amount()) {
            tracing::info!("sandbox declines the payout: amount ends in 05");
            return Ok(PayoutStart::Declined(Decline::new(
                DeclineCode::ProviderDeclined,
            )));
        }
        // Decided now: the full card number is not stored, so it cannot be looked at later.
        let outcome = payout_outcome(requisites);
        let due_at = payout.created_at().plus_millis(self.settle_after_ms);
        tracing::info!(
            planned = if outcome == Outcome::Approve { "approve" } else { "decline" },
            due_at = %due_at,
            "sandbox accepted the payout"
        );
        Ok(PayoutStart::Accepted {
            state: Some(plan::to_state(&outcome)),
            due_at,
        })
    }

    #[tracing::instrument(name = "sandbox.poll_payout", skip_all, fields(operation.id = %payout.id()))]
    async fn poll_payout(
        &self,
        payout: &Operation,
        now: Timestamp,
    ) -> Result<ProviderVerdict, ProviderError> {
        expect_direction(payout, Direction::Withdrawal)?;
        if let Some(due_at) = payout.due_at().filter(|due| now < *due) {
            return Ok(ProviderVerdict::Pending(due_at));
        }
        // A payout without `due_at` has nothing left to wait for.
        plan::from_state(payout.provider_state()).map(outcome_verdict)
    }

    #[tracing::instrument(name = "sandbox.submit_input", skip_all, fields(operation.id = %deposit.id()))]
    async fn submit_input(
        &self,
        deposit: &Operation,
        _values: &BTreeMap<String, String>,
    ) -> Result<ProviderVerdict, ProviderError> {
        expect_direction(deposit, Direction::Deposit)?;
        Ok(ProviderVerdict::Approve)
    }

    #[tracing::instrument(name = "sandbox.start_refund", skip_all, fields(refund.id = %refund.id))]
    async fn start_refund(&self, refund: &Refund) -> Result<Timestamp, ProviderError> {
        Ok(refund.created_at.plus_millis(self.settle_after_ms))
    }

    #[tracing::instrument(name = "sandbox.poll_refund", skip_all, fields(refund.id = %refund.id))]
    async fn poll_refund(
        &self,
        refund: &Refund,
        now: Timestamp,
    ) -> Result<ProviderVerdict, ProviderError> {
        let due_at = refund.created_at.plus_millis(self.settle_after_ms);
        if now < due_at {
            return Ok(ProviderVerdict::Pending(due_at));
        }
        Ok(outcome_verdict(refund_outcome(refund.amount)))
    }

    #[tracing::instrument(name = "sandbox.check_code", skip_all, fields(operation.id = %deposit.id()))]
    async fn check_code(&self, deposit: &Operation, code: &str) -> Result<bool, ProviderError> {
        expect_direction(deposit, Direction::Deposit)?;
        Ok(code == CONFIRMATION_CODE)
    }
}

#[cfg(test)]
mod tests;
