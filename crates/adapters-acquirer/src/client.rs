//! The HTTP side: one reqwest client per connect timeout, the three calls, and what each
//! finished call leaves in logs and metrics.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use domain::acquirer::{
    AcquirerDispute, AcquirerPayment, AcquirerRefund, CallResult, Evidence, Lookup, Notification,
    NotificationRefusal, PaymentOrder, RefundOrder,
};
use domain::ports::Acquirer;
use domain::provider::{AcquirerProvider, ProviderUrl};
use domain::{OperationId, RefundId};
use prometheus::Registry;
use reqwest::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use reqwest::{redirect, Client, RequestBuilder, Url};

use crate::classify::{
    call_answer, cancel_answer, find_answer, is_success, transport_failure, Failure,
};
use crate::dispute_wire::EvidenceBody;
use crate::metrics::{Call, CallOutcome, ProviderMetrics};
use crate::object::Object;
use crate::wire::{CreateBody, RefundBody};

/// The largest answer body read; a payment is far smaller.
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// The longest a connection may take to open, whatever the provider's timeout.
const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a connection may sit idle in the pool before it is closed rather than reused.
///
/// Servers close idle keep-alive connections on their own schedule (actix-web after 5 s,
/// many proxies after 60 s). A creation written on a connection the server is closing at
/// that moment fails after it was sent: an unknown outcome, resolved by a read, but counted
/// against the provider's circuit, and five in a row open it. Under steady load a pool
/// keeps spare connections that sit idle past the server's limit while others carry the
/// traffic, so it happens at once to several. Closing ours first, below the shortest
/// keep-alive in common use, makes that race rare; a connection in use is unaffected.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

/// How long opening a connection (DNS, TCP and TLS) may take for calls bounded by `call`:
/// half of it, at most 10 s. Strictly shorter than the call, so a slow
/// connection always ends as a connect failure (nothing sent) and never as the call's
/// timeout (outcome unknown).
pub fn connect_timeout(call: Duration) -> Duration {
    (call / 2).min(MAX_CONNECT_TIMEOUT)
}

/// The Acquirer API connector ([`domain::ports::Acquirer`]): never follows redirects, never
/// retries, and bounds each call by its provider's timeout.
#[derive(Debug, Default)]
pub struct AcquirerClient {
    /// Clients by connect timeout, built on first use (providers' timeouts differ).
    clients: Mutex<HashMap<Duration, Client>>,
    metrics: ProviderMetrics,
}

/// What came back from one exchange: the status, and the body when it was wanted.
struct Reply {
    status: u16,
    body: Vec<u8>,
}

impl AcquirerClient {
    /// A connector with fresh, unregistered metrics; HTTP clients are built on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `gateway_provider_calls_total` and `gateway_provider_call_duration_seconds` to
    /// `registry` (once per registry).
    pub fn register(&self, registry: &Registry) -> prometheus::Result<()> {
        self.metrics.register(registry)
    }

    /// The connector's metrics, registered or not.
    pub fn metrics(&self) -> &ProviderMetrics {
        &self.metrics
    }

