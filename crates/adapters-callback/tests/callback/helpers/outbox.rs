//! An in-memory `CallbackOutbox` that honours leases, attempt numbering and holds as the port
//! says.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use domain::callback::{CallbackAttempt, CallbackState};
use domain::ports::{
    AttemptResult, CallbackOutbox, CallbackStatus, HoldOutcome, PendingCallback, RetryOutcome,
    StoreError,
};
use domain::{Direction, MerchantId, OperationId, Timestamp};

use super::FakeMerchants;

/// One outbox row.
#[derive(Debug, Clone)]
pub struct Row {
    pub merchant_id: MerchantId,
    pub direction: Direction,
    pub url: String,
    pub body: String,
    pub state: CallbackState,
    /// Attempts recorded over the callback's whole life.
    pub attempts_made: u32,
    pub failures_in_run: u32,
    pub next_at: Timestamp,
    pub lease: Option<(String, Timestamp)>,
    pub history: Vec<CallbackAttempt>,
    pub results: Vec<AttemptResult>,
    pub last_error: Option<String>,
    seq: usize,
}

pub struct FakeOutbox {
    rows: Mutex<HashMap<OperationId, Row>>,
    releases: AtomicUsize,
    /// Whose stored `enabled` flag a hold reads.
    merchants: Arc<FakeMerchants>,
}

impl FakeOutbox {
    /// An empty outbox whose holds read the merchants' flags in `merchants`.
    pub fn new(merchants: Arc<FakeMerchants>) -> Self {
        Self {
            rows: Mutex::default(),
            releases: AtomicUsize::default(),
            merchants,
        }
    }

    /// What the store's enable does: the merchant enabled, and its held callbacks back to
    /// pending, due when they were, in one step. How many were released.
    pub fn enable(&self, merchant: &MerchantId) -> usize {
        let mut rows = self.rows.lock().expect("outbox lock");
        self.merchants.set_enabled(merchant, true);
        let mut released = 0;
        for row in rows.values_mut() {
            if row.merchant_id == *merchant && row.state == CallbackState::Held {
                row.state = CallbackState::Pending;
                released += 1;
            }
        }
        released
    }

    /// Queues a pending callback due at `due`.
    pub fn enqueue(
        &self,
        id: OperationId,
        merchant: &MerchantId,
        direction: Direction,
        url: &str,
        body: &str,
        due: Timestamp,
    ) {
        let mut rows = self.rows.lock().expect("outbox lock");
        let seq = rows.len();
        rows.insert(
            id,
            Row {
                merchant_id: merchant.clone(),
                direction,
                url: url.to_string(),
                body: body.to_string(),
                state: CallbackState::Pending,
                attempts_made: 0,
                failures_in_run: 0,
                next_at: due,
                lease: None,
                history: Vec::new(),
                results: Vec::new(),
                last_error: None,
                seq,
            },
        );
    }

    pub fn row(&self, id: OperationId) -> Row {
        self.rows.lock().expect("outbox lock")[&id].clone()
    }

    pub fn state(&self, id: OperationId) -> CallbackState {
        self.row(id).state
    }

    /// How many callbacks are in `state`.
    pub fn count(&self, state: CallbackState) -> usize {
        let rows = self.rows.lock().expect("outbox lock");
        rows.values().filter(|r| r.state == state).count()
    }

    /// How many leases `owner` holds.
    pub fn leases_held_by(&self, owner: &str) -> usize {
        let rows = self.rows.lock().expect("outbox lock");
        rows.values()
            .filter(|r| matches!(&r.lease, Some((o, _)) if o == owner))
            .count()
    }

