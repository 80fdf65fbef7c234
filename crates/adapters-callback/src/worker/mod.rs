//! The outbox worker: claims due callbacks under a lease, delivers them concurrently and
//! records each attempt with what follows it.

mod deliver;
mod slots;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use domain::ports::{CallbackOutbox, Chain, Clock, MerchantDirectory, PendingCallback};
use domain::Timestamp;
use futures::StreamExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tracing::{error, info, warn};

use crate::config::CallbackConfig;
use crate::metrics::CallbackMetrics;
use crate::notifier::Notifier;
use deliver::Signer;

/// Extra time in-flight deliveries get at shutdown, past their own timeout, to be recorded.
const DRAIN_MARGIN: Duration = Duration::from_secs(5);

/// Delivers the outbox's callbacks; see [`CallbackWorker::run`].
pub struct CallbackWorker {
    inner: Arc<Inner>,
}

struct Inner {
    outbox: Arc<dyn CallbackOutbox>,
    merchants: Arc<dyn MerchantDirectory>,
    clock: Arc<dyn Clock>,
    notifier: Notifier,
    config: CallbackConfig,
    owner: String,
    metrics: CallbackMetrics,
}

impl CallbackWorker {
    /// A worker claiming as `owner` (unique per process, see [`crate::owner_id`]).
    /// Fails if `config` does not validate or the HTTP client cannot be built.
    pub fn new(
        outbox: Arc<dyn CallbackOutbox>,
        merchants: Arc<dyn MerchantDirectory>,
        clock: Arc<dyn Clock>,
        config: CallbackConfig,
        owner: impl Into<String>,
    ) -> anyhow::Result<Self> {
        config.validate()?;
        let notifier = Notifier::new(config.timeout, config.allow_private)?;
        Ok(Self {
            inner: Arc::new(Inner {
                outbox,
                merchants,
                clock,
                notifier,
                config,
                owner: owner.into(),
                metrics: CallbackMetrics::new(),
            }),
        })
    }

    /// The worker's counters; register them with the app's registry for `/metrics`.
    pub fn metrics(&self) -> &CallbackMetrics {
        &self.inner.metrics
    }

    /// The lease owner id this worker claims as.
    pub fn owner(&self) -> &str {
        &self.inner.owner
    }

    /// Claims one batch and delivers it (up to `concurrency` at once); returns how many were attempted.
    pub async fn run_once(&self) -> anyhow::Result<usize> {
        let inner = &self.inner;
        let now = inner.clock.now();
        let claimed = inner
            .outbox
            .claim_due(
                &inner.owner,
                now,
                inner.lease_until(now),
                inner.config.batch,
            )
            .await
            .context("claiming due callbacks")?;
        let count = claimed.len();
        futures::stream::iter(inner.signers(claimed).await)
            .for_each_concurrent(inner.config.concurrency, |(callback, signer)| async move {
                inner.deliver(callback, signer).await;
            })
            .await;
        Ok(count)
    }

    /// Puts held callbacks whose merchant is enabled back to pending (the safety net
    /// [`CallbackWorker::run`] runs every `held_sweep`); returns how many.
    pub async fn sweep_held(&self) -> anyhow::Result<u64> {
        let inner = &self.inner;
        let released = inner
            .outbox
            .release_held(inner.clock.now())
            .await
            .context("releasing held callbacks of enabled merchants")?;
        if released > 0 {
            // Enabling a merchant releases its own: these were left over (say, a merchant
            // enabled by hand in the database).
            warn!(
                callbacks = released,
                "held callbacks of enabled merchants were released by the sweep"
            );
        }
        Ok(released)
    }

