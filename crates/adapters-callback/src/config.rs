//! How the callback worker behaves: schedule, timeout, concurrency and leases.

use std::time::Duration;

use domain::callback::RetrySchedule;

/// Settings of the notifier and the outbox worker.
#[derive(Debug, Clone)]
pub struct CallbackConfig {
    /// Delays between attempts; N delays allow at most N + 1 attempts in one run.
    pub schedule: RetrySchedule,
    /// How long one attempt may take, connection and answer included (`GATEWAY_CALLBACK_TIMEOUT`).
    pub timeout: Duration,
    /// Whether loopback, private and link-local targets are allowed (`GATEWAY_CALLBACK_ALLOW_PRIVATE`).
    pub allow_private: bool,
    /// How many deliveries may be in flight at once in one process.
    pub concurrency: usize,
    /// The most callbacks claimed in one go.
    pub batch: u32,
    /// How long a claim is held; a dead process's claims come back after it.
    pub lease: Duration,
    /// How long to wait before claiming again when nothing was due.
    pub poll_interval: Duration,
}

impl Default for CallbackConfig {
    fn default() -> Self {
        Self {
            schedule: RetrySchedule::standard(),
            timeout: Duration::from_secs(10),
            allow_private: false,
            concurrency: 64,
            batch: 64,
            lease: Duration::from_secs(30),
            poll_interval: Duration::from_millis(250),
        }
    }
}

/// Time needed after an attempt's timeout to record it before the lease ends.
const RECORD_MARGIN: Duration = Duration::from_secs(5);

impl CallbackConfig {
    /// Checks the settings hang together; the message names the offending setting.
    pub fn validate(&self) -> Result<(), String> {
        if self.timeout.is_zero() {
            return Err("callback timeout must be greater than zero".into());
        }
        if self.concurrency == 0 {
            return Err("callback concurrency must be at least 1".into());
        }
        if self.batch == 0 {
            return Err("callback batch must be at least 1".into());
        }
        if self.lease > Duration::from_secs(60) {
            return Err("callback lease must be at most 60 s so a dead process's claims come back within a minute".into());
        }
        if self.lease < self.timeout + RECORD_MARGIN {
            return Err(format!(
                "callback timeout (GATEWAY_CALLBACK_TIMEOUT) {:?} must be at most {:?}: \
                 an attempt must end and be recorded within the {:?} lease",
                self.timeout,
                self.lease.saturating_sub(RECORD_MARGIN),
                self.lease
            ));
        }
        Ok(())
    }
}

/// A lease owner id unique to this process: `hostname-pid-uuid`.
pub fn owner_id() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| {
            h.trim()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
                .collect::<String>()
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".to_string());
    format!("{host}-{}-{}", std::process::id(), uuid::Uuid::new_v4())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_follows_the_contract() {
        let config = CallbackConfig::default();
        assert_eq!(config.validate(), Ok(()));
        assert_eq!(config.timeout, Duration::from_secs(10));
        assert_eq!(config.schedule, RetrySchedule::standard());
        assert!(!config.allow_private);
    }

    #[test]
    fn refuses_a_lease_too_long_or_too_short() {
        let long = CallbackConfig {
            lease: Duration::from_secs(61),
            ..CallbackConfig::default()
        };
        assert!(long.validate().is_err());
        let short = CallbackConfig {
            lease: Duration::from_secs(12),
            ..CallbackConfig::default()
        };
        assert!(short.validate().is_err());
        let zero = CallbackConfig {
            concurrency: 0,
            ..CallbackConfig::default()
        };
        assert!(zero.validate().is_err());
    }

    #[test]
    fn owner_ids_are_unique() {
        assert_ne!(owner_id(), owner_id());
        assert!(owner_id().contains(&std::process::id().to_string()));
    }
}
