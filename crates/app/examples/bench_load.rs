//! The benchmark's open-loop load generator: sends pre-signed POSTs at a fixed rate and
//! prints one JSON line of latencies.
//!
//! ```sh
//! cargo build --release -p app --example bench_load
//! target/release/examples/bench_load --url http://127.0.0.1:18080 --path /api/v1/deposits \
//!     --file deposits.tsv --rate 5000 --duration 15 --connections 64
//! BENCH_SIM_KEY=... target/release/examples/bench_load --mode acquirer \
//!     --url http://127.0.0.1:18101 --path /v1/payments --file sim.tsv --rate 2000 --duration 15
//! ```
//!
//! **Why open loop.** wrk (closed loop) sends a connection's next request only when the
//! previous one is answered: when the server stalls, the load generator stalls with it, the
//! requests that would have arrived meanwhile are never sent, and the stall shows as one
//! slow request instead of hundreds ("coordinated omission"). Here request `i` is *scheduled*
//! at `t0 + i / rate` whatever happened before, and its latency runs from that scheduled
//! time to the end of its response, as wrk2 and `pgbench --rate` measure it: time spent
//! waiting in the generator for a free connection (all `--connections` busy) counts, as it
//! would for a real client. That is the latency a merchant sees at a given arrival rate,
//! and the one to compare across paths (gateway against bare PostgreSQL, gateway against
//! the acquirer simulator) at the same rate.
//!
//! **Input.** The tab-separated file `bench/gen_requests.py` writes, one request a line,
//! each sent exactly once (the run ends early, saying `"exhausted":true`, when the file has
//! fewer than `rate x duration` lines):
//!
//! * `--mode gateway` (default): `MERCHANT_ID <TAB> X-SIGNATURE <TAB> BODY`, sent with the
//!   `merchant-id` and `x-signature` headers, as `bench/signed.lua` sends them;
//! * `--mode acquirer`: `IDEMPOTENCY_KEY <TAB> - <TAB> BODY`, sent to acquirer-sim's
//!   `POST /v1/payments` with `Idempotency-Key` and `Authorization: Bearer $KEY`, the key read
//!   from the environment variable `--api-key-env` (default `BENCH_SIM_KEY`), as the
//!   gateway's acquirer client sends them.
//!
//! **Output.** One JSON line: offered and achieved rate, count, errors (a status outside
//! 200 to 299, or a connection error), p50, p90, p99, p99.9 and max in milliseconds, and the
//! largest lateness of a send behind its schedule (how far the generator itself fell
//! behind, waits for a connection included). With `--timeline FILE`, also one line per
//! 100 ms of schedule (`offset_ms count p50_ms max_ms`), to see *when* the tail happened:
//! a few stalls show as a few slow windows, a general slowness as a raised line. The
//! warm-up's windows come first, at negative offsets, so a run shows whether its warm-up
//! outlasted what the server had to warm.
//!
//! Requests are released by a dedicated OS thread that sleeps until each one's scheduled
//! time (tokio's timer has a 1 ms granularity; `thread::sleep` is far finer), then handed to
//! a tokio runtime of `--threads` workers. Before the clock starts, `--connections`
//! concurrent `GET --warm-path` requests open the connections, so no measured request pays
//! for a TCP handshake. With `--warm-up SECS`, the first `rate x SECS` lines are sent on the
//! same schedule before the measured ones and only their errors count: what a server warms
//! once after idling (threads it lets go, plans a fresh `ANALYZE` dropped, cold caches) is
//! then not charged to the steady rate being measured.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::{Parser, ValueEnum};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use tokio::sync::Semaphore;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Merchant requests to the gateway: `merchant-id` and `x-signature` headers.
    Gateway,
    /// Creations sent to acquirer-sim directly: `Idempotency-Key` and a bearer API key.
    Acquirer,
}

/// Open-loop, fixed-rate POSTs of pre-signed requests; one JSON line of latencies.
#[derive(Debug, Parser)]
struct Args {
    /// Base URL, e.g. http://127.0.0.1:18080.
    #[arg(long)]
    url: String,
    /// Path every request is POSTed to, e.g. /api/v1/deposits.
    #[arg(long)]
    path: String,
    /// The TSV of requests (bench/gen_requests.py); each line is sent once.
    #[arg(long)]
    file: String,
    /// Requests per second offered.
    #[arg(long)]
    rate: f64,
    /// Seconds of sending (the run also waits for the last answers).
    #[arg(long, default_value_t = 15.0)]
    duration: f64,
    /// At most this many requests in flight (and connections open).
    #[arg(long, default_value_t = 64)]
    connections: usize,
    /// How lines become requests.
    #[arg(long, value_enum, default_value_t = Mode::Gateway)]
    mode: Mode,
    /// `--mode acquirer`: the environment variable holding the bearer API key.
    #[arg(long, default_value = "BENCH_SIM_KEY")]
    api_key_env: String,
    /// Path GET once per connection before the clock starts (any answer will do).
    #[arg(long, default_value = "/")]
    warm_path: String,
    /// Worker threads of the runtime that sends and receives.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Seconds one request may take before it counts as an error.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// Also write one line per 100 ms of schedule: offset_ms, count, p50_ms, max_ms.
    #[arg(long)]
    timeline: Option<String>,
    /// Seconds sent at the same rate before the measured ones, whose latencies are not kept
    /// (their errors are).
    #[arg(long, default_value_t = 0.0)]
    warm_up: f64,
}

