//! The [`PaymentProvider`] port: the built-in sandbox provider.

use std::collections::BTreeMap;

use async_trait::async_trait;

use crate::operation::{Action, Decline, Operation, ProviderState};
use crate::refund::Refund;
use crate::route::Route;
use crate::{Timestamp, WithdrawalRequisites};

use super::ProviderError;

/// What a provider says when a deposit starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DepositStart {
    /// The user must do this; the deposit stays processing.
    Wait(Action),
    Declined(Decline),
}

/// What a provider says when a payout starts.
#[derive(Debug, Clone, PartialEq)]
pub enum PayoutStart {
    /// Accepted: stored with the payout, `state` and `due_at` drive [`PaymentProvider::poll_payout`].
    Accepted {
        state: Option<ProviderState>,
        due_at: Timestamp,
    },
    Declined(Decline),
}

/// What a provider says about a processing operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderVerdict {
    Approve,
    Decline(Decline),
    /// Not decided yet; ask again at the given time.
    Pending(Timestamp),
}

/// The built-in, in-process sandbox provider. Its answer is never lost, so it is asked
/// before anything is stored (an acquirer over the network goes through [`Acquirer`](super::Acquirer), the
/// other way round). Nothing here moves the merchant's balance.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait PaymentProvider: Send + Sync {
    /// Starts a deposit on `route` and says what the user must do, or declines it. It is
    /// called before the deposit is stored, so it MUST be safe to call again for the same
    /// operation id.
    async fn start_deposit(
        &self,
        deposit: &Operation,
        route: &Route,
    ) -> Result<DepositStart, ProviderError>;

    /// Starts a payout with its full requisites, or declines it. It is called before the hold
    /// commits, so it MUST NOT send money (money leaves only through `poll_payout`).
    async fn start_payout(
        &self,
        payout: &Operation,
        requisites: &WithdrawalRequisites,
        route: &Route,
    ) -> Result<PayoutStart, ProviderError>;

    /// Advances a processing payout whose `due_at` has come.
    async fn poll_payout(
        &self,
        payout: &Operation,
        now: Timestamp,
    ) -> Result<ProviderVerdict, ProviderError>;

    /// The user's input-field values for a deposit waiting for them (already checked against the fields).
    async fn submit_input(
        &self,
        deposit: &Operation,
        values: &BTreeMap<String, String>,
    ) -> Result<ProviderVerdict, ProviderError>;

    /// Whether `code` is the right confirmation code for the deposit.
    async fn check_code(&self, deposit: &Operation, code: &str) -> Result<bool, ProviderError>;

    /// When a new refund of one of its deposits settles (it is stored processing until then).
    /// It MUST NOT move money: the refund is decided only through `poll_refund`.
    async fn start_refund(&self, refund: &Refund) -> Result<Timestamp, ProviderError>;

    /// Decides (or postpones) a processing refund whose check time has come.
    async fn poll_refund(
        &self,
        refund: &Refund,
        now: Timestamp,
    ) -> Result<ProviderVerdict, ProviderError>;
}