    fn client(&self, timeout: Duration) -> Result<Client, Failure> {
        let connect = connect_timeout(timeout);
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(client) = clients.get(&connect) {
            return Ok(client.clone());
        }
        let client = Client::builder()
            .redirect(redirect::Policy::none())
            // A proxy would answer for the acquirer (a refused connection would come back as
            // a 502), turning definite failures into unknown outcomes.
            .no_proxy()
            .connect_timeout(connect)
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .user_agent(concat!("gateway-acquirer/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|_| Failure::NotSent("cannot build the HTTP client".into()))?;
        clients.insert(connect, client.clone());
        Ok(client)
    }

    /// Sends `request` with the provider's key and timeout; reads the body only when
    /// `wants_body(status)`, so a definite failure is never lost to a slow error body.
    async fn exchange(
        &self,
        provider: &AcquirerProvider,
        request: impl FnOnce(&Client) -> RequestBuilder,
        wants_body: impl Fn(u16) -> bool,
    ) -> Result<Reply, Failure> {
        let client = self.client(provider.timeout)?;
        let mut bearer =
            HeaderValue::try_from(format!("Bearer {}", provider.credentials.api_key.expose()))
                .map_err(|_| Failure::NotSent("the API key is not a header value".into()))?;
        // Kept out of any `Debug` output of the request.
        bearer.set_sensitive(true);
        let mut response = request(&client)
            .header(AUTHORIZATION, bearer)
            .header(ACCEPT, "application/json")
            .timeout(provider.timeout)
            .send()
            .await
            .map_err(|e| transport_failure(&e))?;
        let status = response.status().as_u16();
        let mut body = Vec::new();
        if wants_body(status) {
            while let Some(chunk) = response.chunk().await.map_err(|e| body_failure(&e))? {
                if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                    return Err(Failure::MaybeSent("answer too large".into()));
                }
                body.extend_from_slice(&chunk);
            }
        }
        Ok(Reply { status, body })
    }

    /// Sends a creating call (a payment's creation, a refund) once, with `key` as its
    /// `Idempotency-Key`, and classifies what came back.
    async fn send_call<T: Object>(
        &self,
        provider: &AcquirerProvider,
        url: Url,
        key: String,
        body: Vec<u8>,
        order: &T::Order,
    ) -> CallResult<T> {
        let request = |client: &Client| {
            client
                .post(url)
                .header("Idempotency-Key", key)
                .header(CONTENT_TYPE, "application/json")
                .body(body)
        };
        match self.exchange(provider, request, is_success).await {
            Ok(reply) => call_answer(reply.status, &reply.body, order),
            Err(Failure::NotSent(reason)) => CallResult::Unavailable(reason),
            Err(Failure::MaybeSent(reason)) => CallResult::Unknown(reason),
        }
    }

    async fn send_create(
        &self,
        provider: &AcquirerProvider,
        order: &PaymentOrder,
    ) -> CallResult<AcquirerPayment> {
        let Ok(body) = CreateBody::new(order) else {
            return CallResult::Unavailable("payout without requisites".into());
        };
        match endpoint(&provider.url, &["v1", "payments"]) {
            Ok(url) => {
                let key = order.reference.to_string();
                self.send_call(provider, url, key, body.to_json(), order)
                    .await
            }
            Err(reason) => CallResult::Unavailable(reason.into()),
        }
    }

    async fn send_refund(
        &self,
        provider: &AcquirerProvider,
        order: &RefundOrder,
    ) -> CallResult<AcquirerRefund> {
        // As for cancels: such a segment would vanish from the path.
        if matches!(order.payment_id.as_str(), "" | "." | "..") {
            return CallResult::Unavailable("invalid acquirer id".into());
        }
        let segments = ["v1", "payments", order.payment_id.as_str(), "refunds"];
        match endpoint(&provider.url, &segments) {
            Ok(url) => {
                let key = order.reference.to_string();
                let body = RefundBody::new(order).to_json();
                self.send_call(provider, url, key, body, order).await
            }
            Err(reason) => CallResult::Unavailable(reason.into()),
        }
    }

    /// Reads the object at `collection` (`v1/payments`, `v1/refunds`) with `reference`.
    async fn send_find<T: Object>(
        &self,
        provider: &AcquirerProvider,
        collection: &str,
        reference: String,
    ) -> Lookup<T> {
        let mut url = match endpoint(&provider.url, &["v1", collection]) {
            Ok(url) => url,
            Err(reason) => return Lookup::Failed(reason.into()),
        };
        url.query_pairs_mut().append_pair("reference", &reference);
        let request = |client: &Client| client.get(url);
        match self.exchange(provider, request, |s| s == 200).await {
            Ok(reply) => find_answer(reply.status, &reply.body, &reference),
            Err(Failure::NotSent(reason) | Failure::MaybeSent(reason)) => Lookup::Failed(reason),
        }
    }

    /// Forwards evidence to `POST /v1/disputes/{id}/evidence`, with the evidence's key as
    /// its `Idempotency-Key`.
    async fn send_evidence(
        &self,
        provider: &AcquirerProvider,
        acquirer_id: &str,
        evidence: &Evidence,
    ) -> CallResult<AcquirerDispute> {
        // As for cancels: such a segment would vanish from the path.
        if matches!(acquirer_id, "" | "." | "..") {
            return CallResult::Unavailable("invalid acquirer id".into());
        }
        match endpoint(&provider.url, &["v1", "disputes", acquirer_id, "evidence"]) {
            Ok(url) => {
                let key = evidence.key.hyphenated().to_string();
                let body = EvidenceBody::new(evidence).to_json();
                self.send_call(provider, url, key, body, &acquirer_id.to_string())
                    .await
            }
            Err(reason) => CallResult::Unavailable(reason.into()),
        }
    }

    /// Reads `GET /v1/disputes/{id}`.
    async fn send_find_dispute(
        &self,
        provider: &AcquirerProvider,
        acquirer_id: &str,
    ) -> Lookup<AcquirerDispute> {
        if matches!(acquirer_id, "" | "." | "..") {
            return Lookup::Failed("invalid acquirer id".into());
        }
        let url = match endpoint(&provider.url, &["v1", "disputes", acquirer_id]) {
            Ok(url) => url,
            Err(reason) => return Lookup::Failed(reason.into()),
        };
        let request = |client: &Client| client.get(url);
        match self.exchange(provider, request, |s| s == 200).await {
            Ok(reply) => find_answer(reply.status, &reply.body, acquirer_id),
            Err(Failure::NotSent(reason) | Failure::MaybeSent(reason)) => Lookup::Failed(reason),
        }
    }

    async fn send_cancel(
        &self,
        provider: &AcquirerProvider,
        acquirer_id: &str,
    ) -> Lookup<AcquirerPayment> {
        // Such a segment would vanish from the path (and the 404 it earns could pass for "no
        // such payment"); other characters are percent-encoded.
        if matches!(acquirer_id, "" | "." | "..") {
            return Lookup::Failed("invalid acquirer id".into());
        }
        let url = match endpoint(&provider.url, &["v1", "payments", acquirer_id, "cancel"]) {
            Ok(url) => url,
            Err(reason) => return Lookup::Failed(reason.into()),
        };
        let request = |client: &Client| client.post(url);
        match self
            .exchange(provider, request, |s| s == 200 || s == 409)
            .await
        {
            Ok(reply) => cancel_answer(reply.status, &reply.body, acquirer_id),
            Err(Failure::NotSent(reason) | Failure::MaybeSent(reason)) => Lookup::Failed(reason),
        }
    }

    /// Awaits the creating call `sent` (it starts here), then counts and logs it.
    async fn timed_call<T: Object>(
        &self,
        provider: &AcquirerProvider,
        call: Call,
        order: &T::Order,
        sent: impl Future<Output = CallResult<T>>,
    ) -> CallResult<T> {
        let started = Instant::now();
        let result = sent.await;
        self.finish_call(provider, call, &result, order, started.elapsed());
        result
    }

    /// Awaits the read or cancel `sent` (it starts here), then counts and logs it.
    async fn timed_read<T: Object>(
        &self,
        provider: &AcquirerProvider,
        call: Call,
        sent: impl Future<Output = Lookup<T>>,
    ) -> Lookup<T> {
        let started = Instant::now();
        let lookup = sent.await;
        self.finish_read(provider, call, &lookup, started.elapsed());
        lookup
    }

    /// Counts and logs a finished creating call.
    fn finish_call<T: Object>(
        &self,
        provider: &AcquirerProvider,
        call: Call,
        result: &CallResult<T>,
        order: &T::Order,
        took: Duration,
    ) {
        let outcome = CallOutcome::of_call(result, |object| object.outcome(order));
        self.metrics
            .observe(provider.name.as_str(), call, outcome, took);
        let duration_ms = took.as_millis();
        let object = T::NAME;
        match result {
            CallResult::Answered(answered) => tracing::info!(
                duration_ms,
                object,
                acquirer.id = %answered.id(),
                status = answered.status_word(),
                failure_code = answered.failure_code(),
                "{}",
                T::ANSWERED
            ),
            CallResult::Unavailable(reason) => tracing::warn!(
                duration_ms,
                object,
                reason = %reason,
                "{}",
                T::NOTHING_DONE
            ),
            CallResult::Unknown(reason) => tracing::warn!(
                duration_ms,
                object,
                reason = %reason,
                "{}",
                T::UNKNOWN
            ),
        }
    }

    /// Counts and logs a finished read or cancel.
    fn finish_read<T: Object>(
        &self,
        provider: &AcquirerProvider,
        call: Call,
        lookup: &Lookup<T>,
        took: Duration,
    ) {
        self.metrics.observe(
            provider.name.as_str(),
            call,
            CallOutcome::of_lookup(lookup),
            took,
        );
        let duration_ms = took.as_millis();
        let object = T::NAME;
        match lookup {
            Lookup::Found(found) => tracing::debug!(
                duration_ms,
                object,
                acquirer.id = %found.id(),
                status = found.status_word(),
                "acquirer found the object"
            ),
            Lookup::NotFound => {
                tracing::info!(duration_ms, object, "acquirer knows no such object")
            }
            Lookup::Failed(reason) => tracing::warn!(
                duration_ms,
                object,
                reason = %reason,
                call = call.as_str(),
                "acquirer call failed"
            ),
        }
    }
}

#[async_trait]
impl Acquirer for AcquirerClient {
    fn notification_signature_header(&self, _provider: &AcquirerProvider) -> &'static str {
        crate::notification::SIGNATURE_HEADER
    }

