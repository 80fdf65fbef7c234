//! What every handler shares: the gateway, readiness, settings, metrics and the rate limiter.

use std::sync::Arc;

use domain::service::Gateway;
use domain::MerchantId;
use futures::future::BoxFuture;
use prometheus::Registry;
use tokio::sync::Semaphore;

use crate::metrics::Metrics;
use crate::rate_limit::RateLimiter;

/// Provider notifications one process handles at once, across providers. Far above what a
/// database that keeps up needs (a notification takes milliseconds, so 1,000 a second keep a
/// few in progress); reached only when notifications queue behind a saturated database.
pub const NOTIFICATIONS_AT_ONCE: usize = 256;

/// Settings of the HTTP adapter.
#[derive(Debug, Clone, Default)]
pub struct HttpSettings {
    /// Requests per second allowed per merchant on `/api/v1`; 0 turns the limit off.
    pub rate_limit_per_sec: u32,
    /// The base URL clients reach this gateway at (`GATEWAY_PUBLIC_URL`), for links in pages.
    pub public_url: String,
}

/// Whether the gateway can serve: implemented by the app over the database for `/readyz`.
pub trait Readiness: Send + Sync {
    /// `true` when the database answers; MUST finish quickly (it is polled by orchestrators).
    fn ready(&self) -> BoxFuture<'_, bool>;
}

/// A [`Readiness`] from an async closure, e.g. `ReadyFn(move || { let db = db.clone(); async move { db.ping().await } })`
/// (lets the app adapt a database type it does not own without a wrapper type).
pub struct ReadyFn<F>(pub F);

impl<F, Fut> Readiness for ReadyFn<F>
where
    F: Fn() -> Fut + Send + Sync,
    Fut: std::future::Future<Output = bool> + Send + 'static,
{
    fn ready(&self) -> BoxFuture<'_, bool> {
        Box::pin((self.0)())
    }
}

/// A [`Readiness`] that is always ready (for tests and for wiring without a database check).
#[derive(Debug, Clone, Copy, Default)]
pub struct AlwaysReady;

impl Readiness for AlwaysReady {
    fn ready(&self) -> BoxFuture<'_, bool> {
        Box::pin(futures::future::ready(true))
    }
}

/// The state every request handler shares; the app builds one and hands it to [`crate::server`].
pub struct HttpState {
    gateway: Gateway,
    readiness: Arc<dyn Readiness>,
    settings: HttpSettings,
    metrics: Metrics,
    limiter: RateLimiter<MerchantId>,
    notification_slots: Semaphore,
}

impl HttpState {
    /// Builds the state with a registry of its own; other components can add their metrics
    /// to it through [`HttpState::metrics_registry`].
    pub fn new(gateway: Gateway, readiness: Arc<dyn Readiness>, settings: HttpSettings) -> Self {
        // Registering fixed, valid names in an empty registry cannot fail.
        let metrics = Metrics::new(Registry::new())
            .unwrap_or_else(|e| unreachable!("HTTP metrics in a fresh registry: {e}"));
        Self::with_metrics(gateway, readiness, settings, metrics)
    }

    /// Builds the state and registers the HTTP metrics in `registry`, which `/metrics` then
    /// exports whole. Fails only if the metric names are already registered there.
    pub fn with_registry(
        gateway: Gateway,
        readiness: Arc<dyn Readiness>,
        settings: HttpSettings,
        registry: Registry,
    ) -> Result<Self, prometheus::Error> {
        let metrics = Metrics::new(registry)?;
        Ok(Self::with_metrics(gateway, readiness, settings, metrics))
    }

    fn with_metrics(
        gateway: Gateway,
        readiness: Arc<dyn Readiness>,
        settings: HttpSettings,
        metrics: Metrics,
    ) -> Self {
        let limiter = RateLimiter::new(settings.rate_limit_per_sec);
        Self {
            gateway,
            readiness,
            settings,
            metrics,
            limiter,
            notification_slots: Semaphore::new(NOTIFICATIONS_AT_ONCE),
        }
    }

    /// The use cases.
    pub fn gateway(&self) -> &Gateway {
        &self.gateway
    }

    /// The adapter's settings.
    pub fn settings(&self) -> &HttpSettings {
        &self.settings
    }

    /// The registry `/metrics` exports: register other components' metrics here.
    pub fn metrics_registry(&self) -> &Registry {
        self.metrics.registry()
    }

    pub(crate) fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// One permit per acquirer notification in progress in this process.
    pub(crate) fn notification_slots(&self) -> &Semaphore {
        &self.notification_slots
    }

    pub(crate) fn readiness(&self) -> &dyn Readiness {
        self.readiness.as_ref()
    }

    pub(crate) fn limiter(&self) -> &RateLimiter<MerchantId> {
        &self.limiter
    }
}
