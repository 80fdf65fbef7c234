//! A real HTTP receiver on 127.0.0.1:0 that captures callbacks and answers as told.
//!
//! Paths: `/ok` answers the current status (200 unless changed, 500 while `fail_next` > 0),
//! `/slow` answers 200 after `slow` time, `/hang` never answers in time, `/redirect` answers
//! 302 to `/ok`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer};

/// One request as received.
#[derive(Debug, Clone)]
pub struct Captured {
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Captured {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map(String::as_str).unwrap_or("")
    }
}

#[derive(Default)]
pub struct ReceiverState {
    captured: Mutex<Vec<Captured>>,
    status: AtomicU16,
    fail_next: AtomicU32,
    slow_ms: AtomicU32,
    pub slow_started: AtomicUsize,
    pub slow_finished: AtomicUsize,
    pub fast_answered: AtomicUsize,
}

pub struct TestReceiver {
    pub port: u16,
    pub state: Arc<ReceiverState>,
    handle: ServerHandle,
}

impl TestReceiver {
    /// Starts a receiver with `workers` threads.
    pub async fn start(workers: usize) -> Self {
        let state = Arc::new(ReceiverState::default());
        state.status.store(200, Ordering::SeqCst);
        state.slow_ms.store(2_000, Ordering::SeqCst);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("local addr").port();
        let shared = state.clone();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(web::Data::new(shared.clone()))
                .default_service(web::to(answer))
        })
        .workers(workers)
        .disable_signals()
        .shutdown_timeout(1)
        .listen(listener)
        .expect("listen")
        .run();
        let handle = server.handle();
        tokio::spawn(server);
        Self {
            port,
            state,
            handle,
        }
    }

    /// `http://127.0.0.1:PORT{path}`
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn set_status(&self, status: u16) {
        self.state.status.store(status, Ordering::SeqCst);
    }

    /// Answer 500 to the next `n` requests on `/ok`.
    pub fn fail_next(&self, n: u32) {
        self.state.fail_next.store(n, Ordering::SeqCst);
    }

    pub fn set_slow(&self, slow: Duration) {
        let ms = u32::try_from(slow.as_millis()).expect("a short delay");
        self.state.slow_ms.store(ms, Ordering::SeqCst);
    }

    pub fn captured(&self) -> Vec<Captured> {
        self.state.captured.lock().expect("receiver lock").clone()
    }

    /// Requests received on `path`.
    pub fn hits(&self, path: &str) -> usize {
        self.captured().iter().filter(|c| c.path == path).count()
    }
}

impl Drop for TestReceiver {
    fn drop(&mut self) {
        // The stop command is sent on the call; the returned future only waits for it.
        drop(self.handle.stop(false));
    }
}

async fn answer(
    request: HttpRequest,
    body: Bytes,
    state: web::Data<Arc<ReceiverState>>,
) -> HttpResponse {
    let path = request.path().to_string();
    let headers = request
        .headers()
        .iter()
        .map(|(k, v)| {
            let value = v.to_str().unwrap_or("<non-ascii>").to_string();
            (k.as_str().to_string(), value)
        })
        .collect();
    state
        .captured
        .lock()
        .expect("receiver lock")
        .push(Captured {
            path: path.clone(),
            headers,
            body: body.to_vec(),
        });
    match path.as_str() {
        "/slow" => {
            state.slow_started.fetch_add(1, Ordering::SeqCst);
            let ms = state.slow_ms.load(Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(u64::from(ms))).await;
            state.slow_finished.fetch_add(1, Ordering::SeqCst);
            HttpResponse::Ok().finish()
        }
        "/hang" => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            HttpResponse::Ok().finish()
        }
        "/redirect" => HttpResponse::Found()
            .insert_header(("location", "/ok"))
            .finish(),
        _ => {
            let failing = state
                .fail_next
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if failing {
                return HttpResponse::InternalServerError().body("try later");
            }
            state.fast_answered.fetch_add(1, Ordering::SeqCst);
            let status =
                StatusCode::from_u16(state.status.load(Ordering::SeqCst)).expect("a valid status");
            HttpResponse::build(status).body("thanks")
        }
    }
}
