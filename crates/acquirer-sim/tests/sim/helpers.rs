//! A running `acquirer-sim` binary on free ports, and a notification receiver.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmac::{Hmac, Mac};
use reqwest::StatusCode;
use serde_json::{json, Value};
use sha2::Sha256;

pub const API_KEY: &str = "test-key";
pub const WEBHOOK_SECRET: &str = "test-secret";

/// Generous: the machine is slow and shared.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// The simulator process; killed on drop.
pub struct TestSim {
    child: Child,
    pub api: String,
    pub control: String,
    pub client: reqwest::Client,
}

impl Drop for TestSim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl TestSim {
    /// Starts the binary with short settle and retry times, plus `extra` flags.
    pub async fn spawn(extra: &[&str]) -> TestSim {
        Self::spawn_with_env(extra, &[]).await
    }

    /// Like [`TestSim::spawn`], with `ACQUIRER_SIM_*` variables set as well.
    pub async fn spawn_with_env(extra: &[&str], env: &[(&str, &str)]) -> TestSim {
        let mut command = Command::new(env!("CARGO_BIN_EXE_acquirer-sim"));
        command
            .args(["--bind", "127.0.0.1:0", "--control-bind", "127.0.0.1:0"])
            .args(["--api-key", API_KEY, "--webhook-secret", WEBHOOK_SECRET])
            .args(defaults_unless_given(extra))
            .args(extra)
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().expect("the binary starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let line = tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            BufReader::new(stdout)
                .read_line(&mut line)
                .expect("reads stdout");
            line
        });
        let line = tokio::time::timeout(DEADLINE, line)
            .await
            .expect("the listening line in time")
            .expect("reader task");
        let field = |name: &str| {
            line.split_whitespace()
                .find_map(|part| part.strip_prefix(name))
                .unwrap_or_else(|| panic!("no {name} in {line:?}"))
                .to_owned()
        };
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(DEADLINE)
            .build()
            .expect("client");
        TestSim {
            api: format!("http://{}", field("api=")),
            control: format!("http://{}", field("control=")),
            child,
            client,
        }
    }

    /// Sends `request` and answers its status and JSON body (`null` when empty).
    pub async fn answer(request: reqwest::RequestBuilder) -> (StatusCode, Value) {
        let response = request.send().await.expect("the call is answered");
        let status = response.status();
        let text = response.text().await.expect("body");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).expect("JSON body")
        };
        (status, body)
    }

    /// `POST /v1/payments` with `key`.
    pub async fn create(&self, key: &str, body: &Value) -> (StatusCode, Value) {
        Self::answer(
            self.api_post("/v1/payments")
                .header("idempotency-key", key)
                .json_body(body),
        )
        .await
    }

    /// `POST /v1/payments` of `body` with its own reference as the key.
    pub async fn submit(&self, body: &Value) -> (StatusCode, Value) {
        let key = body["reference"].as_str().expect("a reference");
        self.create(key, body).await
    }

    /// `POST /v1/payments/{id}/cancel`.
    pub async fn cancel(&self, id: &str) -> (StatusCode, Value) {
        self.post(&format!("/v1/payments/{id}/cancel"), None, &json!({}))
            .await
    }

    /// `POST /_sim/payins/{reference}/complete` with `choice`.
    pub async fn complete(&self, reference: &str, choice: Value) -> (StatusCode, Value) {
        let path = format!("/_sim/payins/{reference}/complete");
        self.control_post(&path, &choice).await
    }

    /// Posts the payin page's form, `form` URL-encoded.
    pub async fn choose(&self, page: &str, form: &str) -> reqwest::Response {
        self.client
            .post(page)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form.to_owned())
            .send()
            .await
            .expect("posted")
    }

    /// The HTML of a payin page.
    pub async fn page_html(&self, page: &str) -> String {
        let response = self.client.get(page).send().await.expect("page");
        response.text().await.expect("html")
    }

    /// An authenticated POST to the API.
    pub fn api_post(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .post(format!("{}{path}", self.api))
            .bearer_auth(API_KEY)
    }

    /// An authenticated GET of the API.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        Self::answer(
            self.client
                .get(format!("{}{path}", self.api))
                .bearer_auth(API_KEY),
        )
        .await
    }

    /// An authenticated POST of `body` to the API.
    pub async fn post(&self, path: &str, key: Option<&str>, body: &Value) -> (StatusCode, Value) {
        let mut request = self.api_post(path).json_body(body);
        if let Some(key) = key {
            request = request.header("idempotency-key", key);
        }
        Self::answer(request).await
    }

    /// A POST to the control listener.
    pub async fn control_post(&self, path: &str, body: &Value) -> (StatusCode, Value) {
        Self::answer(
            self.client
                .post(format!("{}{path}", self.control))
                .json_body(body),
        )
        .await
    }

    /// Sets faults and returns the whole set.
    pub async fn faults(&self, patch: Value) -> Value {
        let (status, body) = self.control_post("/_sim/faults", &patch).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    /// `GET /_sim/stats`.
    pub async fn stats(&self) -> Value {
        Self::answer(self.client.get(format!("{}/_sim/stats", self.control)))
            .await
            .1
    }

    /// Polls a payment by reference until `done` holds for it.
    pub async fn wait_payment(&self, reference: &str, done: impl Fn(&Value) -> bool) -> Value {
        eventually(|| async {
            let (status, body) = self
                .get(&format!("/v1/payments?reference={reference}"))
                .await;
            (status == StatusCode::OK && done(&body)).then_some(body)
        })
        .await
    }
}

