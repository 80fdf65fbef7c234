//! A merchant's callback endpoint: a real HTTP server on 127.0.0.1:0 that records every
//! request and answers as the test says, path by path.
//!
//! Every path answers 200 unless told otherwise. In the order a request meets them:
//! [`hold`](CallbackReceiver::hold) keeps it unanswered (up to 90 s),
//! [`set_delay`](CallbackReceiver::set_delay) makes it wait, then the answer is a 302 for a
//! [`redirect`](CallbackReceiver::redirect) path, a 500 while
//! [`fail_next`](CallbackReceiver::fail_next) has some left or for the first callback of an
//! operation on a [`fail_first_on`](CallbackReceiver::fail_first_on) path, else the status
//! [`set_status`](CallbackReceiver::set_status) gave the path.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use actix_web::dev::ServerHandle;
use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

use crate::serve_every_request;

/// How long a held request waits at most before it is answered anyway.
const HOLD_LIMIT: Duration = Duration::from_secs(90);

/// One request as received, with the status it was answered (`None` while unanswered, or if
/// the sender went away first).
#[derive(Debug, Clone)]
pub struct Captured {
    pub path: String,
    /// Lower-case header names.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
    pub answered: Option<u16>,
    pub at: Instant,
    /// `data.operationId` of the body (empty if absent).
    pub operation_id: String,
}

impl Captured {
    /// The header's value (empty if absent).
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map(String::as_str).unwrap_or("")
    }

    /// The body as JSON (`Null` if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// Whether the callback is signed with `secret` every way a merchant checks it:
    /// `x-signature` over the body, `x-signature-v2` over `"{x-callback-timestamp}.{body}"`
    /// with a timestamp within 300 s of now, and one of the Standard Webhooks signatures
    /// ([`Captured::standard_signed_with`]). `Err` says what does not fit.
    pub fn signed_with(&self, secret: &str) -> Result<(), String> {
        let mac = |message: &[u8]| {
            let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
                .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
            mac.update(message);
            hex::encode(mac.finalize().into_bytes())
        };
        if !self
            .header("x-signature")
            .eq_ignore_ascii_case(&mac(&self.body))
        {
            return Err(format!("x-signature does not fit: {:?}", self.headers));
        }
        let stamp = self.header("x-callback-timestamp");
        let sent: i64 = stamp
            .parse()
            .map_err(|_| format!("x-callback-timestamp {stamp:?} is not Unix seconds"))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        if (now - sent).abs() > 300 {
            return Err(format!(
                "x-callback-timestamp {sent} is {}s from now",
                now - sent
            ));
        }
        let mut message = format!("{stamp}.").into_bytes();
        message.extend_from_slice(&self.body);
        if !self
            .header("x-signature-v2")
            .eq_ignore_ascii_case(&mac(&message))
        {
            return Err(format!("x-signature-v2 does not fit: {:?}", self.headers));
        }
        self.standard_signed_with(secret)
    }

    /// Whether one of the Standard Webhooks signatures (`webhook-signature`, over
    /// `"{webhook-id}.{webhook-timestamp}.{body}"`, `webhook-timestamp` equal to
    /// `x-callback-timestamp`) is `secret`'s, as the specification's libraries check it.
    pub fn standard_signed_with(&self, secret: &str) -> Result<(), String> {
        let (id, stamp) = (self.header("webhook-id"), self.header("webhook-timestamp"));
        if id.is_empty() || stamp != self.header("x-callback-timestamp") {
            return Err(format!(
                "webhook-id or webhook-timestamp does not fit: {:?}",
                self.headers
            ));
        }
        let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(format!("{id}.{stamp}.").as_bytes());
        mac.update(&self.body);
        let expected = format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()));
        if !self.standard_signatures().contains(&expected.as_str()) {
            return Err(format!(
                "webhook-signature does not fit: {:?}",
                self.headers
            ));
        }
        Ok(())
    }

    /// The `v1,...` signatures of the `webhook-signature` header (one per live secret).
    pub fn standard_signatures(&self) -> Vec<&str> {
        self.header("webhook-signature")
            .split(' ')
            .filter(|s| !s.is_empty())
            .collect()
    }

    /// The `x-callback-attempt` header as a number (0 if absent).
    pub fn attempt(&self) -> u32 {
        self.header("x-callback-attempt").parse().unwrap_or(0)
    }
}

#[derive(Default)]
struct State {
    captured: Mutex<Vec<Captured>>,
    /// Status answered per path; 200 for a path not listed.
    statuses: Mutex<HashMap<String, u16>>,
    /// How many more requests each path answers 500.
    fail_next: Mutex<HashMap<String, u32>>,
    /// Paths that answer 500 to the first callback of each operation.
    fail_first: Mutex<HashSet<String>>,
    /// How long each path waits before it answers.
    delays: Mutex<HashMap<String, Duration>>,
    /// Paths that answer 302 to the location given.
    redirects: Mutex<HashMap<String, String>>,
    hold: AtomicBool,
}

/// The receiver; stopped when dropped.
pub struct CallbackReceiver {
    pub port: u16,
    state: Arc<State>,
    handle: ServerHandle,
}

impl CallbackReceiver {
    /// Starts a receiver with two worker threads (within a Tokio runtime) on 127.0.0.1:0.
    pub fn start() -> CallbackReceiver {
        CallbackReceiver::with_workers(2)
    }

    /// Starts a receiver with `workers` threads (within a Tokio runtime) on 127.0.0.1:0.
    pub fn with_workers(workers: usize) -> CallbackReceiver {
        let state = Arc::new(State::default());
        let (port, handle) = serve_every_request(state.clone(), workers, answer);
        CallbackReceiver {
            port,
            state,
            handle,
        }
    }

