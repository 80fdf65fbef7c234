//! The [`ProviderDirectory`] port: the acquirers as configured.

use async_trait::async_trait;

use crate::provider::AcquirerProvider;

use super::StoreError;

/// The acquirers the gateway reaches over the network, as configured.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ProviderDirectory: Send + Sync {
    /// Every acquirer provider, enabled or not. Changes MUST be visible within 5 seconds.
    async fn acquirers(&self) -> Result<Vec<AcquirerProvider>, StoreError>;

    /// The acquirer provider with this name, enabled or not; `Ok(None)` if there is none.
    /// Changes MUST be visible within 5 seconds.
    async fn acquirer(&self, name: &str) -> Result<Option<AcquirerProvider>, StoreError>;
}
