//! Fakes for the ports, a real local receiver, and a test environment tying them together.

mod outbox;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adapters_callback::{CallbackConfig, CallbackWorker};
use async_trait::async_trait;
use domain::callback::RetrySchedule;
use domain::merchant::{Merchant, Secret};
use domain::ports::{CallbackOutbox, Clock, MerchantDirectory, RetryOutcome, StoreError};
use domain::{Direction, MerchantId, OperationId, Timestamp};
use testkit::CallbackReceiver;

pub use outbox::FakeOutbox;

pub const DEPOSIT_SECRET: &str = "d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0";
pub const WITHDRAWAL_SECRET: &str =
    "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
pub const OWNER: &str = "test-host-1-owner";

pub use domain::testkit::WallClock as SystemClock;

/// Merchants in memory; lookups of `failing` answer a storage error. A merchant can be read
/// through the directory as enabled or not regardless of its stored flag (`read_as`), as a
/// directory's few-seconds-old copy would be.
#[derive(Default)]
pub struct FakeMerchants {
    merchants: Mutex<HashMap<MerchantId, Merchant>>,
    pub failing: Mutex<Option<MerchantId>>,
    stale: Mutex<HashMap<MerchantId, bool>>,
}

impl FakeMerchants {
    /// Whether `id` is enabled as stored (what the outbox's hold reads), `None` if unknown.
    pub fn is_enabled(&self, id: &MerchantId) -> Option<bool> {
        self.merchants
            .lock()
            .expect("lock")
            .get(id)
            .map(|m| m.enabled)
    }

    /// Stores `id` as enabled or not; the directory reads it so too (unless `read_as` says
    /// otherwise).
    pub fn set_enabled(&self, id: &MerchantId, enabled: bool) {
        if let Some(merchant) = self.merchants.lock().expect("lock").get_mut(id) {
            merchant.enabled = enabled;
        }
    }

    /// The directory reads `id` as `enabled`, whatever is stored.
    pub fn read_as(&self, id: &MerchantId, enabled: bool) {
        self.stale.lock().expect("lock").insert(id.clone(), enabled);
    }

    /// `merchant` as the directory reads it.
    fn as_read(&self, mut merchant: Merchant) -> Merchant {
        if let Some(enabled) = self.stale.lock().expect("lock").get(&merchant.id) {
            merchant.enabled = *enabled;
        }
        merchant
    }

    pub fn add(&self, id: &str, enabled: bool) -> MerchantId {
        let id = MerchantId::parse(id).expect("merchant id");
        let merchant = Merchant {
            enabled,
            ..domain::testkit::merchant_with_secrets(
                id.as_str(),
                &format!("{id} shop"),
                Secret::new(DEPOSIT_SECRET),
                Secret::new(WITHDRAWAL_SECRET),
            )
        };
        self.merchants
            .lock()
            .expect("merchants lock")
            .insert(id.clone(), merchant);
        id
    }
}

#[async_trait]
impl MerchantDirectory for FakeMerchants {
    async fn merchant(&self, id: &MerchantId) -> Result<Option<Merchant>, StoreError> {
        if self.failing.lock().expect("lock").as_ref() == Some(id) {
            return Err(StoreError::Unavailable("merchant table locked".into()));
        }
        let found = self.merchants.lock().expect("lock").get(id).cloned();
        Ok(found.map(|m| self.as_read(m)))
    }

    /// Fails as a whole if `failing` is among `ids`, as one database read would.
    async fn merchants(&self, ids: &[MerchantId]) -> Result<Vec<Merchant>, StoreError> {
        if let Some(failing) = self.failing.lock().expect("lock").as_ref() {
            if ids.contains(failing) {
                return Err(StoreError::Unavailable("merchant table locked".into()));
            }
        }
        let mut found: Vec<Merchant> = {
            let merchants = self.merchants.lock().expect("lock");
            ids.iter()
                .filter_map(|id| merchants.get(id).cloned())
                .collect()
        };
        found.dedup_by(|a, b| a.id == b.id);
        Ok(found.into_iter().map(|m| self.as_read(m)).collect())
    }
}

