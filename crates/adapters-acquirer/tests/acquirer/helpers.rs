//! A fake acquirer that records requests and answers as the test says, raw servers that
//! misbehave, and the providers and orders the tests send.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use adapters_acquirer::AcquirerClient;
use domain::acquirer::{AcquirerPayment, CallResult, PaymentOrder};
use domain::ports::Acquirer;
use domain::provider::{AcquirerProvider, Credentials, ProviderName, ProviderUrl};
use domain::{
    Amount, Currency, Direction, OperationId, PaymentMethod, Timestamp, WithdrawalRequisites,
};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const API_KEY: &str = "key-3f9a7c1e";
pub const PAN: &str = "4242424242424242";
pub const PHONE: &str = "+79001234567";
pub const HOLDER: &str = "IVAN IVANOV";
pub const NAME: &str = "bank-a";

/// A provider at `base` (e.g. `http://127.0.0.1:PORT`) with a call timeout of `timeout`.
pub fn provider_at(base: &str, timeout: Duration) -> AcquirerProvider {
    AcquirerProvider {
        name: ProviderName::parse(NAME).expect("name"),
        protocol: domain::provider::ProtocolName::from_stored("acquirer".into()),
        url: ProviderUrl::parse(base, true).expect("url"),
        credentials: Credentials::new(API_KEY, "whsec-5b2d").expect("credentials"),
        timeout,
        allow_insecure: false,
        enabled: true,
    }
}

/// A plain-http provider on 127.0.0.1:`port` with a one-second timeout.
pub fn provider_on(port: u16) -> AcquirerProvider {
    provider_at(&format!("http://127.0.0.1:{port}"), Duration::from_secs(1))
}

fn order(direction: Direction, method: PaymentMethod) -> PaymentOrder {
    PaymentOrder {
        reference: OperationId::from_uuid(uuid::Uuid::new_v4()),
        direction,
        method,
        amount: Amount::from_minor(10_000).expect("amount"),
        currency: Currency::RUB,
        notify_url: "https://gw.example.com/providers/bank-a/notifications".into(),
        not_after: Timestamp::from_millis(1_795_255_260_000),
        return_url: Some("https://gw.example.com/pay/x/return".into()),
        expires_at: Some(Timestamp::from_millis(1_795_256_100_000)),
        payout: None,
    }
}

/// A card payin of 100.00 RUB with a return URL and an expiry.
pub fn payin() -> PaymentOrder {
    order(Direction::Deposit, PaymentMethod::Card)
}

/// A card payout of 100.00 RUB; its stray payin fields must not be sent.
pub fn card_payout() -> PaymentOrder {
    PaymentOrder {
        payout: Some(WithdrawalRequisites::card(Some(PAN), Some(HOLDER)).expect("requisites")),
        ..order(Direction::Withdrawal, PaymentMethod::Card)
    }
}

/// An SBP payout of 100.00 RUB.
pub fn sbp_payout() -> PaymentOrder {
    let requisites = WithdrawalRequisites::sbp(Some(PHONE), Some(HOLDER), Some("Bank A"));
    PaymentOrder {
        payout: Some(requisites.expect("requisites")),
        return_url: None,
        expires_at: None,
        ..order(Direction::Withdrawal, PaymentMethod::Sbp)
    }
}

/// The acquirer's answer for `order` with `status` (and nothing else).
pub fn payment(order: &PaymentOrder, status: &str) -> Value {
    let kind = match order.direction {
        Direction::Deposit => "payin",
        Direction::Withdrawal => "payout",
    };
    json!({"id": "acq_1", "reference": order.reference.to_string(), "kind": kind,
           "method": order.method.as_str(), "amount": order.amount.minor(),
           "currency": order.currency.as_str(), "status": status,
           "updatedAt": "2026-11-21T10:00:00Z"})
}

/// One request as the fake acquirer received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Lower-case names.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

