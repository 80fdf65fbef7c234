//! The use cases, as one service over the ports.

mod checkout;
mod complete;
mod create;
mod errors;
mod read;
mod steps;

use std::sync::Arc;

pub use checkout::{Checkout, CheckoutError};
pub use create::UNANSWERED_PAYOUT_GRACE_SECS;
pub use errors::{CompleteError, CreateError, ReadError, StepError};
pub use steps::check_input;

use crate::ports::{
    Acquirer, CallbackFormat, Clock, IdGenerator, MerchantDirectory, OperationStore,
    PaymentProvider, ProviderDirectory, RouteTable,
};

/// What a creation answers: the operation, and whether it is a replay of an earlier request.
#[derive(Debug, Clone, PartialEq)]
pub struct Created {
    pub operation: crate::operation::Operation,
    pub replayed: bool,
}

/// The adapters the service runs on.
///
/// Trait objects rather than type parameters, so the HTTP adapter and the workers can hold
/// one concrete `Gateway` without naming the storage or provider adapters.
#[derive(Clone)]
pub struct Ports {
    pub store: Arc<dyn OperationStore>,
    pub merchants: Arc<dyn MerchantDirectory>,
    pub routes: Arc<dyn RouteTable>,
    /// The built-in sandbox provider.
    pub provider: Arc<dyn PaymentProvider>,
    /// The acquirers' records, for routing and for every call to them.
    pub providers: Arc<dyn ProviderDirectory>,
    /// The Acquirer API connector.
    pub acquirer: Arc<dyn Acquirer>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
    /// The wire format of callback bodies.
    pub callback_format: Arc<dyn CallbackFormat>,
}

/// The gateway's use cases.
#[derive(Clone)]
pub struct Gateway {
    ports: Ports,
    /// The providers new operations may be routed to; `None`: every route's provider.
    routable: Option<Arc<[String]>>,
}

impl Gateway {
    pub fn new(ports: Ports) -> Self {
        Self {
            ports,
            routable: None,
        }
    }

    /// Routes new operations only to routes of these providers (an empty list: no new
    /// operations at all, every creation answers `NoRouteFound`). Operations already made on
    /// other providers' routes still finish as usual.
    pub fn routing_only_to(mut self, providers: &[&str]) -> Self {
        self.routable = Some(providers.iter().map(|p| (*p).to_string()).collect());
        self
    }

    /// Whether new operations may be routed to `provider`.
    fn routable(&self, provider: &str) -> bool {
        self.routable
            .as_ref()
            .is_none_or(|names| names.iter().any(|name| name == provider))
    }

    /// The provider named by `operation`'s route (`None` if the route is unknown).
    async fn provider_of(
        &self,
        operation: &crate::operation::Operation,
    ) -> Result<Option<String>, crate::ports::StoreError> {
        let routes = self.ports.routes.routes().await?;
        Ok(routes
            .into_iter()
            .find(|route| route.id == operation.route_id())
            .map(|route| route.provider))
    }

    /// Whether the provider of `operation`'s route is in service (may take user steps).
    async fn in_service(
        &self,
        operation: &crate::operation::Operation,
    ) -> Result<bool, crate::ports::StoreError> {
        if self.routable.is_none() {
            return Ok(true);
        }
        let provider = self.provider_of(operation).await?;
        Ok(provider.is_some_and(|provider| self.routable(&provider)))
    }

    /// The merchant directory, for authentication at the edge.
    pub fn merchants(&self) -> &dyn MerchantDirectory {
        self.ports.merchants.as_ref()
    }

    /// The clock the service runs on.
    pub fn clock(&self) -> &dyn Clock {
        self.ports.clock.as_ref()
    }
}

#[cfg(test)]
pub(crate) mod tests;