    /// Delivers callbacks until `shutdown` resolves, then stops claiming, lets deliveries in
    /// flight finish (bounded by the timeout) and releases this owner's leases.
    ///
    /// A callback whose merchant is disabled is held, not attempted; every `held_sweep` (and
    /// at start) held callbacks of enabled merchants are put back to pending.
    ///
    /// New work is claimed when delivery slots are free (see `slots`: half a batch of them,
    /// or what is free after a few milliseconds), so a slow merchant holds up only the slots
    /// its own callbacks occupy. The merchants of a claimed batch are read together, with
    /// their current secrets, just before its deliveries start.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let mut shutdown = std::pin::pin!(shutdown);
        let slots = Arc::new(Semaphore::new(self.inner.config.concurrency));
        let batch = usize::try_from(self.inner.config.batch).unwrap_or(usize::MAX);
        let mut tasks = JoinSet::new();
        let mut next_sweep = tokio::time::Instant::now();
        info!(owner = %self.inner.owner, "callback worker started");
        loop {
            reap(&mut tasks);
            if tokio::time::Instant::now() >= next_sweep {
                if let Err(e) = self.sweep_held().await {
                    warn!(
                        error = format!("{e:#}"),
                        "the sweep of held callbacks failed; it runs again later"
                    );
                }
                next_sweep = tokio::time::Instant::now() + self.inner.config.held_sweep;
            }
            let inner = &self.inner;
            let first = tokio::select! {
                biased;
                () = &mut shutdown => break,
                permit = slots.clone().acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_) => break,
                },
            };
            let mut permits = slots::gather(
                &slots,
                first,
                batch,
                inner.config.concurrency,
                slots::LINGER,
            )
            .await;
            let claimed = inner.claim(permits.len()).await;
            if claimed.is_empty() {
                drop(permits);
                tokio::select! {
                    biased;
                    () = &mut shutdown => break,
                    () = tokio::time::sleep(inner.config.poll_interval) => continue,
                }
            }
            for (callback, signer) in inner.signers(claimed).await {
                let permit = match permits.pop() {
                    Some(permit) => permit,
                    // Only if the outbox returned more than asked for: wait for a slot.
                    None => match slots.clone().acquire_owned().await {
                        Ok(permit) => permit,
                        Err(_) => break,
                    },
                };
                tasks.spawn(deliver_holding(inner.clone(), callback, signer, permit));
            }
        }
        let inner = self.inner;
        info!(in_flight = tasks.len(), "callback worker stopping");
        let bound = inner.config.timeout + DRAIN_MARGIN;
        let drained = tokio::time::timeout(bound, async {
            while let Some(done) = tasks.join_next().await {
                log_panic(done);
            }
        })
        .await;
        if drained.is_err() {
            warn!(
                in_flight = tasks.len(),
                "deliveries still in flight at shutdown were abandoned"
            );
            tasks.shutdown().await;
        }
        if let Err(e) = inner.outbox.release(&inner.owner).await {
            error!(error = %Chain(&e), "releasing callback leases failed; they lapse when the lease ends");
        }
        info!(owner = %inner.owner, "callback worker stopped");
    }
}

async fn deliver_holding(
    inner: Arc<Inner>,
    callback: PendingCallback,
    signer: Signer,
    slot: OwnedSemaphorePermit,
) {
    inner.deliver(callback, signer).await;
    drop(slot);
}

/// Collects finished delivery tasks so the set does not grow, logging any that panicked.
fn reap(tasks: &mut JoinSet<()>) {
    while let Some(done) = tasks.try_join_next() {
        log_panic(done);
    }
}

fn log_panic(done: Result<(), tokio::task::JoinError>) {
    if let Err(e) = done {
        if e.is_panic() {
            error!(error = %e, "a callback delivery panicked; the callback comes back when its lease ends");
        }
    }
}

impl Inner {
    fn lease_until(&self, now: Timestamp) -> Timestamp {
        now.plus_millis(i64::try_from(self.config.lease.as_millis()).unwrap_or(i64::MAX))
    }

    /// Claims up to `limit` due callbacks; a storage error is logged and claims nothing.
    async fn claim(&self, limit: usize) -> Vec<PendingCallback> {
        let now = self.clock.now();
        let limit = u32::try_from(limit).unwrap_or(u32::MAX);
        match self
            .outbox
            .claim_due(&self.owner, now, self.lease_until(now), limit)
            .await
        {
            Ok(claimed) => claimed,
            Err(e) => {
                warn!(error = %Chain(&e), "claiming due callbacks failed");
                Vec::new()
            }
        }
    }
}
