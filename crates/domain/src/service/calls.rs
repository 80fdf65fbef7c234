//! The providers the services call: the built-in sandbox, the acquirers' records and the
//! Acquirer API connector, with this process's circuit breakers and the settings acquirers
//! are worked with (the gateway's public URL, the routing budget).
//!
//! It sits below the services and knows none of them.

use std::sync::Arc;

use super::{millis, AcquirerSettings};
use crate::acquirer::{AcquirerPayment, CallResult, PaymentOrder, NOT_AFTER_SECS};
use crate::attempt::Attempt;
use crate::circuit::Circuits;
use crate::operation::Operation;
use crate::ports::{Acquirer, Clock, PaymentProvider, ProviderDirectory};
use crate::provider::AcquirerProvider;
use crate::{Direction, OperationId, WithdrawalRequisites};

/// The provider ports and what calling them needs.
pub(super) struct Calls {
    /// The built-in sandbox provider.
    pub(super) provider: Arc<dyn PaymentProvider>,
    /// The acquirers' records, for routing and for every call to them.
    pub(super) providers: Arc<dyn ProviderDirectory>,
    /// The Acquirer API connector.
    pub(super) acquirer: Arc<dyn Acquirer>,
    pub(super) settings: AcquirerSettings,
    /// Whether the built-in sandbox is in service (`GATEWAY_SANDBOX`).
    pub(super) sandbox: bool,
    /// This process's circuit breakers, one per acquirer.
    pub(super) circuits: Circuits,
    /// Times the calls (the same clock as the core's).
    pub(super) clock: Arc<dyn Clock>,
}

impl Calls {
    /// Whether the sandbox's operations may take user steps (its pages are in service).
    pub(super) fn in_service(&self, operation: &Operation) -> bool {
        !operation.is_sandbox() || self.sandbox
    }

    /// The gateway's payment page for a deposit: `{public_url}/pay/{id}`.
    pub(super) fn pay_url(&self, id: OperationId) -> String {
        format!("{}/pay/{id}", self.settings.public_url)
    }

    /// Where an acquirer sends the user back after paying.
    fn return_url(&self, id: OperationId) -> String {
        format!("{}/pay/{id}/return", self.settings.public_url)
    }

    /// Where an acquirer posts its notifications.
    fn notify_url(&self, provider: &str) -> String {
        format!(
            "{}/providers/{provider}/notifications",
            self.settings.public_url
        )
    }

    /// Sends the creation call of a committed attempt, once. Returns what it answered and the
    /// attempt with the call's latency.
    pub(super) async fn call_creation(
        &self,
        operation: &Operation,
        mut attempt: Attempt,
        payout: Option<&WithdrawalRequisites>,
        acquirer: &AcquirerProvider,
    ) -> (CallResult<AcquirerPayment>, Attempt) {
        let is_deposit = operation.direction() == Direction::Deposit;
        let order = PaymentOrder {
            reference: operation.id(),
            direction: operation.direction(),
            method: operation.method(),
            amount: operation.amount(),
            currency: operation.currency(),
            notify_url: self.notify_url(acquirer.name.as_str()),
            not_after: attempt.created_at.plus_seconds(NOT_AFTER_SECS),
            return_url: is_deposit.then(|| self.return_url(operation.id())),
            expires_at: operation.expires_at(),
            payout: payout.cloned(),
        };
        let sent_at = self.clock.now();
        let result = self.acquirer.create(acquirer, &order).await;
        drop(order);
        let now = self.clock.now();
        attempt.latency_ms = Some((now.millis() - sent_at.millis()).max(0));
        attempt.updated_at = now;
        (result, attempt)
    }
}

/// Milliseconds of a provider's lease, for the reconciler's claims.
pub(super) fn lease_millis(acquirer: &AcquirerProvider) -> i64 {
    millis(acquirer.lease())
}
