//! Callback adapter: the reqwest notifier and the outbox worker that delivers signed callbacks.
//!
//! The worker claims due callbacks from a [`domain::ports::CallbackOutbox`] under a lease,
//! signs and POSTs them with the [`Notifier`], and records each attempt with what follows it
//! (delivered, retry at a time from the [`domain::callback::RetrySchedule`], or failed).
//! Targets that resolve to private addresses are refused at delivery time by [`guard`].

mod config;
mod decide;
pub mod guard;
mod metrics;
mod notifier;
mod worker;

pub use config::{lease_for, owner_id, CallbackConfig, ConfigError, MAX_TIMEOUT};
pub use metrics::CallbackMetrics;
pub use notifier::{Notifier, SendOutcome, Verdict};
pub use worker::CallbackWorker;
