//! `acquirer-sim` as a child process, killed on drop, and the gateway set up against it.
//!
//! The simulator is its own binary, built by `cargo test --workspace` next to `gateway`
//! (nothing in the workspace depends on it, so the tests find it beside the gateway binary).

use std::collections::HashMap;
use std::fmt::Display;
use std::hash::Hash;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::api::Api;
use super::cli::{command, run, GATEWAY};
use super::db::TestDb;
use super::process::collect_output;

pub const SIM_API_KEY: &str = "sim-api-key-0123456789";
pub const SIM_WEBHOOK_SECRET: &str = "sim-webhook-secret-0123456789";

/// The simulator's binary: beside the gateway's.
fn binary() -> PathBuf {
    let path = PathBuf::from(GATEWAY).with_file_name("acquirer-sim");
    assert!(
        path.exists(),
        "{} is missing: build it with `cargo build -p acquirer-sim` (cargo test --workspace does)",
        path.display()
    );
    path
}

/// A running `acquirer-sim`.
pub struct Sim {
    child: Child,
    /// `http://127.0.0.1:PORT` of the Acquirer API.
    pub api: String,
    /// `http://127.0.0.1:PORT` of the control API.
    pub control: String,
    log: Arc<Mutex<Vec<String>>>,
    client: reqwest::Client,
}

impl Sim {
    /// Starts the simulator on free ports with `args` (e.g. `--settle-ms 200`).
    pub fn start(args: &[&str]) -> Sim {
        let mut child = Command::new(binary())
            .args([
                "--bind",
                "127.0.0.1:0",
                "--control-bind",
                "127.0.0.1:0",
                "--api-key",
                SIM_API_KEY,
                "--webhook-secret",
                SIM_WEBHOOK_SECRET,
                "--notify-retry-ms",
                "300",
            ])
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start acquirer-sim");
        let (log, rx) = collect_output(&mut child, listening_line);
        let line: String = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| {
                panic!(
                    "acquirer-sim did not start: {:?}",
                    log.lock().map(|l| l.join("\n"))
                )
            });
        let address = |key: &str| {
            let at = line.find(key).expect("address in the listening line") + key.len();
            let text: String = line[at..]
                .chars()
                .take_while(|c| !c.is_whitespace())
                .collect();
            format!("http://{text}")
        };
        Sim {
            api: address("api="),
            control: address("control="),
            child,
            log,
            client: reqwest::Client::builder()
                .no_proxy()
                .build()
                .expect("client"),
        }
    }

    /// Applies a partial update of the faults; returns the whole set.
    pub async fn faults(&self, update: Value) -> Value {
        let answer = self
            .client
            .post(format!("{}/_sim/faults", self.control))
            .header("content-type", "application/json")
            .body(update.to_string())
            .send()
            .await
            .expect("the simulator's control answers");
        assert!(
            answer.status().is_success(),
            "faults {update}: {}",
            answer.status()
        );
        json_of(answer).await
    }

    /// `GET /_sim/stats`.
    pub async fn stats(&self) -> Value {
        let answer = self
            .client
            .get(format!("{}/_sim/stats", self.control))
            .send()
            .await
            .expect("the simulator's control answers");
        json_of(answer).await
    }

    /// Finishes a payin as its user would on the simulator's page; returns the HTTP status.
    pub async fn complete_payin(&self, reference: &str, decision: &str) -> u16 {
        self.client
            .post(format!("{}/_sim/payins/{reference}/complete", self.control))
            .header("content-type", "application/json")
            .body(json!({"decision": decision, "pan": "4242424242424242"}).to_string())
            .send()
            .await
            .expect("the simulator's control answers")
            .status()
            .as_u16()
    }

    /// Reads a payment by reference from the Acquirer API, as the gateway would.
    pub async fn payment(&self, reference: &str) -> (u16, Value) {
        let answer = self
            .client
            .get(format!("{}/v1/payments?reference={reference}", self.api))
            .bearer_auth(SIM_API_KEY)
            .send()
            .await
            .expect("the simulator answers");
        let status = answer.status().as_u16();
        (status, json_of(answer).await)
    }

    /// Everything the simulator logged so far.
    pub fn log_text(&self) -> String {
        self.log.lock().map(|l| l.join("\n")).unwrap_or_default()
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("--- acquirer-sim log:\n{}\n---", self.log_text());
        }
    }
}