/// One line of the input, ready to send.
struct Request {
    headers: HeaderMap,
    body: String,
}

fn parse_lines(text: &str, mode: Mode, api_key: Option<&str>) -> anyhow::Result<Vec<Request>> {
    let json = HeaderValue::from_static("application/json");
    let bearer = api_key
        .map(|key| HeaderValue::try_from(format!("Bearer {key}")))
        .transpose()
        .context("the API key is not a header value")?;
    let merchant = HeaderName::from_static("merchant-id");
    let signature = HeaderName::from_static("x-signature");
    let idempotency = HeaderName::from_static("idempotency-key");
    let mut requests = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty()) {
        let mut fields = line.splitn(3, '\t');
        let (Some(first), Some(second), Some(body)) = (fields.next(), fields.next(), fields.next())
        else {
            bail!("line {}: expected three tab-separated fields", n + 1);
        };
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, json.clone());
        let value = |text: &str| {
            HeaderValue::try_from(text).with_context(|| format!("line {}: bad header", n + 1))
        };
        match mode {
            Mode::Gateway => {
                headers.insert(merchant.clone(), value(first)?);
                headers.insert(signature.clone(), value(second)?);
            }
            Mode::Acquirer => {
                headers.insert(idempotency.clone(), value(first)?);
                if let Some(bearer) = &bearer {
                    headers.insert(AUTHORIZATION, bearer.clone());
                }
            }
        }
        requests.push(Request {
            headers,
            body: body.to_owned(),
        });
    }
    Ok(requests)
}

/// The value at percentile `p` (0 to 100) of sorted microseconds, in milliseconds.
fn percentile_ms(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64 / 1000.0
}

/// One line per 100 ms window of scheduled time: `offset_ms count p50_ms max_ms`, the
/// warm-up's windows (`warm`) at negative offsets before the measured ones.
fn timeline(warm: &[(u64, u64)], samples: &[(u64, u64)]) -> String {
    const WINDOW_US: i64 = 100_000;
    let mut windows: std::collections::BTreeMap<i64, Vec<u64>> = Default::default();
    let early = warm.iter().map(|&(before, us)| (-(before as i64), us));
    let measured = samples.iter().map(|&(offset, us)| (offset as i64, us));
    for (offset, us) in early.chain(measured) {
        windows
            .entry(offset.div_euclid(WINDOW_US))
            .or_default()
            .push(us);
    }
    let mut out = String::from("offset_ms count p50_ms max_ms\n");
    for (window, mut latencies) in windows {
        latencies.sort_unstable();
        out.push_str(&format!(
            "{} {} {:.2} {:.2}\n",
            window * WINDOW_US / 1000,
            latencies.len(),
            percentile_ms(&latencies, 50.0),
            percentile_ms(&latencies, 100.0),
        ));
    }
    out
}

/// What the responses left behind.
#[derive(Default)]
struct Tally {
    /// Successes only: (scheduled offset after `t0`, latency from the scheduled time), both
    /// in microseconds.
    latencies_us: Mutex<Vec<(u64, u64)>>,
    /// The warm-up's successes, for the timeline only: (how long before `t0` the request was
    /// scheduled, latency from the scheduled time), both in microseconds.
    warm_us: Mutex<Vec<(u64, u64)>>,
    errors: AtomicU64,
    /// The first error seen, for the log.
    first_error: Mutex<Option<String>>,
    /// When the last answer came, in microseconds after `t0`.
    last_done_us: AtomicU64,
}