    pub fn release_calls(&self) -> usize {
        self.releases.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl CallbackOutbox for FakeOutbox {
    async fn claim_due(
        &self,
        owner: &str,
        now: Timestamp,
        lease_until: Timestamp,
        limit: u32,
    ) -> Result<Vec<PendingCallback>, StoreError> {
        let mut rows = self.rows.lock().expect("outbox lock");
        let mut due: Vec<(OperationId, Timestamp, usize)> = rows
            .iter()
            .filter(|(_, r)| r.state == CallbackState::Pending && r.next_at <= now)
            .filter(|(_, r)| match &r.lease {
                None => true,
                Some((_, until)) => *until <= now,
            })
            .map(|(id, r)| (*id, r.next_at, r.seq))
            .collect();
        due.sort_by_key(|(_, at, seq)| (*at, *seq));
        due.truncate(limit as usize);
        Ok(due
            .into_iter()
            .map(|(id, _, _)| {
                let row = rows.get_mut(&id).expect("row just seen");
                row.lease = Some((owner.to_string(), lease_until));
                PendingCallback {
                    operation_id: id,
                    refund_id: None,
                    dispute: None,
                    merchant_id: row.merchant_id.clone(),
                    direction: row.direction,
                    url: row.url.clone(),
                    body: row.body.clone(),
                    attempt: row.attempts_made + 1,
                    failures_in_run: row.failures_in_run,
                }
            })
            .collect())
    }

    async fn record_attempt(
        &self,
        owner: &str,
        attempt: &CallbackAttempt,
        result: &AttemptResult,
    ) -> Result<bool, StoreError> {
        let mut rows = self.rows.lock().expect("outbox lock");
        let Some(row) = rows.get_mut(&attempt.operation_id) else {
            return Ok(false);
        };
        if !matches!(&row.lease, Some((o, _)) if o == owner) {
            return Ok(false);
        }
        row.lease = None;
        row.attempts_made += 1;
        row.history.push(attempt.clone());
        row.results.push(result.clone());
        row.last_error = attempt.error.clone();
        match result {
            AttemptResult::Delivered => row.state = CallbackState::Delivered,
            AttemptResult::RetryAt(at) => {
                row.failures_in_run += 1;
                row.next_at = *at;
            }
            AttemptResult::Failed(reason) => {
                row.failures_in_run += 1;
                row.state = CallbackState::Failed;
                row.last_error = Some(reason.clone());
            }
        }
        Ok(true)
    }

    async fn release(&self, owner: &str) -> Result<(), StoreError> {
        self.releases.fetch_add(1, Ordering::SeqCst);
        let mut rows = self.rows.lock().expect("outbox lock");
        for row in rows.values_mut() {
            if matches!(&row.lease, Some((o, _)) if o == owner) {
                row.lease = None;
            }
        }
        Ok(())
    }

    async fn hold(
        &self,
        owner: &str,
        callback: &PendingCallback,
        _at: Timestamp,
    ) -> Result<HoldOutcome, StoreError> {
        let mut rows = self.rows.lock().expect("outbox lock");
        if self.merchants.is_enabled(&callback.merchant_id) != Some(false) {
            return Ok(HoldOutcome::MerchantEnabled);
        }
        match rows.get_mut(&callback.operation_id) {
            Some(row)
                if row.state == CallbackState::Pending
                    && matches!(&row.lease, Some((o, _)) if o == owner) =>
            {
                row.state = CallbackState::Held;
                row.lease = None;
                Ok(HoldOutcome::Held)
            }
            _ => Ok(HoldOutcome::NotLeased),
        }
    }

    async fn release_held(&self, _at: Timestamp) -> Result<u64, StoreError> {
        let mut rows = self.rows.lock().expect("outbox lock");
        let mut released = 0;
        for row in rows.values_mut() {
            if row.state == CallbackState::Held
                && self.merchants.is_enabled(&row.merchant_id) == Some(true)
            {
                row.state = CallbackState::Pending;
                released += 1;
            }
        }
        Ok(released)
    }

    /// Operations' callbacks only: this outbox holds no refunds.
    async fn retry(&self, id: uuid::Uuid, now: Timestamp) -> Result<RetryOutcome, StoreError> {
        let mut rows = self.rows.lock().expect("outbox lock");
        match rows.get_mut(&OperationId::from_uuid(id)) {
            Some(row) if row.state == CallbackState::Failed => {
                row.state = CallbackState::Pending;
                row.failures_in_run = 0;
                row.next_at = now;
                Ok(RetryOutcome::Queued)
            }
            Some(row) if row.state == CallbackState::Held => Ok(RetryOutcome::Held),
            _ => Ok(RetryOutcome::NotFailed),
        }
    }

    async fn list(
        &self,
        only: Option<CallbackState>,
        limit: u32,
    ) -> Result<Vec<CallbackStatus>, StoreError> {
        let rows = self.rows.lock().expect("outbox lock");
        let mut all: Vec<(usize, CallbackStatus)> = rows
            .iter()
            .filter(|(_, r)| only.is_none_or(|state| r.state == state))
            .map(|(id, r)| {
                let status = CallbackStatus {
                    operation_id: *id,
                    refund_id: None,
                    dispute: None,
                    merchant_id: r.merchant_id.clone(),
                    url: r.url.clone(),
                    state: r.state,
                    attempts: r.attempts_made,
                    next_attempt_at: matches!(
                        r.state,
                        CallbackState::Pending | CallbackState::Held
                    )
                    .then_some(r.next_at),
                    last_error: r.last_error.clone(),
                };
                (r.seq, status)
            })
            .collect();
        all.sort_by_key(|(seq, _)| std::cmp::Reverse(*seq));
        Ok(all
            .into_iter()
            .take(limit as usize)
            .map(|(_, s)| s)
            .collect())
    }
}
