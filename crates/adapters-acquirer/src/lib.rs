//! Acquirer connector: speaks the Acquirer API (contract 10.1) over HTTP for
//! [`domain::ports::Acquirer`], and classifies every answer to a payment's creation or a refund (contract 10.3), one way for
//! both (`classify::call_answer` over the `object::Object` trait), so the
//! gateway knows whether money may have moved:
//!
//! * [`CallResult::Answered`](domain::acquirer::CallResult::Answered): a 2xx whose body
//!   is a payment with the request's `reference`, `kind`, `amount` and `currency` (a
//!   `failed` payment too: `words` reads its failure code into a
//!   [`FailureReason`](domain::acquirer::FailureReason)).
//! * [`CallResult::Unavailable`](domain::acquirer::CallResult::Unavailable), a definite
//!   failure (nothing happened at the acquirer, another provider may be tried): no
//!   connection was made (DNS failure, refusal, TLS failure, the connect timeout) so no byte
//!   of the request left, or the answer was 400, 401, 403, 404, 422, 429 or 503.
//! * [`CallResult::Unknown`](domain::acquirer::CallResult::Unknown), everything else:
//!   a timeout or a cut connection once connected, any other status (3xx, never followed;
//!   409; 500, 502, 504), or a 2xx that is not a payment or not the one asked for. Only
//!   reads resolve it; nothing here sends a creation twice.
//!
//! Each call is bounded by its provider's timeout; connecting gets at most half of it
//! ([`connect_timeout`]), so a slow connection is reported as such and never as the
//! call's timeout. Reads and cancels answer `Found`, `NotFound` (404) or `Failed`.
//! Calls are counted in [`ProviderMetrics`]; logs carry reasons and ids, never the API key,
//! requisites or bodies.

mod classify;
mod client;
mod dispute_wire;
mod metrics;
mod notification;
mod object;
mod wire;
mod words;

pub use client::{connect_timeout, AcquirerClient, POOL_IDLE_TIMEOUT};
pub use metrics::{Call, CallOutcome, ProviderMetrics};
pub use notification::SIGNATURE_HEADER;
