//! Sends one signed callback over HTTP and says how it went.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::{Duration, Instant};

use domain::merchant::KeyRing;
use domain::ports::PendingCallback;
use domain::signature::{sign, signed_message, webhook_signatures};
use domain::Timestamp;
use reqwest::{redirect, Client, Url};

use crate::guard::{check_literal, GuardedResolver, RefusedTarget};

/// How much of an answer's body is read (then dropped) so the connection can be reused.
const DRAIN_LIMIT: usize = 64 * 1024;

/// What became of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A 2xx answer came within the timeout.
    Delivered,
    /// Worth trying again later: a non-2xx answer, a timeout, a connection error.
    Retryable(String),
    /// Never worth trying again: the target is refused or the URL unusable.
    Refused(String),
}

/// One attempt's outcome, ready to record (never holds the body or signature).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendOutcome {
    /// Delivered, worth retrying, or refused for good.
    pub verdict: Verdict,
    /// The HTTP status, if an answer came.
    pub http_status: Option<u16>,
    /// How long the HTTP exchange took.
    pub duration_ms: i64,
}

impl SendOutcome {
    /// An outcome decided without sending anything.
    pub fn refused(reason: impl Into<String>) -> Self {
        Self {
            verdict: Verdict::Refused(reason.into()),
            http_status: None,
            duration_ms: 0,
        }
    }

    /// The error text to record, if the attempt failed.
    pub fn error(&self) -> Option<&str> {
        match &self.verdict {
            Verdict::Delivered => None,
            Verdict::Retryable(e) | Verdict::Refused(e) => Some(e),
        }
    }
}

/// The reqwest client that POSTs callbacks: no redirects, no proxy, guarded resolution.
#[derive(Debug, Clone)]
pub struct Notifier {
    client: Client,
    timeout: Duration,
    allow_private: bool,
}

impl Notifier {
    /// A notifier whose attempts each take at most `timeout`.
    pub fn new(timeout: Duration, allow_private: bool) -> anyhow::Result<Self> {
        let client = Client::builder()
            .redirect(redirect::Policy::none())
            // A proxy would resolve the target itself, out of the guard's sight.
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver { allow_private }))
            .timeout(timeout)
            .user_agent(concat!("gateway-callbacks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| anyhow::anyhow!("cannot build the callback HTTP client: {e}"))?;
        Ok(Self {
            client,
            timeout,
            allow_private,
        })
    }

    /// POSTs `callback.body` signed with the newest of `keys`, carrying its attempt number,
    /// stamped with `sent_at` (Unix seconds in `x-callback-timestamp`, signed with the body in
    /// `x-signature-v2` = HMAC-SHA256(secret, "{timestamp}.{body}")), and with the Standard
    /// Webhooks headers: `webhook-id` (the callback's id), `webhook-timestamp` (the same
    /// seconds) and `webhook-signature` (one `v1,` signature per secret live at `sent_at`).
    pub async fn send(
        &self,
        callback: &PendingCallback,
        keys: &KeyRing,
        sent_at: Timestamp,
    ) -> SendOutcome {
        let url = match Url::parse(&callback.url) {
            Ok(url) => url,
            Err(e) => return SendOutcome::refused(format!("invalid callback URL: {e}")),
        };
        if let Err(refused) = check_literal(&url, self.allow_private) {
            return SendOutcome::refused(refused.to_string());
        }
        let secret = &keys.newest().secret;
        let signature = sign(secret, callback.body.as_bytes());
        let stamp = sent_at.millis().div_euclid(1000).to_string();
        let signature_v2 = sign(
            secret,
            &signed_message(Some(&stamp), callback.body.as_bytes()),
        );
        let id = callback.id();
        let standard = webhook_signatures(
            keys.live(sent_at).map(|key| &key.secret),
            &id,
            &stamp,
            callback.body.as_bytes(),
        );
        let started = Instant::now();
        let answer = self
            .client
            .post(url)
            .header("merchant-id", callback.merchant_id.as_str())
            .header("x-signature", signature)
            .header("x-callback-timestamp", &stamp)
            .header("x-signature-v2", signature_v2)
            .header("webhook-id", id)
            .header("webhook-timestamp", stamp)
            .header("webhook-signature", standard)
            .header("content-type", "application/json")
            .header("x-callback-attempt", callback.attempt.to_string())
            .body(callback.body.clone())
            .send()
            .await;
        let (verdict, http_status) = match answer {
            Ok(mut response) => {
                let status = response.status();
                // Reading the (small) rest of the answer lets the connection go back to the pool.
                let mut read = 0;
                while read < DRAIN_LIMIT {
                    match response.chunk().await {
                        Ok(Some(chunk)) => read += chunk.len(),
                        Ok(None) | Err(_) => break,
                    }
                }
                let verdict = if status.is_success() {
                    Verdict::Delivered
                } else {
                    Verdict::Retryable(format!("HTTP {}", status.as_u16()))
                };
                (verdict, Some(status.as_u16()))
            }
            Err(e) => (self.classify(e), None),
        };
        SendOutcome {
            verdict,
            http_status,
            duration_ms: i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX),
        }
    }

    fn classify(&self, error: reqwest::Error) -> Verdict {
        let mut source: Option<&(dyn StdError + 'static)> = Some(&error);
        while let Some(e) = source {
            if let Some(refused) = e.downcast_ref::<RefusedTarget>() {
                return Verdict::Refused(refused.to_string());
            }
            source = e.source();
        }
        if error.is_timeout() {
            return Verdict::Retryable(format!("timed out after {} ms", self.timeout.as_millis()));
        }
        Verdict::Retryable(error_chain(error.without_url()))
    }
}

/// The error and its causes as one line, without repeats (and without the URL).
fn error_chain(error: reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut source: Option<&(dyn StdError + 'static)> = Some(&error);
    while let Some(e) = source {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = e.source();
    }
    parts.join(": ")
}
