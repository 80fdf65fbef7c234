//! The use cases, as services over the ports, each holding only what it uses.
//!
//! [`Gateway`] builds them once over [`Ports`] and hands them out: [`Creation`], [`Reads`],
//! [`Answers`], [`Refunds`], [`Disputes`], [`Steps`] and [`Statements`] (with [`Checkout`], the sandbox's hosted pages).
//! Below them sit two crate-private pieces they share and that know none of them: `core`
//! (the stores, the clock, the callbacks' format and the guarded steps that finish a
//! movement) and `calls` (the provider ports, the circuits and the acquirer settings).

mod answers;
mod callback_log;
pub mod callbacks;
mod calls;
mod cancel;
mod chargeback_checks;
mod chargebacks;
mod checkout;
mod core;
mod create;
mod creation;
mod dispute;
mod errors;
mod evidence;
mod finish;
mod gateway;
mod keys;
mod notifications;
mod page_reads;
mod pay_pages;
mod payments;
mod read;
mod recent;
mod reconcile;
mod refund;
mod refund_checks;
mod refund_finish;
mod routing;
mod statements;
mod steps;

use std::sync::Arc;
use std::time::Duration;

pub use answers::Answers;
pub use callback_log::{Callbacks, RequeueError};
pub use cancel::CancelError;
pub use checkout::Checkout;
pub use creation::Creation;
pub use dispute::Disputes;
pub use errors::{
    CheckoutError, CompleteError, CreateError, DecideError, DisputeError, NotificationError,
    ReadError, RefundError, StepError,
};
pub use gateway::Gateway;
pub use pay_pages::PayPage;
pub use read::Reads;
pub use refund::{CreatedRefund, Refunds};
pub use statements::{StatementError, Statements};
pub use steps::{check_input, Steps};

use crate::ports::{
    Acquirer, CallbackFormat, CallbackLog, Clock, DisputeStore, IdGenerator, LedgerReader,
    MerchantDirectory, OperationStore, PaymentProvider, ProviderDirectory, QrEncoder, RefundStore,
    RouteTable, TariffStore,
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
/// one concrete `Gateway` without naming the storage or provider adapters. [`Gateway::new`]
/// hands each service only the ports it uses.
#[derive(Clone)]
pub struct Ports {
    pub store: Arc<dyn OperationStore>,
    /// Refunds, beside the operations they refund (the same database).
    pub refunds: Arc<dyn RefundStore>,
    /// Disputes, beside the deposits they dispute (the same database).
    pub disputes: Arc<dyn DisputeStore>,
    pub merchants: Arc<dyn MerchantDirectory>,
    pub routes: Arc<dyn RouteTable>,
    /// The merchants' tariffs, read by every creation.
    pub tariffs: Arc<dyn TariffStore>,
    /// The merchants' ledger as they read it: balance transactions and statements.
    pub ledger: Arc<dyn LedgerReader>,
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
    /// The merchants' callbacks, as they read and requeue them.
    pub callbacks: Arc<dyn CallbackLog>,
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

#[cfg(test)]
pub(crate) mod tests;
