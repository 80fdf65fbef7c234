//! The benchmark's callback receiver: answers every POST with 200 at once and counts the
//! distinct `operationId`s it has seen; when it has `--expect` of them it prints one JSON line
//! with the timings and exits; stopped by SIGTERM or SIGINT first, it prints what it saw and exits.
//!
//! ```sh
//! cargo run --release -p app --example bench_receiver -- --bind 127.0.0.1:18099 --expect 10000
//! ```
//!
//! One actix worker: delivering callbacks is the gateway's work, and the receiver must not
//! take the machine's second core from it.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use actix_web::{web, App, HttpResponse, HttpServer};
use tokio::sync::Notify;

#[derive(Default)]
struct Seen {
    ids: HashSet<String>,
    posts: u64,
    first: Option<Instant>,
    first_unix_ms: u128,
    last: Option<Instant>,
    last_unix_ms: u128,
}

struct Receiver {
    expect: usize,
    seen: Mutex<Seen>,
    done: Notify,
}

fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// The `operationId` of a callback body, found without a full parse.
fn operation_id(body: &[u8]) -> Option<String> {
    const KEY: &[u8] = b"\"operationId\":\"";
    let start = body.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    let len = body[start..].iter().position(|&b| b == b'"')?;
    String::from_utf8(body[start..start + len].to_vec()).ok()
}

async fn callback(state: web::Data<Arc<Receiver>>, body: web::Bytes) -> HttpResponse {
    let id = operation_id(&body);
    let mut seen = state.seen.lock().unwrap_or_else(|p| p.into_inner());
    seen.posts += 1;
    if seen.first.is_none() {
        seen.first = Some(Instant::now());
        seen.first_unix_ms = unix_ms();
    }
    if let Some(id) = id {
        if seen.ids.insert(id) && seen.ids.len() == state.expect {
            seen.last = Some(Instant::now());
            seen.last_unix_ms = unix_ms();
            state.done.notify_one();
        }
    }
    HttpResponse::Ok().finish()
}

fn arg(name: &str) -> Option<String> {
    let mut args = std::env::args();
    while let Some(a) = args.next() {
        if a == name {
            return args.next();
        }
    }
    None
}

#[actix_web::main]
async fn main() -> anyhow::Result<()> {
    let bind = arg("--bind").unwrap_or_else(|| "127.0.0.1:18099".into());
    let expect: usize = arg("--expect").unwrap_or_else(|| "10000".into()).parse()?;
    let limit: u64 = arg("--timeout-secs")
        .unwrap_or_else(|| "300".into())
        .parse()?;
    let state = Arc::new(Receiver {
        expect,
        seen: Mutex::new(Seen::default()),
        done: Notify::new(),
    });
    let data = web::Data::new(state.clone());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .default_service(web::to(callback))
    })
    .workers(1)
    .backlog(1024)
    .bind(&bind)?
    .run();
    let handle = server.handle();
    let mut serving = tokio::spawn(server);
    eprintln!("bench_receiver listening on {bind}, expecting {expect} callbacks");
    let (finished, stopped) = tokio::select! {
        done = tokio::time::timeout(Duration::from_secs(limit), state.done.notified()) => {
            (done.is_ok(), false)
        }
        // SIGTERM or SIGINT (actix stops the server on either): report what was seen, and exit.
        _ = &mut serving => (false, true),
    };
    // The guard lives in a block so clippy sees it released before the await below.
    {
        let seen = state.seen.lock().unwrap_or_else(|p| p.into_inner());
        let span = match (seen.first, seen.last) {
            (Some(first), Some(last)) => last.duration_since(first).as_secs_f64(),
            _ => 0.0,
        };
        let rate = if span > 0.0 {
            seen.ids.len() as f64 / span
        } else {
            0.0
        };
        println!(
            "{{\"finished\":{finished},\"unique\":{},\"posts\":{},\"first_unix_ms\":{},\"last_unix_ms\":{},\"first_to_last_s\":{span:.3},\"rate\":{rate:.1}}}",
            seen.ids.len(),
            seen.posts,
            seen.first_unix_ms,
            seen.last_unix_ms,
        );
    }
    // Graceful: the response to the last callback is sent before the server stops, or the
    // gateway would see its delivery fail and count it undelivered.
    if !stopped {
        handle.stop(true).await;
        let _ = serving.await;
    }
    Ok(())
}