/// Short settle and retry times for tests, except those `extra` sets itself.
fn defaults_unless_given(extra: &[&str]) -> Vec<&'static str> {
    [
        ("--settle-ms", "300"),
        ("--notify-retry-ms", "200"),
        ("--seed", "1"),
    ]
    .into_iter()
    .filter(|(flag, _)| !extra.contains(flag))
    .flat_map(|(flag, value)| [flag, value])
    .collect()
}

/// Polls `probe` until it gives a value, panicking after [`DEADLINE`].
pub async fn eventually<T, F, Fut>(probe: F) -> T
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = std::time::Instant::now();
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "condition not met within {DEADLINE:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// An RFC 3339 time `seconds` from now (negative: in the past).
pub fn in_seconds(seconds: i64) -> String {
    (time::OffsetDateTime::now_utc() + time::Duration::seconds(seconds))
        .format(&time::format_description::well_known::Rfc3339)
        .expect("formats")
}

/// A payout creation body.
pub fn payout(reference: &str, amount: i64, to: Value, notify_url: &str) -> Value {
    json!({
        "reference": reference, "kind": "payout", "method": "card", "amount": amount,
        "currency": "RUB", "notifyUrl": notify_url, "notAfter": in_seconds(600), "payout": to,
    })
}

/// A payin creation body.
pub fn payin(reference: &str, method: &str, amount: i64, notify_url: &str) -> Value {
    json!({
        "reference": reference, "kind": "payin", "method": method, "amount": amount,
        "currency": "RUB", "returnUrl": "https://shop.example/return?op=1&x=%20y",
        "notifyUrl": notify_url, "notAfter": in_seconds(600), "expiresAt": in_seconds(900),
    })
}

/// A card payin of `amount`, notifying `notify_url`, confirmed through control; its id.
pub async fn paid_payin(sim: &TestSim, reference: &str, amount: i64, notify_url: &str) -> String {
    let (_, created) = sim
        .submit(&payin(reference, "card", amount, notify_url))
        .await;
    let (status, _) = sim
        .complete(reference, json!({"decision": "confirm"}))
        .await;
    assert_eq!(status, StatusCode::OK);
    created["id"].as_str().expect("id").to_owned()
}

/// The `x-acquirer-signature` the simulator must send with `raw`.
pub fn expected_signature(raw: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(WEBHOOK_SECRET.as_bytes()).expect("key");
    mac.update(raw);
    hex::encode(mac.finalize().into_bytes())
}

/// The payin page of a created payment.
pub fn page_of(created: &Value) -> String {
    let page = created["action"]["redirectUrl"].as_str();
    page.expect("redirectUrl").to_owned()
}

/// Asserts that a payment failed with `code`.
#[track_caller]
pub fn assert_failed(payment: &Value, code: &str) {
    assert_eq!(payment["status"], "failed", "{payment}");
    assert_eq!(payment["failureCode"], code, "{payment}");
}

/// A notification as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub signature: String,
    pub raw: Vec<u8>,
    pub body: Value,
}

/// A local HTTP server that records notifications and fails the first `fail_first`.
#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    received: Arc<Mutex<Vec<Received>>>,
    attempts: Arc<AtomicUsize>,
}

impl Receiver {
    /// Starts a receiver answering 500 to its first `fail_first` calls, then 200.
    pub async fn start(fail_first: usize) -> Receiver {
        use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
        let received = Arc::new(Mutex::new(Vec::new()));
        let attempts = Arc::new(AtomicUsize::new(0));
        let (r, a) = (received.clone(), attempts.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
        let addr = listener.local_addr().expect("addr");
        let server = HttpServer::new(move || {
            let (r, a) = (r.clone(), a.clone());
            App::new().default_service(web::to(move |request: HttpRequest, body: web::Bytes| {
                let (r, a) = (r.clone(), a.clone());
                async move {
                    if a.fetch_add(1, Ordering::SeqCst) < fail_first {
                        return HttpResponse::InternalServerError().finish();
                    }
                    let signature = request
                        .headers()
                        .get("x-acquirer-signature")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    let parsed = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    r.lock().expect("lock").push(Received {
                        signature,
                        raw: body.to_vec(),
                        body: parsed,
                    });
                    HttpResponse::Ok().finish()
                }
            }))
        })
        .workers(1)
        .disable_signals()
        .listen(listener)
        .expect("listens")
        .run();
        tokio::spawn(server);
        Receiver {
            url: format!("http://{addr}/notify"),
            received,
            attempts,
        }
    }

    /// Every notification accepted so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }

    /// Every notification accepted so far about `id`.
    pub fn received_for(&self, id: &str) -> Vec<Received> {
        let mut received = self.received();
        received.retain(|n| n.body["id"] == id);
        received
    }

    /// Every call, failed ones included.
    pub fn attempts(&self) -> usize {
        self.attempts.load(Ordering::SeqCst)
    }

    /// Waits until a notification for `id` with `status` arrived.
    pub async fn wait_for(&self, id: &str, status: &str) -> Received {
        eventually(|| async {
            self.received()
                .into_iter()
                .find(|n| n.body["id"] == id && n.body["status"] == status)
        })
        .await
    }
}

/// A JSON body without reqwest's `json` feature.
pub trait JsonBody {
    /// Sends `body` as `application/json`.
    fn json_body(self, body: &Value) -> Self;
}

impl JsonBody for reqwest::RequestBuilder {
    fn json_body(self, body: &Value) -> Self {
        self.header("content-type", "application/json")
            .body(body.to_string())
    }
}