/// Settings for tests: private targets allowed, tiny delays, quick polling.
pub fn config(schedule_ms: &[u64]) -> CallbackConfig {
    CallbackConfig {
        schedule: RetrySchedule(
            schedule_ms
                .iter()
                .copied()
                .map(Duration::from_millis)
                .collect(),
        ),
        timeout: Duration::from_secs(5),
        allow_private: true,
        concurrency: 8,
        batch: 16,
        lease: Duration::from_secs(30),
        poll_interval: Duration::from_millis(20),
        held_sweep: Duration::from_millis(50),
    }
}

pub struct TestEnv {
    pub outbox: Arc<FakeOutbox>,
    pub merchants: Arc<FakeMerchants>,
    pub clock: Arc<SystemClock>,
    /// `/ok` answers 200 (or as told), `/hang` answers only after 30 s, `/redirect` answers
    /// 302 to `/ok`; tests give `/slow` its delay.
    pub receiver: CallbackReceiver,
    /// The enabled merchant `m1`.
    pub merchant: MerchantId,
}

impl TestEnv {
    pub async fn new() -> Self {
        Self::with_workers(1).await
    }

    pub async fn with_workers(workers: usize) -> Self {
        let merchants = Arc::new(FakeMerchants::default());
        let merchant = merchants.add("m1", true);
        let receiver = CallbackReceiver::with_workers(workers);
        receiver.set_delay("/hang", Duration::from_secs(30));
        receiver.redirect("/redirect", "/ok");
        Self {
            outbox: Arc::new(FakeOutbox::new(merchants.clone())),
            merchants,
            clock: Arc::new(SystemClock),
            receiver,
            merchant,
        }
    }

    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    pub fn worker(&self, config: CallbackConfig) -> CallbackWorker {
        self.worker_as(config, OWNER)
    }

    pub fn worker_as(&self, config: CallbackConfig, owner: &str) -> CallbackWorker {
        CallbackWorker::new(
            self.outbox.clone(),
            self.merchants.clone(),
            self.clock.clone(),
            config,
            owner,
        )
        .expect("a valid worker")
    }

    /// Queues a callback of merchant `m1` to `url`, due now; returns its operation id.
    pub fn enqueue(&self, direction: Direction, url: &str) -> OperationId {
        let merchant = self.merchant.clone();
        self.enqueue_for(&merchant, direction, url, self.now())
    }

    /// A callback for `merchant` to the receiver's `/ok`, due now.
    pub fn enqueue_ok_for(&self, merchant: &MerchantId, direction: Direction) -> OperationId {
        self.enqueue_for(merchant, direction, &self.receiver.url("/ok"), self.now())
    }

    /// An operator's retry, now, of the callback of operation `id`.
    pub async fn retry(&self, id: OperationId) -> RetryOutcome {
        let outcome = self.outbox.retry(id.as_uuid(), self.now()).await;
        outcome.expect("retry")
    }

    pub fn enqueue_for(
        &self,
        merchant: &MerchantId,
        direction: Direction,
        url: &str,
        due: Timestamp,
    ) -> OperationId {
        let id = OperationId::from_uuid(uuid::Uuid::new_v4());
        let body = body_for(id, direction);
        self.outbox
            .enqueue(id, merchant, direction, url, &body, due);
        id
    }

    /// Calls `run_once` until `done` holds; panics after a generous 30 s.
    pub async fn run_until(&self, worker: &CallbackWorker, done: impl Fn() -> bool) {
        let started = Instant::now();
        while !done() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "condition not reached"
            );
            worker.run_once().await.expect("run_once");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// A callback body like the gateway's (the callback rules of docs/api.md).
pub fn body_for(id: OperationId, direction: Direction) -> String {
    serde_json::json!({"data": {
        "operationId": id.to_string(), "type": direction.as_str(), "paymentMethod": "card",
        "userId": "u-1", "status": 1, "amount": "100.00", "currency": "RUB",
        "updatedAt": "2026-11-21T10:00:00Z"
    }})
    .to_string()
}

/// Waits (polling every 10 ms) until `done` holds; panics after `limit`.
pub async fn wait_for(limit: Duration, what: &str, done: impl Fn() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A shutdown signal for `CallbackWorker::run` and the sender that fires it.
pub fn shutdown_signal() -> (
    tokio::sync::oneshot::Sender<()>,
    impl Future<Output = ()> + Send + 'static,
) {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    (tx, async move {
        let _ = rx.await;
    })
}
