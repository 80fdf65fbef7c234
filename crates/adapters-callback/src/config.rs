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
    /// How often the worker looks for held callbacks whose merchant is enabled and puts them
    /// back to pending: a safety net, since enabling a merchant releases its own at once.
    pub held_sweep: Duration,
}

impl Default for CallbackConfig {
    fn default() -> Self {
        Self {
            schedule: RetrySchedule::standard(),
            timeout: Duration::from_secs(10),
            allow_private: false,
            concurrency: 256,
            batch: 128,
            lease: Duration::from_secs(30),
            poll_interval: Duration::from_millis(250),
            held_sweep: Duration::from_secs(60),
        }
    }
}

/// Time needed after an attempt's timeout to record it before the lease ends.
pub const RECORD_MARGIN: Duration = Duration::from_secs(5);

/// The shortest lease a claim gets.
pub const MIN_LEASE: Duration = Duration::from_secs(30);

/// The longest lease: a dead process's claims come back within a minute.
pub const MAX_LEASE: Duration = Duration::from_secs(60);

/// The longest attempt whose lease still ends within [`MAX_LEASE`].
pub const MAX_TIMEOUT: Duration = MAX_LEASE.saturating_sub(RECORD_MARGIN);

/// The lease for attempts of `timeout`: the timeout plus the time to record it, at least
/// [`MIN_LEASE`].
pub fn lease_for(timeout: Duration) -> Duration {
    (timeout + RECORD_MARGIN).max(MIN_LEASE)
}

/// Settings that do not hang together; each message names the setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("callback timeout must be greater than zero")]
    ZeroTimeout,
    #[error("callback concurrency must be at least 1")]
    ZeroConcurrency,
    #[error("callback batch must be at least 1")]
    ZeroBatch,
    #[error(
        "callback lease {0:?} is longer than {MAX_LEASE:?}: a dead process's claims must come \
         back within a minute"
    )]
    LeaseTooLong(Duration),
    #[error(
        "callback timeout (GATEWAY_CALLBACK_TIMEOUT) {timeout:?} must be at most {max:?}: an \
         attempt must end and be recorded within the {lease:?} lease"
    )]
    TimeoutTooLong {
        timeout: Duration,
        max: Duration,
        lease: Duration,
    },
}

impl CallbackConfig {
    /// Checks the settings hang together.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.timeout.is_zero() {
            return Err(ConfigError::ZeroTimeout);
        }
        if self.concurrency == 0 {
            return Err(ConfigError::ZeroConcurrency);
        }
        if self.batch == 0 {
            return Err(ConfigError::ZeroBatch);
        }
        if self.lease > MAX_LEASE {
            return Err(ConfigError::LeaseTooLong(self.lease));
        }
        if self.lease < self.timeout + RECORD_MARGIN {
            return Err(ConfigError::TimeoutTooLong {
                timeout: self.timeout,
                max: self.lease.saturating_sub(RECORD_MARGIN),
                lease: self.lease,
            });
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
        assert!(matches!(
            short.validate(),
            Err(ConfigError::TimeoutTooLong { .. })
        ));
        let zero = CallbackConfig {
            concurrency: 0,
            ..CallbackConfig::default()
        };
        assert!(zero.validate().is_err());
    }

    #[test]
    fn leases_cover_the_timeout_and_stay_within_a_minute() {
        assert_eq!(lease_for(Duration::from_secs(10)), MIN_LEASE);
        assert_eq!(lease_for(MAX_TIMEOUT), MAX_LEASE);
        let longest = CallbackConfig {
            timeout: MAX_TIMEOUT,
            lease: lease_for(MAX_TIMEOUT),
            ..CallbackConfig::default()
        };
        assert_eq!(longest.validate(), Ok(()));
    }

    #[test]
    fn owner_ids_are_unique() {
        assert_ne!(owner_id(), owner_id());
        assert!(owner_id().contains(&std::process::id().to_string()));
    }
}
