//! Flags and `ACQUIRER_SIM_*` variables, checked at start.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;

use crate::faults::{BadRate, Faults, FaultsPatch};
use crate::model::FailureCode;
use crate::notify::RETRY_SCHEDULE;
use crate::secret::Secret;

/// A simulator of a bank's Acquirer API in test mode, with fault injection.
#[derive(Debug, Parser)]
#[command(name = "acquirer-sim", version, about)]
pub struct Config {
    /// Address of the Acquirer API and the payin pages (port 0: any free port).
    #[arg(long, env = "ACQUIRER_SIM_BIND", default_value = "127.0.0.1:9100")]
    pub bind: SocketAddr,
    /// Address of the control API (`/_sim/...`, no authentication; keep it on loopback).
    #[arg(
        long,
        env = "ACQUIRER_SIM_CONTROL_BIND",
        default_value = "127.0.0.1:9101"
    )]
    pub control_bind: SocketAddr,
    /// The bearer token the Acquirer API requires.
    #[arg(long, env = "ACQUIRER_SIM_API_KEY", hide_env_values = true)]
    pub api_key: Secret,
    /// The key of the notifications' `x-acquirer-signature`.
    #[arg(long, env = "ACQUIRER_SIM_WEBHOOK_SECRET", hide_env_values = true)]
    pub webhook_secret: Secret,
    /// How long payouts and refunds stay pending, in milliseconds.
    #[arg(long, env = "ACQUIRER_SIM_SETTLE_MS", default_value_t = 2000)]
    pub settle_ms: u64,
    /// How long `timeoutRate` holds an answer, in milliseconds.
    #[arg(long, env = "ACQUIRER_SIM_HOLD_MS", default_value_t = 30000)]
    pub hold_ms: u64,
    /// Base URL of payin pages in `action.redirectUrl` (default: http:// and the bound address).
    #[arg(long, env = "ACQUIRER_SIM_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Seed of the fault dice (default: from the clock; logged at start).
    #[arg(long, env = "ACQUIRER_SIM_SEED")]
    pub seed: Option<u64>,
    /// Tests only: every notification retry waits this many ms instead of the schedule.
    #[arg(long, env = "ACQUIRER_SIM_NOTIFY_RETRY_MS", hide = true)]
    pub notify_retry_ms: Option<u64>,
    /// Initial `latencyMs` fault.
    #[arg(long, env = "ACQUIRER_SIM_LATENCY_MS", default_value_t = 0)]
    pub latency_ms: u64,
    /// Initial `failRate` fault (0 to 1).
    #[arg(long, env = "ACQUIRER_SIM_FAIL_RATE", default_value_t = 0.0)]
    pub fail_rate: f64,
    /// Initial `declineRate` fault (0 to 1).
    #[arg(long, env = "ACQUIRER_SIM_DECLINE_RATE", default_value_t = 0.0)]
    pub decline_rate: f64,
    /// Initial `declineCode` fault.
    #[arg(long, env = "ACQUIRER_SIM_DECLINE_CODE", value_parser = parse_code, default_value = "provider_unavailable")]
    pub decline_code: FailureCode,
    /// Initial `ambiguousRate` fault (0 to 1).
    #[arg(long, env = "ACQUIRER_SIM_AMBIGUOUS_RATE", default_value_t = 0.0)]
    pub ambiguous_rate: f64,
    /// Initial `timeoutRate` fault (0 to 1).
    #[arg(long, env = "ACQUIRER_SIM_TIMEOUT_RATE", default_value_t = 0.0)]
    pub timeout_rate: f64,
    /// Initial `dropNotifyRate` fault (0 to 1).
    #[arg(long, env = "ACQUIRER_SIM_DROP_NOTIFY_RATE", default_value_t = 0.0)]
    pub drop_notify_rate: f64,
    /// Initial `duplicateNotifyRate` fault (0 to 1).
    #[arg(
        long,
        env = "ACQUIRER_SIM_DUPLICATE_NOTIFY_RATE",
        default_value_t = 0.0
    )]
    pub duplicate_notify_rate: f64,
    /// Initial `reorderNotify` fault.
    #[arg(long, env = "ACQUIRER_SIM_REORDER_NOTIFY", default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub reorder_notify: bool,
    /// Initial `down` fault: start with the API listener closed.
    #[arg(long, env = "ACQUIRER_SIM_DOWN", default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub down: bool,
}

fn parse_code(text: &str) -> Result<FailureCode, String> {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .map_err(|_| format!("unknown failure code {text:?}"))
}

impl Config {
    /// The initial fault set; a rate outside 0 to 1 is refused, naming it.
    pub fn faults(&self) -> Result<Faults, BadRate> {
        let mut faults = Faults::default();
        faults.apply(FaultsPatch {
            latency_ms: Some(self.latency_ms),
            fail_rate: Some(self.fail_rate),
            decline_rate: Some(self.decline_rate),
            decline_code: Some(self.decline_code),
            ambiguous_rate: Some(self.ambiguous_rate),
            timeout_rate: Some(self.timeout_rate),
            drop_notify_rate: Some(self.drop_notify_rate),
            duplicate_notify_rate: Some(self.duplicate_notify_rate),
            reorder_notify: Some(self.reorder_notify),
            down: Some(self.down),
        })?;
        Ok(faults)
    }

    /// The notification retry delays: the contract's schedule, or the test override.
    pub fn retries(&self) -> Vec<Duration> {
        match self.notify_retry_ms {
            Some(ms) => vec![Duration::from_millis(ms); RETRY_SCHEDULE.len()],
            None => RETRY_SCHEDULE.to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, clap::Error> {
        let base = ["acquirer-sim", "--api-key", "k", "--webhook-secret", "s"];
        Config::try_parse_from(base.iter().chain(args))
    }

    #[test]
    fn defaults() {
        let config = parse(&[]).expect("parses");
        assert_eq!(config.settle_ms, 2000);
        assert_eq!(config.hold_ms, 30000);
        assert_eq!(config.faults().expect("valid"), Faults::default());
        assert_eq!(config.retries(), RETRY_SCHEDULE.to_vec());
    }

    #[test]
    fn fault_flags() {
        let config = parse(&[
            "--fail-rate",
            "0.25",
            "--down",
            "--decline-code",
            "issuer_unavailable",
        ])
        .expect("parses");
        let faults = config.faults().expect("valid");
        assert_eq!(faults.fail_rate, 0.25);
        assert!(faults.down);
        assert_eq!(faults.decline_code, FailureCode::IssuerUnavailable);
        assert!(parse(&["--decline-code", "nope"]).is_err());
        let bad = parse(&["--timeout-rate", "2"]).expect("parses");
        assert!(bad.faults().is_err());
    }

    #[test]
    fn retry_override() {
        let config = parse(&["--notify-retry-ms", "50"]).expect("parses");
        assert!(config
            .retries()
            .iter()
            .all(|d| *d == Duration::from_millis(50)));
    }
}
