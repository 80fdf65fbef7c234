//! The use cases, as one service over the ports.

mod acquirer;
pub mod callbacks;
mod checkout;
mod complete;
mod create;
mod errors;
mod page_reads;
mod pay_pages;
mod read;
mod recent;
mod reconcile;
mod refund;
mod routing;
mod steps;

use std::sync::Arc;
use std::time::Duration;

pub use acquirer::CancelError;
pub use checkout::Checkout;
pub use errors::{
    CheckoutError, CompleteError, CreateError, NotificationError, ReadError, RefundError, StepError,
};
pub use pay_pages::PayPage;
pub use refund::CreatedRefund;
pub use steps::check_input;

use crate::circuit::{Circuit, Circuits};
use crate::ports::{
    Acquirer, CallbackFormat, Clock, IdGenerator, MerchantDirectory, OperationStore,
    PaymentProvider, ProviderDirectory, QrEncoder, RefundStore, RouteTable,
};

/// Whole milliseconds of `duration`, saturating.
fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

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
    /// Refunds, beside the operations they refund (the same database).
    pub refunds: Arc<dyn RefundStore>,
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
    /// Draws QR codes (an acquirer `sbp_qr` deposit shows one of its payment page).
    pub qr: Arc<dyn QrEncoder>,
}

/// How the gateway works with acquirers.
#[derive(Debug, Clone)]
pub struct AcquirerSettings {
    /// The gateway's public base URL, without a trailing slash: acquirers send users back
    /// and notifications to it, and merchants send users to its `/pay/{id}`.
    pub public_url: String,
    /// How long a processing acquirer operation may stay quiet before the reconciler reads
    /// it (`GATEWAY_RECONCILE_AFTER`).
    pub reconcile_after: Duration,
    /// How long, from a creation request's arrival, it may go on trying further providers
    /// after definite failures (`GATEWAY_ROUTING_BUDGET`): the next one is called only if its
    /// timeout still fits.
    pub routing_budget: Duration,
}

impl Default for AcquirerSettings {
    fn default() -> Self {
        Self {
            public_url: "http://127.0.0.1:8080".to_string(),
            reconcile_after: Duration::from_secs(60),
            routing_budget: Duration::from_secs(15),
        }
    }
}

/// The gateway's use cases.
#[derive(Clone)]
pub struct Gateway {
    ports: Ports,
    acquirers: AcquirerSettings,
    /// Whether the built-in sandbox is in service (`GATEWAY_SANDBOX`).
    sandbox: bool,
    /// This process's circuit breakers, one per acquirer.
    circuits: Circuits,
    /// The latest non-final payment status this process applied to each acquirer operation.
    recent: recent::Recent,
    /// This process's payment-page reads of acquirers, at most one per operation at a time.
    page_reads: page_reads::PageReads,
}

impl Gateway {
    pub fn new(ports: Ports) -> Self {
        Self {
            ports,
            acquirers: AcquirerSettings::default(),
            sandbox: true,
            circuits: Circuits::new(),
            recent: recent::Recent::default(),
            page_reads: page_reads::PageReads::default(),
        }
    }

    /// Works with acquirers under these settings.
    pub fn with_acquirer_settings(mut self, settings: AcquirerSettings) -> Self {
        self.acquirers = settings;
        self
    }

    /// Takes the built-in sandbox out of service: no new operations are routed to it and its
    /// deposits take no user steps. Operations it already has (payouts settling) still finish.
    pub fn without_sandbox(mut self) -> Self {
        self.sandbox = false;
        self
    }

    /// Whether the sandbox's operations may take user steps (its pages are in service).
    fn in_service(&self, operation: &crate::operation::Operation) -> bool {
        !operation.is_sandbox() || self.sandbox
    }

    /// The merchant directory, for authentication at the edge.
    pub fn merchants(&self) -> &dyn MerchantDirectory {
        self.ports.merchants.as_ref()
    }

    /// This process's circuits, one per acquirer it has called, as they stand now.
    pub fn circuits(&self) -> Vec<Circuit> {
        self.circuits.snapshot(self.ports.clock.now())
    }

    /// The clock the service runs on.
    pub fn clock(&self) -> &dyn Clock {
        self.ports.clock.as_ref()
    }
}

#[cfg(test)]
pub(crate) mod tests;