    /// `http://127.0.0.1:PORT{path}`
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Answer `status` on `path` from now on.
    pub fn set_status(&self, path: &str, status: u16) {
        lock(&self.state.statuses).insert(path.to_string(), status);
    }

    /// Answer 500 to the next `n` requests on `path`, then as usual.
    pub fn fail_next(&self, path: &str, n: u32) {
        lock(&self.state.fail_next).insert(path.to_string(), n);
    }

    /// Answer 500 to the first callback of each operation on `path`, then as usual.
    pub fn fail_first_on(&self, path: &str) {
        lock(&self.state.fail_first).insert(path.to_string());
    }

    /// Answer requests on `path` only after `delay` (a slow merchant, or one that never
    /// answers in time).
    pub fn set_delay(&self, path: &str, delay: Duration) {
        lock(&self.state.delays).insert(path.to_string(), delay);
    }

    /// Answer requests on `path` with a 302 to `location`.
    pub fn redirect(&self, path: &str, location: &str) {
        lock(&self.state.redirects).insert(path.to_string(), location.to_string());
    }

    /// While set, requests are recorded but not answered (up to 90 s).
    pub fn hold(&self, hold: bool) {
        self.state.hold.store(hold, Ordering::SeqCst);
    }

    /// Every request so far, in arrival order.
    pub fn captured(&self) -> Vec<Captured> {
        lock(&self.state.captured).clone()
    }

    /// Requests received on `path` (answered or not yet).
    pub fn hits(&self, path: &str) -> usize {
        lock(&self.state.captured)
            .iter()
            .filter(|c| c.path == path)
            .count()
    }

    /// Requests on `path` answered so far.
    pub fn finished(&self, path: &str) -> usize {
        lock(&self.state.captured)
            .iter()
            .filter(|c| c.path == path && c.answered.is_some())
            .count()
    }

    /// Callbacks received for `operation_id`, in arrival order.
    pub fn for_operation(&self, operation_id: &str) -> Vec<Captured> {
        self.captured()
            .into_iter()
            .filter(|c| c.operation_id == operation_id)
            .collect()
    }

    /// How many callbacks each operation received.
    pub fn per_operation(&self) -> HashMap<String, usize> {
        let mut counts = HashMap::new();
        for c in self.captured() {
            *counts.entry(c.operation_id).or_insert(0) += 1;
        }
        counts
    }

    /// Operations with at least one callback answered 2xx.
    pub fn delivered(&self) -> HashSet<String> {
        self.captured()
            .into_iter()
            .filter(|c| c.answered.is_some_and(|s| (200..300).contains(&s)))
            .map(|c| c.operation_id)
            .collect()
    }

    /// Polls until every id in `ids` had a callback answered 2xx; fails after `deadline`.
    pub async fn wait_delivered(&self, ids: &[String], deadline: Duration) {
        let what = format!("{} callbacks delivered", ids.len());
        wait_until(&what, deadline, || async {
            let delivered = self.delivered();
            let missing = ids.iter().filter(|id| !delivered.contains(*id)).count();
            (missing == 0, format!("{missing} of {} missing", ids.len()))
        })
        .await;
    }
}

impl Drop for CallbackReceiver {
    fn drop(&mut self) {
        self.hold(false);
        // The stop command is sent on the call; the future only waits for it.
        drop(self.handle.stop(false));
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

async fn answer(request: HttpRequest, body: Bytes, state: web::Data<Arc<State>>) -> HttpResponse {
    let path = request.path().to_string();
    let headers = request
        .headers()
        .iter()
        .map(|(k, v)| {
            let value = v.to_str().unwrap_or("<non-ascii>").to_string();
            (k.as_str().to_string(), value)
        })
        .collect();
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let operation = json["data"]["operationId"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let captured = Captured {
        path: path.clone(),
        headers,
        body: body.to_vec(),
        answered: None,
        at: Instant::now(),
        operation_id: operation.clone(),
    };
    let index = {
        let mut all = lock(&state.captured);
        all.push(captured);
        all.len() - 1
    };
    let held_since = Instant::now();
    while state.hold.load(Ordering::SeqCst) && held_since.elapsed() < HOLD_LIMIT {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let delay = lock(&state.delays).get(&path).copied();
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    let location = lock(&state.redirects).get(&path).cloned();
    let status = if location.is_some() {
        302
    } else if take_failure(&state, &path) || first_failing(&state, &path, &operation, index) {
        500
    } else {
        lock(&state.statuses).get(&path).copied().unwrap_or(200)
    };
    lock(&state.captured)[index].answered = Some(status);
    let mut response = HttpResponse::build(
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
    );
    if let Some(location) = location {
        response.insert_header(("location", location));
    }
    response.body("ok")
}

/// Whether `path` still has a 500 to answer from [`CallbackReceiver::fail_next`] (taking it).
fn take_failure(state: &State, path: &str) -> bool {
    lock(&state.fail_next)
        .get_mut(path)
        .and_then(|left| left.checked_sub(1).map(|rest| *left = rest))
        .is_some()
}

/// Whether `path` fails first callbacks and the request at `index` is the first one of
/// `operation`.
fn first_failing(state: &State, path: &str, operation: &str, index: usize) -> bool {
    lock(&state.fail_first).contains(path)
        && !lock(&state.captured)[..index]
            .iter()
            .any(|c| c.operation_id == operation)
}

/// Polls `check` (every 100 ms) until it says done; fails the test after `deadline`, with the
/// last progress text it gave.
pub async fn wait_until<F, Fut>(what: &str, deadline: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = (bool, String)>,
{
    let started = Instant::now();
    loop {
        let (done, progress) = check().await;
        if done {
            return;
        }
        assert!(
            started.elapsed() < deadline,
            "waited {deadline:?} for {what}: {progress}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
