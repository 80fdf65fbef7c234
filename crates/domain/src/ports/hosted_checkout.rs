//! The [`HostedCheckout`] port: the provider's side of the hosted pages.

use async_trait::async_trait;

use crate::operation::Operation;
use crate::CardDetails;

use super::{ProviderError, ProviderVerdict};

/// The provider's side of the hosted pages: what the user's card or decision means.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait HostedCheckout: Send + Sync {
    /// The provider (route `provider` name) whose operations these pages serve.
    fn provider(&self) -> &'static str;

    /// The user paid a waiting card deposit on the hosted card page with `card`.
    async fn pay_by_card(
        &self,
        deposit: &Operation,
        card: &CardDetails,
    ) -> Result<ProviderVerdict, ProviderError>;

    /// The user confirmed (`true`) or rejected (`false`) a waiting deposit on a bank page.
    async fn user_decision(
        &self,
        deposit: &Operation,
        approve: bool,
    ) -> Result<ProviderVerdict, ProviderError>;

    /// The banks the SBP page offers, as (id, display name).
    fn sbp_banks(&self) -> Vec<(String, String)>;
}