    fn read_notification(
        &self,
        provider: &AcquirerProvider,
        signature: &str,
        body: &[u8],
    ) -> Result<Notification, NotificationRefusal> {
        crate::notification::read(provider, signature, body)
    }

    #[tracing::instrument(name = "acquirer.create", skip_all,
        fields(provider = %provider.name, operation.id = %order.reference))]
    async fn create(
        &self,
        provider: &AcquirerProvider,
        order: &PaymentOrder,
    ) -> CallResult<AcquirerPayment> {
        let sent = self.send_create(provider, order);
        self.timed_call(provider, Call::Create, order, sent).await
    }

    #[tracing::instrument(name = "acquirer.find", skip_all,
        fields(provider = %provider.name, operation.id = %reference))]
    async fn find(
        &self,
        provider: &AcquirerProvider,
        reference: OperationId,
    ) -> Lookup<AcquirerPayment> {
        let sent = self.send_find(provider, "payments", reference.to_string());
        self.timed_read(provider, Call::Read, sent).await
    }

    #[tracing::instrument(name = "acquirer.cancel", skip_all,
        fields(provider = %provider.name, acquirer.id = %acquirer_id))]
    async fn cancel(
        &self,
        provider: &AcquirerProvider,
        acquirer_id: &str,
    ) -> Lookup<AcquirerPayment> {
        let sent = self.send_cancel(provider, acquirer_id);
        self.timed_read(provider, Call::Cancel, sent).await
    }

    #[tracing::instrument(name = "acquirer.refund", skip_all,
        fields(provider = %provider.name, refund.id = %order.reference))]
    async fn refund(
        &self,
        provider: &AcquirerProvider,
        order: &RefundOrder,
    ) -> CallResult<AcquirerRefund> {
        let sent = self.send_refund(provider, order);
        self.timed_call(provider, Call::Refund, order, sent).await
    }

    #[tracing::instrument(name = "acquirer.find_refund", skip_all,
        fields(provider = %provider.name, refund.id = %reference))]
    async fn find_refund(
        &self,
        provider: &AcquirerProvider,
        reference: RefundId,
    ) -> Lookup<AcquirerRefund> {
        let sent = self.send_find(provider, "refunds", reference.to_string());
        self.timed_read(provider, Call::Read, sent).await
    }

    #[tracing::instrument(name = "acquirer.evidence", skip_all,
        fields(provider = %provider.name, acquirer.id = %acquirer_id))]
    async fn submit_evidence(
        &self,
        provider: &AcquirerProvider,
        acquirer_id: &str,
        evidence: &Evidence,
    ) -> CallResult<AcquirerDispute> {
        let sent = self.send_evidence(provider, acquirer_id, evidence);
        let order = acquirer_id.to_string();
        self.timed_call(provider, Call::Evidence, &order, sent)
            .await
    }

    #[tracing::instrument(name = "acquirer.find_dispute", skip_all,
        fields(provider = %provider.name, acquirer.id = %acquirer_id))]
    async fn find_dispute(
        &self,
        provider: &AcquirerProvider,
        acquirer_id: &str,
    ) -> Lookup<AcquirerDispute> {
        let sent = self.send_find_dispute(provider, acquirer_id);
        self.timed_read(provider, Call::Read, sent).await
    }
}

