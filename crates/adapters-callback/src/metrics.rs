//! Counters of callback attempts, for the app's `/metrics`.

use domain::ports::AttemptResult;
use prometheus::{IntCounter, Registry};

/// How many attempts ended delivered, scheduled for retry, or failed for good, and how many
/// callbacks were held for a disabled merchant.
#[derive(Debug, Clone)]
pub struct CallbackMetrics {
    /// `gateway_callbacks_delivered_total`
    pub delivered: IntCounter,
    /// `gateway_callbacks_retried_total`: attempts that failed and were scheduled again.
    pub retried: IntCounter,
    /// `gateway_callbacks_failed_total`: callbacks given up (schedule exhausted or refused).
    pub failed: IntCounter,
    /// `gateway_callbacks_held_total`: due callbacks held because their merchant is disabled
    /// (not attempts).
    pub held: IntCounter,
}

impl CallbackMetrics {
    /// Fresh counters, not yet registered anywhere.
    pub fn new() -> Self {
        Self {
            delivered: counter(
                "gateway_callbacks_delivered_total",
                "Callbacks delivered (2xx answer).",
            ),
            retried: counter(
                "gateway_callbacks_retried_total",
                "Callback attempts that failed and were scheduled again.",
            ),
            failed: counter(
                "gateway_callbacks_failed_total",
                "Callbacks given up: schedule exhausted or target refused.",
            ),
            held: counter(
                "gateway_callbacks_held_total",
                "Due callbacks held because their merchant is disabled.",
            ),
        }
    }

    /// Adds the counters to `registry` (once per registry).
    pub fn register(&self, registry: &Registry) -> prometheus::Result<()> {
        registry.register(Box::new(self.delivered.clone()))?;
        registry.register(Box::new(self.retried.clone()))?;
        registry.register(Box::new(self.failed.clone()))?;
        registry.register(Box::new(self.held.clone()))?;
        Ok(())
    }

    /// Counts one recorded attempt.
    pub fn observe(&self, result: &AttemptResult) {
        match result {
            AttemptResult::Delivered => self.delivered.inc(),
            AttemptResult::RetryAt(_) => self.retried.inc(),
            AttemptResult::Failed(_) => self.failed.inc(),
        }
    }
}

impl Default for CallbackMetrics {
    fn default() -> Self {
        Self::new()
    }
}

fn counter(name: &str, help: &str) -> IntCounter {
    // The names and help texts are constant and valid, so creation cannot fail.
    IntCounter::new(name, help).unwrap_or_else(|e| unreachable!("metric {name}: {e}"))
}

#[cfg(test)]
mod tests {
    use domain::Timestamp;

    use super::*;

    #[test]
    fn counts_results_and_registers_once() {
        let metrics = CallbackMetrics::new();
        metrics.observe(&AttemptResult::Delivered);
        metrics.observe(&AttemptResult::RetryAt(Timestamp::from_millis(1)));
        metrics.observe(&AttemptResult::Failed("x".into()));
        metrics.observe(&AttemptResult::Delivered);
        assert_eq!(metrics.delivered.get(), 2);
        assert_eq!(metrics.retried.get(), 1);
        assert_eq!(metrics.failed.get(), 1);

        let registry = Registry::new();
        metrics.register(&registry).expect("first registration");
        assert!(metrics.register(&registry).is_err());
        assert_eq!(registry.gather().len(), 4);
    }
}
