//! The `gateway_processes` and `process_circuits` rows: what a serving process last reported
//! of itself and of its circuit breakers.

use diesel::prelude::*;
use domain::circuit::{Circuit, CircuitState};
use domain::ports::ProcessReport;
use domain::Timestamp;

use super::bad;
use crate::schema::{gateway_processes, process_circuits};

const CLOSED: &str = "closed";
const OPEN: &str = "open";
const HALF_OPEN: &str = "half_open";

/// A process's row, written and read as is.
#[derive(Insertable, Queryable, Selectable)]
#[diesel(table_name = gateway_processes)]
pub(crate) struct ProcessRow {
    pub(crate) id: String,
    pub(crate) version: String,
    pub(crate) started_at: i64,
    pub(crate) seen_at: i64,
}

impl ProcessRow {
    pub(crate) fn new(report: &ProcessReport) -> Self {
        Self {
            id: report.id.clone(),
            version: report.version.clone(),
            started_at: report.started_at.millis(),
            seen_at: report.seen_at.millis(),
        }
    }

    /// The report of this process with `circuits` (its rows, in any order).
    pub(crate) fn into_report(self, circuits: Vec<CircuitRow>) -> anyhow::Result<ProcessReport> {
        let mut circuits = circuits
            .into_iter()
            .map(CircuitRow::into_circuit)
            .collect::<anyhow::Result<Vec<_>>>()?;
        circuits.sort_by(|a, b| a.provider.cmp(&b.provider));
        Ok(ProcessReport {
            id: self.id,
            version: self.version,
            started_at: Timestamp::from_millis(self.started_at),
            seen_at: Timestamp::from_millis(self.seen_at),
            circuits,
        })
    }
}

/// One provider's circuit in one process. Whether a half-open circuit's trial is under way
/// is not stored: it lasts one call, and reads back as not.
#[derive(Insertable, Queryable, Selectable)]
#[diesel(table_name = process_circuits)]
pub(crate) struct CircuitRow {
    pub(crate) process_id: String,
    provider: String,
    state: String,
    failures: i32,
    open_until: Option<i64>,
}

impl CircuitRow {
    pub(crate) fn new(process_id: &str, circuit: &Circuit) -> Self {
        let (state, failures, open_until) = match circuit.state {
            CircuitState::Closed { failures } => {
                (CLOSED, i32::try_from(failures).unwrap_or(i32::MAX), None)
            }
            CircuitState::Open { until } => (OPEN, 0, Some(until.millis())),
            CircuitState::HalfOpen { .. } => (HALF_OPEN, 0, None),
        };
        Self {
            process_id: process_id.to_string(),
            provider: circuit.provider.clone(),
            state: state.to_string(),
            failures,
            open_until,
        }
    }

    fn into_circuit(self) -> anyhow::Result<Circuit> {
        let state = match (self.state.as_str(), self.open_until) {
            (CLOSED, None) => CircuitState::Closed {
                failures: u32::try_from(self.failures)
                    .map_err(|_| bad("process_circuits.failures", self.failures))?,
            },
            (OPEN, Some(until)) => CircuitState::Open {
                until: Timestamp::from_millis(until),
            },
            (HALF_OPEN, None) => CircuitState::HalfOpen { trial: false },
            (state, until) => {
                return Err(bad(
                    "process_circuits.state",
                    format!("{state:?} with open_until {until:?}"),
                ))
            }
        };
        Ok(Circuit {
            provider: self.provider,
            state,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(state: CircuitState) -> CircuitState {
        let circuit = Circuit {
            provider: "bank".into(),
            state,
        };
        CircuitRow::new("p", &circuit)
            .into_circuit()
            .expect("decodes")
            .state
    }

    #[test]
    fn circuit_states_round_trip_but_a_trial_under_way() {
        for state in [
            CircuitState::Closed { failures: 0 },
            CircuitState::Closed { failures: 4 },
            CircuitState::Open {
                until: Timestamp::from_millis(1_795_255_200_000),
            },
            CircuitState::HalfOpen { trial: false },
        ] {
            assert_eq!(round_trip(state), state);
        }
        assert_eq!(
            round_trip(CircuitState::HalfOpen { trial: true }),
            CircuitState::HalfOpen { trial: false }
        );
    }

    #[test]
    fn unknown_or_inconsistent_stored_states_are_invalid() {
        let row = |state: &str, failures: i32, open_until: Option<i64>| CircuitRow {
            process_id: "p".into(),
            provider: "bank".into(),
            state: state.into(),
            failures,
            open_until,
        };
        for invalid in [
            row("stuck", 0, None),
            row("open", 0, None),
            row("closed", 0, Some(1)),
            row("closed", -1, None),
        ] {
            assert!(invalid.into_circuit().is_err());
        }
    }
}
