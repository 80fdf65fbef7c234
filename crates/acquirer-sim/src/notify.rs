//! Notifications: signed POSTs to `notifyUrl`, retried on a fixed schedule until a 2xx,
//! one outbox and one delivery task per payment or refund.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::{oneshot, Notify};
use tokio::time::Instant;

use crate::signature::sign;

const HOURLY_RETRIES: usize = 24;

/// Delays before each retry: 1 s, 5 s, 30 s, 2 min, 10 min, then hourly for 24 h.
pub const RETRY_SCHEDULE: [Duration; 5 + HOURLY_RETRIES] = {
    let mut schedule = [Duration::from_secs(3600); 5 + HOURLY_RETRIES];
    schedule[0] = Duration::from_secs(1);
    schedule[1] = Duration::from_secs(5);
    schedule[2] = Duration::from_secs(30);
    schedule[3] = Duration::from_secs(120);
    schedule[4] = Duration::from_secs(600);
    schedule
};

/// How long one delivery attempt may take.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// One notification to deliver.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The payment's or refund's id: notifications of one object share an outbox.
    pub object: String,
    /// Where to POST.
    pub url: String,
    /// The exact bytes sent and signed.
    pub body: Vec<u8>,
    /// Whether it reports a final status (never held back by `reorder`).
    pub is_final: bool,
}

/// What the notification faults decided for one notification.
#[derive(Debug, Clone, Copy, Default)]
pub struct Policy {
    /// Never send it.
    pub drop: bool,
    /// Send it twice.
    pub duplicate: bool,
    /// Hold non-final notifications until a newer one comes, then deliver newest first.
    pub reorder: bool,
}

/// Delivers notifications in the background.
#[derive(Clone)]
pub struct Notifier {
    inner: Arc<Inner>,
}

struct Inner {
    client: reqwest::Client,
    secret: String,
    retries: Vec<Duration>,
    reorder_hold: Duration,
    runtime: Handle,
    outboxes: Mutex<HashMap<String, Outbox>>,
    next_seq: AtomicU64,
}

#[derive(Default)]
struct Outbox {
    items: Vec<Item>,
    reorder: bool,
    wake: Arc<Notify>,
}

struct Item {
    seq: u64,
    url: String,
    body: Arc<Vec<u8>>,
    attempts: usize,
    due: Instant,
    held: bool,
    first_attempt: Option<oneshot::Sender<()>>,
}