/// An answer's body as JSON (`null` if it is not).
async fn json_of(answer: reqwest::Response) -> Value {
    let text = answer.text().await.unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// A simulator's `acquirer-sim listening ...` line.
fn listening_line(line: &str) -> Option<String> {
    line.starts_with("acquirer-sim listening")
        .then(|| line.to_string())
}

/// `gateway provider add` of the simulator as `name`, credentials from the environment,
/// with `extra` flags (e.g. `--timeout 1s`).
#[track_caller]
pub fn add_provider(db: &TestDb, name: &str, sim: &Sim, extra: &[&str]) {
    let out = run(command(db)
        .args([
            "provider", "add", "--name", name, "--kind", "acquirer", "--url", &sim.api,
        ])
        .args([
            "--api-key-env",
            "SIM_KEY",
            "--webhook-secret-env",
            "SIM_SECRET",
        ])
        .args(extra)
        .env("SIM_KEY", SIM_API_KEY)
        .env("SIM_SECRET", SIM_WEBHOOK_SECRET));
    out.expect_code(0);
}

/// Routes `method` in `direction` to `provider`, ahead of the sandbox (priority 500 unless
/// `extra` gives one); returns the route id.
#[track_caller]
pub fn route_to(db: &TestDb, provider: &str, direction: &str, method: &str, extra: &[&str]) -> i64 {
    let priority: &[&str] = if extra.contains(&"--priority") {
        &[]
    } else {
        &["--priority", "500"]
    };
    let out = run(command(db)
        .args(["route", "add", "--direction", direction, "--method", method])
        .args(["--provider", provider, "--json"])
        .args(priority)
        .args(extra));
    out.expect_code(0);
    out.json()["id"].as_i64().expect("a route id")
}

/// The PAN of payout `i`: distinct per payout, Luhn-valid, none of the bank's magic cards.
pub fn pan(i: usize) -> String {
    let body = format!("5{:014}", 1_000_000 + i);
    let check = (0..10)
        .find(|d| domain::luhn_valid(&format!("{body}{d}")))
        .unwrap_or(0);
    format!("{body}{check}")
}

/// From the simulator's `/_sim/stats`: asserts that no reference and no recipient was paid
/// more than once; how many payouts each recipient (by its `byRecipient` key) was paid.
pub fn paid_at_most_once(stats: &Value) -> HashMap<String, u64> {
    for (reference, counts) in stats["byReference"]
        .as_object()
        .cloned()
        .unwrap_or_default()
    {
        assert!(
            counts["payouts"].as_u64().unwrap_or(0) <= 1,
            "{reference} paid twice: {counts}"
        );
    }
    let paid: HashMap<String, u64> = stats["byRecipient"]
        .as_object()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v["payouts"].as_u64().unwrap_or(0)))
        .collect();
    assert!(
        paid.values().all(|n| *n <= 1),
        "a recipient paid twice: {paid:?}"
    );
    paid
}

/// The simulator's `byRecipient` key of a PAN or phone: its SHA-256 in hex.
pub fn recipient(pan_or_phone: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(pan_or_phone.as_bytes()))
}

/// Waits up to `deadline` until every operation is final, each `(key, read path)` read with
/// the merchant's API (`/api/v1/withdrawals/{id}`); their data by key. The failure message
/// shows what the bank says of the first five that are not final.
pub async fn wait_all_final<K: Clone + Eq + Hash + Display>(
    api: &Api,
    sim: &Sim,
    operations: &[(K, String)],
    deadline: Duration,
) -> HashMap<K, Value> {
    let until = Instant::now() + deadline;
    let mut finals = HashMap::new();
    loop {
        for (key, path) in operations {
            if finals.contains_key(key) {
                continue;
            }
            let answer = api.get(path).await;
            if answer.status == 200 && answer.body["data"]["status"] != 3 {
                finals.insert(key.clone(), answer.body["data"].clone());
            }
        }
        if finals.len() == operations.len() {
            return finals;
        }
        if Instant::now() >= until {
            let mut report = String::new();
            for (key, path) in operations
                .iter()
                .filter(|(k, _)| !finals.contains_key(k))
                .take(5)
            {
                let id = path.rsplit('/').next().unwrap_or_default();
                let (status, at_bank) = sim.payment(id).await;
                report.push_str(&format!("\n{key} {id}: the bank says {status} {at_bank}"));
            }
            panic!(
                "{} of {} operations not final within {deadline:?}:{report}",
                operations.len() - finals.len(),
                operations.len()
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
