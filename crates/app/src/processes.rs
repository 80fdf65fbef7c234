//! This serving process's report of itself: every [`REPORT_EVERY`] its id, version and
//! circuit breakers go to the database (what `gateway provider list` shows of every live
//! process) and to `gateway_provider_circuit_open{provider}` on its own `/metrics`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use adapters_db::Database;
use domain::circuit::Circuit;
use domain::ports::{Chain, ProcessRegistry, ProcessReport, ProviderDirectory};
use domain::service::Gateway;
use domain::Timestamp;
use prometheus::{IntGaugeVec, Opts, Registry};

/// The gateway version every report names.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// How often a serving process reports.
pub const REPORT_EVERY: Duration = Duration::from_secs(5);

/// A process is live, for `gateway provider list`, while its last report is this recent.
pub const LIVE_WITHIN_SECONDS: i64 = 30;

/// Writes this process's reports and keeps its circuit gauge. Cheap to clone.
#[derive(Clone)]
pub struct ProcessReporter {
    id: Arc<str>,
    started_at: Timestamp,
    gateway: Gateway,
    database: Database,
    open: IntGaugeVec,
}

impl ProcessReporter {
    /// Registers `gateway_provider_circuit_open{provider}` in `registry`; the process is `id`,
    /// started now.
    pub fn register(
        registry: &Registry,
        id: Arc<str>,
        gateway: Gateway,
        database: Database,
    ) -> prometheus::Result<Self> {
        let open = IntGaugeVec::new(
            Opts::new(
                "gateway_provider_circuit_open",
                "1 while this process's circuit breaker skips the provider (open or half-open), else 0.",
            ),
            &["provider"],
        )?;
        registry.register(Box::new(open.clone()))?;
        let started_at = gateway.clock().now();
        Ok(Self {
            id,
            started_at,
            gateway,
            database,
            open,
        })
    }

    /// This process's id, unique per run.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Sets the gauge from the circuits as they stand and writes the report. A failure is
    /// logged and tried again at the next tick: it never stops the server.
    pub async fn tick(&self) {
        let circuits = self.gateway.circuits();
        self.set_gauge(&circuits).await;
        let report = ProcessReport {
            id: self.id.to_string(),
            version: VERSION.to_string(),
            started_at: self.started_at,
            seen_at: self.gateway.clock().now(),
            circuits,
        };
        if let Err(error) = self.database.report(&report).await {
            tracing::warn!(error = %Chain(&error), "process report not written");
        }
    }

    /// One series per acquirer (0 until its circuit opens, so an alert sees it before the
    /// first call) and per provider with a circuit.
    async fn set_gauge(&self, circuits: &[Circuit]) {
        let mut closed: BTreeSet<String> = match self.database.acquirers().await {
            Ok(acquirers) => acquirers
                .iter()
                .map(|p| p.name.as_str().to_string())
                .collect(),
            // The circuits still show; the idle acquirers keep their last value.
            Err(error) => {
                tracing::debug!(error = %Chain(&error), "acquirers not read for the circuit gauge");
                BTreeSet::new()
            }
        };
        for circuit in circuits {
            closed.remove(&circuit.provider);
            self.open
                .with_label_values(&[&circuit.provider])
                .set(i64::from(circuit.state.is_open()));
        }
        for provider in closed {
            self.open.with_label_values(&[&provider]).set(0);
        }
    }

    /// Deletes this process's report (a clean stop), so it leaves the list at once.
    pub async fn forget(&self) {
        if let Err(error) = self.database.forget_process(&self.id).await {
            tracing::warn!(error = %Chain(&error), "process report not deleted at stop");
        }
    }
}
