//! The [`RouteTable`] port.

use async_trait::async_trait;

use crate::route::Route;

use super::StoreError;

/// The route table.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait RouteTable: Send + Sync {
    /// Every route, enabled or not. Changes MUST be visible within 5 seconds.
    async fn routes(&self) -> Result<Vec<Route>, StoreError>;
}
