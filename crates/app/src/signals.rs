//! Provider metrics that storage knows best, refreshed every few seconds:
//! `gateway_provider_discrepancies_total{provider}` (every discrepancy ever recorded, by any
//! process) and `gateway_operations_processing_oldest_seconds{provider,direction}`.

use adapters_db::Database;
use domain::Timestamp;
use prometheus::{GaugeVec, IntCounterVec, Opts, Registry};

/// The two series, registered once.
#[derive(Clone)]
pub struct ProviderSignals {
    discrepancies: IntCounterVec,
    oldest: GaugeVec,
}

impl ProviderSignals {
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let discrepancies = IntCounterVec::new(
            Opts::new(
                "gateway_provider_discrepancies_total",
                "Final statuses a provider reported that contradict the operation's own.",
            ),
            &["provider"],
        )?;
        let oldest = GaugeVec::new(
            Opts::new(
                "gateway_operations_processing_oldest_seconds",
                "Age of the oldest operation still processing, per provider and direction.",
            ),
            &["provider", "direction"],
        )?;
        registry.register(Box::new(discrepancies.clone()))?;
        registry.register(Box::new(oldest.clone()))?;
        Ok(Self {
            discrepancies,
            oldest,
        })
    }

    /// Reads storage and brings the series up to it (a failed read leaves them as they were).
    pub async fn refresh(&self, database: &Database, now: Timestamp) {
        let signals = match database.provider_signals().await {
            Ok(signals) => signals,
            Err(error) => {
                tracing::debug!(error = %domain::ports::Chain(&error), "provider metrics not refreshed");
                return;
            }
        };
        for (provider, count) in signals.discrepancies {
            let counter = self.discrepancies.with_label_values(&[&provider]);
            let seen = i64::try_from(counter.get()).unwrap_or(i64::MAX);
            if count > seen {
                counter.inc_by(u64::try_from(count - seen).unwrap_or(0));
            }
        }
        self.oldest.reset();
        for (provider, direction, created_at) in signals.oldest_processing {
            let age = (now.millis() - created_at.millis()).max(0) as f64 / 1000.0;
            self.oldest
                .with_label_values(&[&provider, &direction])
                .set(age);
        }
    }
}