/// What the fake acquirer answers.
#[derive(Clone)]
struct Reply {
    status: u16,
    body: String,
    location: Option<String>,
}

#[derive(Default)]
struct State {
    received: Mutex<Vec<Received>>,
    reply: Mutex<Option<Reply>>,
}

/// An HTTP server on 127.0.0.1:0 that records every request and gives every one the same
/// answer (500 until told otherwise); stopped when dropped.
pub struct FakeAcquirer {
    pub port: u16,
    state: Arc<State>,
    handle: ServerHandle,
}

impl FakeAcquirer {
    /// Starts within the test's Tokio runtime.
    pub fn start() -> Self {
        let state = Arc::new(State::default());
        let (port, handle) = testkit::serve_every_request(state.clone(), 1, answer);
        Self {
            port,
            state,
            handle,
        }
    }

    pub fn provider(&self) -> AcquirerProvider {
        provider_on(self.port)
    }

    /// What a new client's creation of `order` here comes to.
    pub async fn create(&self, order: &PaymentOrder) -> CallResult<AcquirerPayment> {
        AcquirerClient::new().create(&self.provider(), order).await
    }

    /// Answers `status` with `body` from now on.
    pub fn reply(&self, status: u16, body: impl ToString) {
        *lock(&self.state.reply) = Some(Reply {
            status,
            body: body.to_string(),
            location: None,
        });
    }

    /// Answers `status` with a `Location` header pointing back at this server.
    pub fn redirect(&self, status: u16, path: &str) {
        *lock(&self.state.reply) = Some(Reply {
            status,
            body: String::new(),
            location: Some(format!("http://127.0.0.1:{}{path}", self.port)),
        });
    }

    pub fn received(&self) -> Vec<Received> {
        lock(&self.state.received).clone()
    }

    /// The only request received.
    pub fn single(&self) -> Received {
        let received = self.received();
        assert_eq!(received.len(), 1, "{received:?}");
        received.into_iter().next().expect("one request")
    }
}

impl Drop for FakeAcquirer {
    fn drop(&mut self) {
        // The stop command is sent on the call; the future only waits for it.
        drop(self.handle.stop(false));
    }
}

async fn answer(request: HttpRequest, body: Bytes, state: web::Data<Arc<State>>) -> HttpResponse {
    let headers = request
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                v.to_str().unwrap_or("?").to_string(),
            )
        })
        .collect();
    lock(&state.received).push(Received {
        method: request.method().to_string(),
        target: request.uri().to_string(),
        headers,
        body: body.to_vec(),
    });
    let reply = lock(&state.reply).clone().unwrap_or(Reply {
        status: 500,
        body: String::new(),
        location: None,
    });
    let mut response = HttpResponse::build(StatusCode::from_u16(reply.status).expect("status"));
    if let Some(location) = reply.location {
        response.insert_header(("location", location));
    }
    response.content_type("application/json").body(reply.body)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A raw server on 127.0.0.1:0 that runs `behave` on each connection; returns its port.
pub async fn raw_server<F, Fut>(behave: F) -> u16
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(behave(stream));
        }
    });
    port
}

/// Reads one whole HTTP/1.1 request (headers, then `Content-Length` bytes of body).
pub async fn read_request(stream: &mut TcpStream) -> Vec<u8> {
    next_request(stream)
        .await
        .expect("the client closed before sending a whole request")
}

/// Reads the next whole request on a kept-alive connection, or `None` once the client has
/// closed it (or closes it midway).
pub async fn next_request(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut request = Vec::new();
    let mut buf = [0_u8; 4096];
    loop {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        request.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&request).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if request.len() >= end + 4 + length {
                return Some(request);
            }
        }
    }
}

/// Writes `bytes` to the client (ignoring a client that has gone).
pub async fn write(stream: &mut TcpStream, bytes: &[u8]) {
    let _ = stream.write_all(bytes).await;
    let _ = stream.flush().await;
}

/// A port nothing listens on: bound, then released.
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}