impl Tally {
    fn error(&self, what: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut first = self
            .first_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        first.get_or_insert(what);
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if !(args.rate > 0.0 && args.duration > 0.0 && args.connections > 0) {
        bail!("--rate, --duration and --connections must be positive");
    }
    if args.warm_up.is_nan() || args.warm_up < 0.0 {
        bail!("--warm-up must not be negative");
    }
    let api_key = match args.mode {
        Mode::Acquirer => Some(
            std::env::var(&args.api_key_env)
                .with_context(|| format!("--mode acquirer needs ${}", args.api_key_env))?,
        ),
        Mode::Gateway => None,
    };
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read {}", args.file))?;
    let mut requests = parse_lines(&text, args.mode, api_key.as_deref())?;
    drop(text);
    let warming = (args.rate * args.warm_up).round() as usize;
    let wanted = warming + (args.rate * args.duration).round() as usize;
    let exhausted = requests.len() < wanted;
    requests.truncate(wanted);
    let count = requests.len().saturating_sub(warming);
    if count == 0 {
        bail!("no requests in {} after the warm-up's", args.file);
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()?;
    let client = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(args.connections)
        // Below the 5 s for which acquirer-sim (actix-web's default) keeps an idle
        // connection (the gateway keeps its own for 75 s): a connection the server closes
        // just as a request goes out on it fails that request ("connection closed before
        // message completed"), which happened once in about 100,000 requests while the pool
        // held, unused, the connections opened below. Dropped first by the pool, an idle
        // connection is opened again when needed.
        .pool_idle_timeout(Duration::from_secs(4))
        .tcp_nodelay(true)
        .timeout(Duration::from_secs_f64(args.timeout))
        .build()?;
    let url = format!("{}{}", args.url.trim_end_matches('/'), args.path);

    // Open the connections: all at once, so the pool starts with `connections` of them.
    runtime.block_on(async {
        let warm = format!("{}{}", args.url.trim_end_matches('/'), args.warm_path);
        let gets = (0..args.connections).map(|_| client.get(&warm).send());
        for answer in futures::future::join_all(gets).await {
            answer.with_context(|| format!("warm-up GET {warm} failed"))?;
        }
        anyhow::Ok(())
    })?;

    let tally = Arc::new(Tally {
        latencies_us: Mutex::new(Vec::with_capacity(count)),
        ..Tally::default()
    });
    let slots = Arc::new(Semaphore::new(args.connections));
    let interval = 1.0 / args.rate;
    let mut max_lag = Duration::ZERO;
    let start = Instant::now() + Duration::from_millis(20);
    // The measured schedule's start: the warm-up's requests are due before it.
    let t0 = start + Duration::from_secs_f64(warming as f64 * interval);
    for (i, request) in requests.into_iter().enumerate() {
        let due = start + Duration::from_secs_f64(i as f64 * interval);
        let measured = i >= warming;
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        // All connections busy: the request waits here, and the wait is part of its latency.
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => runtime.block_on(slots.clone().acquire_owned())?,
        };
        if measured {
            max_lag = max_lag.max(Instant::now().saturating_duration_since(due));
        }
        let (client, url, tally) = (client.clone(), url.clone(), tally.clone());
        runtime.spawn(async move {
            let answer = client
                .post(&url)
                .headers(request.headers)
                .body(request.body)
                .send()
                .await;
            let outcome = match answer {
                Ok(response) => {
                    let status = response.status();
                    // The whole body, as a client would read it.
                    match response.bytes().await {
                        Ok(_) if status.is_success() => Ok(()),
                        Ok(body) => Err(format!(
                            "status {status}: {}",
                            String::from_utf8_lossy(&body[..body.len().min(200)])
                        )),
                        Err(e) => Err(format!("reading the answer: {:#}", anyhow::Error::new(e))),
                    }
                }
                // The whole chain: reqwest's own message names only the URL.
                Err(e) => Err(format!(
                    "sending, {:.3} s after the measured start: {:#}",
                    Instant::now().saturating_duration_since(t0).as_secs_f64(),
                    anyhow::Error::new(e)
                )),
            };
            let done = Instant::now();
            match outcome {
                Ok(()) => {
                    let us = done.saturating_duration_since(due).as_micros() as u64;
                    let (samples, offset) = if measured {
                        (&tally.latencies_us, due.saturating_duration_since(t0))
                    } else {
                        (&tally.warm_us, t0.saturating_duration_since(due))
                    };
                    samples
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((offset.as_micros() as u64, us));
                }
                Err(what) => tally.error(what),
            }
            if measured {
                let since = done.saturating_duration_since(t0).as_micros() as u64;
                tally.last_done_us.fetch_max(since, Ordering::Relaxed);
            }
            drop(slot);
        });
    }
    // Every slot back: every request answered.
    let all = u32::try_from(args.connections)?;
    runtime.block_on(slots.acquire_many(all))?.forget();

    let samples = std::mem::take(
        &mut *tally
            .latencies_us
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    );
    if let Some(path) = &args.timeline {
        let warm =
            std::mem::take(&mut *tally.warm_us.lock().unwrap_or_else(PoisonError::into_inner));
        std::fs::write(path, timeline(&warm, &samples))
            .with_context(|| format!("cannot write {path}"))?;
    }
    let mut latencies: Vec<u64> = samples.iter().map(|&(_, us)| us).collect();
    latencies.sort_unstable();
    let errors = tally.errors.load(Ordering::Relaxed);
    let span = tally.last_done_us.load(Ordering::Relaxed) as f64 / 1e6;
    let first_error = tally
        .first_error
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(what) = &first_error {
        eprintln!("bench_load: {errors} errors; the first: {what}");
    }
    let line = serde_json::json!({
        "offered_rate": args.rate,
        "achieved_rate": if span > 0.0 { count as f64 / span } else { 0.0 },
        "count": count,
        "ok": latencies.len(),
        "errors": errors,
        "connections": args.connections,
        "duration_s": span,
        "exhausted": exhausted,
        "p50_ms": percentile_ms(&latencies, 50.0),
        "p90_ms": percentile_ms(&latencies, 90.0),
        "p99_ms": percentile_ms(&latencies, 99.0),
        "p999_ms": percentile_ms(&latencies, 99.9),
        "max_ms": latencies.last().map_or(0.0, |&us| us as f64 / 1000.0),
        "max_send_lag_ms": max_lag.as_secs_f64() * 1000.0,
    });
    println!("{line}");
    Ok(())
}