impl Notifier {
    /// A notifier signing with `secret`, retrying after `retries`, spawning on `runtime`.
    /// Under `reorder`, a non-final notification waits at most `reorder_hold` for a newer one.
    pub fn new(
        secret: String,
        retries: Vec<Duration>,
        reorder_hold: Duration,
        runtime: Handle,
    ) -> Self {
        let client = reqwest::Client::builder()
            .timeout(ATTEMPT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self {
            inner: Arc::new(Inner {
                client,
                secret,
                retries,
                reorder_hold,
                runtime,
                outboxes: Mutex::new(HashMap::new()),
                next_seq: AtomicU64::new(0),
            }),
        }
    }

    /// Queues `notification`; the receiver fires once its first attempt is over
    /// (or at once when it is dropped).
    pub fn send(&self, notification: Notification, policy: Policy) -> oneshot::Receiver<()> {
        let (done, first_attempt) = oneshot::channel();
        if policy.drop {
            tracing::info!(object.id = %notification.object, "notification dropped (fault)");
            return first_attempt;
        }
        let now = Instant::now();
        let held = policy.reorder && !notification.is_final;
        let body = Arc::new(notification.body);
        let mut outboxes = self.inner.lock();
        let spawn = !outboxes.contains_key(&notification.object);
        let outbox = outboxes.entry(notification.object.clone()).or_default();
        // A newer notification releases the ones held back for reordering.
        for item in outbox.items.iter_mut().filter(|item| item.held) {
            item.held = false;
            item.due = now;
        }
        outbox.reorder = policy.reorder;
        let copies = if policy.duplicate { 2 } else { 1 };
        let mut done = Some(done);
        for _ in 0..copies {
            outbox.items.push(Item {
                seq: self.inner.next_seq.fetch_add(1, Ordering::Relaxed),
                url: notification.url.clone(),
                body: body.clone(),
                attempts: 0,
                due: if held {
                    now + self.inner.reorder_hold
                } else {
                    now
                },
                held,
                first_attempt: done.take(),
            });
        }
        outbox.wake.notify_one();
        drop(outboxes);
        if spawn {
            let inner = self.inner.clone();
            self.inner
                .runtime
                .spawn(deliver(inner, notification.object));
        }
        first_attempt
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Outbox>> {
        self.outboxes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

enum Next {
    Send {
        seq: u64,
        url: String,
        body: Arc<Vec<u8>>,
    },
    Wait {
        until: Instant,
        wake: Arc<Notify>,
    },
    Done,
}

fn next(inner: &Inner, object: &str) -> Next {
    let mut outboxes = inner.lock();
    let Some(outbox) = outboxes.get_mut(object) else {
        return Next::Done;
    };
    if outbox.items.is_empty() {
        outboxes.remove(object);
        return Next::Done;
    }
    let now = Instant::now();
    let due = outbox.items.iter_mut().filter(|item| item.due <= now);
    let pick = if outbox.reorder {
        due.max_by_key(|item| item.seq)
    } else {
        due.min_by_key(|item| item.seq)
    };
    match pick {
        Some(item) => {
            // Once sent, a held item is an ordinary one waiting for its retries.
            item.held = false;
            Next::Send {
                seq: item.seq,
                url: item.url.clone(),
                body: item.body.clone(),
            }
        }
        None => Next::Wait {
            until: outbox
                .items
                .iter()
                .map(|item| item.due)
                .min()
                .unwrap_or(now),
            wake: outbox.wake.clone(),
        },
    }
}

/// Records an attempt's result: delivered or out of retries removes the item.
fn settle(inner: &Inner, object: &str, seq: u64, delivered: bool) {
    let mut outboxes = inner.lock();
    let Some(outbox) = outboxes.get_mut(object) else {
        return;
    };
    let Some(index) = outbox.items.iter().position(|item| item.seq == seq) else {
        return;
    };
    let item = &mut outbox.items[index];
    if let Some(done) = item.first_attempt.take() {
        let _ = done.send(());
    }
    let retry = inner.retries.get(item.attempts).copied();
    item.attempts += 1;
    match (delivered, retry) {
        (false, Some(delay)) => item.due = Instant::now() + delay,
        (true, _) => {
            outbox.items.remove(index);
        }
        (false, None) => {
            tracing::warn!(object.id = %object, "notification given up after every retry");
            outbox.items.remove(index);
        }
    }
}

async fn deliver(inner: Arc<Inner>, object: String) {
    loop {
        match next(&inner, &object) {
            Next::Done => return,
            Next::Wait { until, wake } => {
                tokio::select! {
                    () = tokio::time::sleep_until(until) => {}
                    () = wake.notified() => {}
                }
            }
            Next::Send { seq, url, body } => {
                let delivered = post(&inner, &url, &body).await;
                tracing::debug!(object.id = %object, delivered, "notification attempt");
                settle(&inner, &object, seq, delivered);
            }
        }
    }
}

async fn post(inner: &Inner, url: &str, body: &[u8]) -> bool {
    let answer = inner
        .client
        .post(url)
        .header("content-type", "application/json")
        .header("x-acquirer-signature", sign(&inner.secret, body))
        .body(body.to_vec())
        .send()
        .await;
    match answer {
        Ok(response) => response.status().is_success(),
        Err(error) => {
            tracing::debug!(error = %error, "notification attempt failed");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_is_the_contract_s() {
        let secs: Vec<u64> = RETRY_SCHEDULE.iter().map(Duration::as_secs).collect();
        assert_eq!(&secs[..5], &[1, 5, 30, 120, 600]);
        assert_eq!(secs.len(), 5 + 24);
        assert!(secs[5..].iter().all(|&s| s == 3600));
    }
}
