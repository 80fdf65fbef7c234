//! The [`ProcessRegistry`] port: serving processes report themselves.

use async_trait::async_trait;

use crate::Timestamp;

use super::StoreError;

/// What a serving process reports of itself: who it is and its circuits, written every few
/// seconds so that operators see every process's view of the providers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessReport {
    /// Unique per process run.
    pub id: String,
    /// The gateway version it runs.
    pub version: String,
    pub started_at: Timestamp,
    /// When it last reported.
    pub seen_at: Timestamp,
    pub circuits: Vec<crate::circuit::Circuit>,
}

/// Where serving processes report themselves.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ProcessRegistry: Send + Sync {
    /// Writes `report` in place of the process's earlier one, in one transaction.
    async fn report(&self, report: &ProcessReport) -> Result<(), StoreError>;

    /// Every process that reported at or after `since`, by id.
    async fn processes(&self, since: Timestamp) -> Result<Vec<ProcessReport>, StoreError>;
}