/// `base` with `segments` appended, each percent-encoded (an acquirer's id cannot change the
/// path). Credentials in the base are dropped: the API key is the only one sent.
fn endpoint(base: &ProviderUrl, segments: &[&str]) -> Result<Url, &'static str> {
    let invalid = "invalid provider URL";
    let mut url = Url::parse(base.as_str()).map_err(|_| invalid)?;
    url.path_segments_mut()
        .map_err(|_| invalid)?
        .pop_if_empty()
        .extend(segments);
    url.set_username("").map_err(|()| invalid)?;
    url.set_password(None).map_err(|()| invalid)?;
    Ok(url)
}

/// A failure while reading the answer: the request had been sent.
fn body_failure(error: &reqwest::Error) -> Failure {
    Failure::MaybeSent(if error.is_timeout() {
        "timeout while reading the answer".into()
    } else {
        "answer cut off".into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connecting_takes_half_the_call_at_most_ten_seconds() {
        let secs = Duration::from_secs;
        assert_eq!(connect_timeout(secs(1)), Duration::from_millis(500));
        assert_eq!(connect_timeout(secs(5)), Duration::from_millis(2500));
        assert_eq!(connect_timeout(secs(55)), secs(10));
    }

    #[test]
    fn endpoints_keep_the_base_path_and_encode_segments() {
        // The domain refuses credentials in a provider URL; one stored some other way is
        // still never sent.
        let base = ProviderUrl::from_stored("https://user:pw@acq.example.com/api".into());
        let url = endpoint(&base, &["v1", "payments", "acq_1/../x?y", "cancel"]).expect("url");
        assert_eq!(
            url.as_str(),
            "https://acq.example.com/api/v1/payments/acq_1%2F..%2Fx%3Fy/cancel"
        );
        let base = ProviderUrl::parse("http://127.0.0.1:9100/", false).expect("url");
        let url = endpoint(&base, &["v1", "payments"]).expect("url");
        assert_eq!(url.as_str(), "http://127.0.0.1:9100/v1/payments");
    }
}
