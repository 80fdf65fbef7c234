//! Typed configuration of `gateway serve`, validated at start.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::time::Duration;

use adapters_db::MasterKey;
use domain::callback::RetrySchedule;

use crate::cli::ServeArgs;

/// A configuration value that cannot be used; the message names the variable and the accepted form.
#[derive(Debug, thiserror::Error)]
#[error("{variable} (--{flag}): invalid value {value:?}: expected {expected}")]
pub struct ConfigError {
    pub variable: &'static str,
    pub flag: &'static str,
    pub value: String,
    pub expected: &'static str,
}

/// Longest callback attempt: its lease (attempt + 5 s to record it) must end within 60 s, so a
/// dead process's claims come back within a minute.
pub use adapters_callback::MAX_TIMEOUT as MAX_CALLBACK_TIMEOUT;

/// Everything `gateway serve` needs, validated.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub database_url: String,
    /// `GATEWAY_DATABASE_READ_URL`: a PostgreSQL replica for the reads that may lag.
    pub database_read_url: Option<String>,
    pub bind: SocketAddr,
    pub public_url: String,
    pub demo: bool,
    pub callback_allow_private: bool,
    pub callback_schedule: RetrySchedule,
    pub callback_timeout: Duration,
    pub rate_limit: u32,
    pub sandbox_settle: Duration,
    /// Whether the built-in sandbox provider takes new operations and serves its pages and
    /// `/sandbox` paths (production sets `GATEWAY_SANDBOX=false`).
    pub sandbox: bool,
    /// How long a processing acquirer operation may stay quiet before the reconciler reads
    /// it (`GATEWAY_RECONCILE_AFTER`).
    pub reconcile_after: Duration,
    /// How long a creation may go on to further providers (`GATEWAY_ROUTING_BUDGET`).
    pub routing_budget: Duration,
    /// The API's HTTP worker threads (`GATEWAY_HTTP_WORKERS`); `None`: actix-web's default,
    /// one per core.
    pub http_workers: Option<NonZeroUsize>,
    /// Encrypts stored secrets (`GATEWAY_MASTER_KEY`); set by [`master_key`].
    pub master_key: Option<MasterKey>,
    /// Where the operator console is served (`GATEWAY_ADMIN`).
    pub admin: AdminListener,
    /// The console's time zone name (`GATEWAY_CONSOLE_TIMEZONE`), checked when the console is
    /// built.
    pub console_timezone: String,
}

/// Where the operator console is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminListener {
    Off,
    /// At `/admin` on the main listener.
    Main,
    /// At `/admin` on a listener of its own.
    Own(SocketAddr),
}

/// `GATEWAY_ADMIN`: `off`, `on` or `HOST:PORT`; `--demo` turns `off` into `on`.
pub fn parse_admin(text: &str, demo: bool) -> Result<AdminListener, ConfigError> {
    let listener = match text.trim() {
        "off" | "false" | "0" => AdminListener::Off,
        "on" | "true" | "1" => AdminListener::Main,
        address => AdminListener::Own(address.parse().map_err(|_| ConfigError {
            variable: "GATEWAY_ADMIN",
            flag: "admin",
            value: text.to_string(),
            expected: "off, on, or HOST:PORT with an IP address for a listener of its own, e.g. 127.0.0.1:8081",
        })?),
    };
    Ok(if demo && listener == AdminListener::Off {
        AdminListener::Main
    } else {
        listener
    })
}

/// `GATEWAY_MASTER_KEY`, if set: 64 hex characters. The error names the variable, never the
/// value.
pub fn master_key(text: Option<&str>) -> anyhow::Result<Option<MasterKey>> {
    text.map(|text| MasterKey::parse(text).map_err(anyhow::Error::from))
        .transpose()
}

impl ServeConfig {
    /// Validates flags and environment (already merged by clap) into a config.
    pub fn from_args(database_url: &str, args: &ServeArgs) -> Result<Self, ConfigError> {
        let bind: SocketAddr = args.bind.parse().map_err(|_| ConfigError {
            variable: "GATEWAY_BIND",
            flag: "bind",
            value: args.bind.clone(),
            expected: "HOST:PORT with an IP address, e.g. 127.0.0.1:8080",
        })?;
        let public_url = match &args.public_url {
            Some(url) => parse_public_url(url)?,
            None => format!("http://{bind}"),
        };
        let callback_schedule = match &args.callback_schedule {
            Some(text) => parse_schedule(text)?,
            None => RetrySchedule::standard(),
        };
        Ok(Self {
            database_url: parse_database_url(database_url)?,
            database_read_url: match &args.database_read_url {
                Some(url) if !url.trim().is_empty() => Some(parse_read_url(url)?),
                _ => None,
            },
            bind,
            public_url,
            demo: args.demo,
            callback_allow_private: parse_bool(
                &args.callback_allow_private,
                false,
                "GATEWAY_CALLBACK_ALLOW_PRIVATE",
                "callback-allow-private",
            )?,
            callback_schedule,
            callback_timeout: parse_duration(&args.callback_timeout)
                .filter(|d| !d.is_zero() && *d <= MAX_CALLBACK_TIMEOUT)
                .ok_or_else(|| ConfigError {
                    variable: "GATEWAY_CALLBACK_TIMEOUT",
                    flag: "callback-timeout",
                    value: args.callback_timeout.clone(),
                    expected: "a positive duration of at most 55s, such as 10s or 500ms",
                })?,
            rate_limit: args.rate_limit.trim().parse().map_err(|_| ConfigError {
                variable: "GATEWAY_RATE_LIMIT",
                flag: "rate-limit",
                value: args.rate_limit.clone(),
                expected: "a whole number of requests per second per merchant, 0 for no limit",
            })?,
            sandbox_settle: args
                .sandbox_settle_ms
                .trim()
                .parse::<u64>()
                .map(Duration::from_millis)
                .map_err(|_| ConfigError {
                    variable: "GATEWAY_SANDBOX_SETTLE_MS",
                    flag: "sandbox-settle-ms",
                    value: args.sandbox_settle_ms.clone(),
                    expected: "a whole number of milliseconds, e.g. 2000",
                })?,
            sandbox: parse_bool(&args.sandbox, true, "GATEWAY_SANDBOX", "sandbox")?,
            reconcile_after: parse_duration(&args.reconcile_after)
                .filter(|d| *d >= Duration::from_secs(1) && *d <= Duration::from_secs(300))
                .ok_or_else(|| ConfigError {
                    variable: "GATEWAY_RECONCILE_AFTER",
                    flag: "reconcile-after",
                    value: args.reconcile_after.clone(),
                    expected: "a duration from 1s to 5m, such as 60s",
                })?,
            routing_budget: parse_duration(&args.routing_budget)
                .filter(|d| *d >= Duration::from_secs(1) && *d <= Duration::from_secs(300))
                .ok_or_else(|| ConfigError {
                    variable: "GATEWAY_ROUTING_BUDGET",
                    flag: "routing-budget",
                    value: args.routing_budget.clone(),
                    expected: "a duration from 1s to 5m, such as 15s",
                })?,
            // Empty (a variable set to nothing) is the default, as for the boolean settings.
            http_workers: match args.http_workers.as_deref() {
                Some(text) if !text.trim().is_empty() => Some(parse_workers(text)?),
                _ => None,
            },
            master_key: None,
            admin: parse_admin(&args.admin, args.demo)?,
            console_timezone: args.console_timezone.trim().to_string(),
        })
    }
}

/// `GATEWAY_HTTP_WORKERS`: a whole number of threads from 1 to [`MAX_HTTP_WORKERS`].
fn parse_workers(text: &str) -> Result<NonZeroUsize, ConfigError> {
    text.trim()
        .parse::<NonZeroUsize>()
        .ok()
        .filter(|n| n.get() <= MAX_HTTP_WORKERS)
        .ok_or_else(|| ConfigError {
            variable: "GATEWAY_HTTP_WORKERS",
            flag: "http-workers",
            value: text.to_string(),
            expected: "a whole number of threads from 1 to 256",
        })
}

/// The most HTTP worker threads `GATEWAY_HTTP_WORKERS` may ask for.
pub const MAX_HTTP_WORKERS: usize = 256;

/// Checks the database URL's form (`sqlite://PATH` or `postgres://...`).
/// `GATEWAY_DATABASE_READ_URL`: a PostgreSQL URL (a replica; SQLite has none).
pub fn parse_read_url(url: &str) -> Result<String, ConfigError> {
    let url = url.trim();
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(url.to_string())
    } else {
        Err(ConfigError {
            variable: "GATEWAY_DATABASE_READ_URL",
            flag: "database-read-url",
            value: url.to_string(),
            expected: "a PostgreSQL replica's URL, postgres://USER@HOST:PORT/DB",
        })
    }
}

pub fn parse_database_url(url: &str) -> Result<String, ConfigError> {
    let ok = ["sqlite://", "postgres://", "postgresql://"]
        .iter()
        .any(|p| url.starts_with(p) && url.len() > p.len());
    if ok {
        Ok(url.to_string())
    } else {
        Err(ConfigError {
            variable: "GATEWAY_DATABASE_URL",
            flag: "database-url",
            value: url.to_string(),
            expected: "sqlite://PATH or postgres://USER@HOST:PORT/DATABASE",
        })
    }
}

fn parse_public_url(text: &str) -> Result<String, ConfigError> {
    match domain::HttpUrl::parse(text) {
        Ok(url) => Ok(url.as_str().trim_end_matches('/').to_string()),
        Err(_) => Err(ConfigError {
            variable: "GATEWAY_PUBLIC_URL",
            flag: "public-url",
            value: text.to_string(),
            expected: "an absolute http or https URL, e.g. https://pay.example.com",
        }),
    }
}

/// `true`/`false` (or `1`/`0`, `yes`/`no`); an empty value (a variable set to nothing) is
/// the default.
fn parse_bool(
    text: &str,
    default: bool,
    variable: &'static str,
    flag: &'static str,
) -> Result<bool, ConfigError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "" => Ok(default),
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(ConfigError {
            variable,
            flag,
            value: text.to_string(),
            expected: "true or false",
        }),
    }
}

/// Parses `500ms`, `10s`, `5m`, `2h`, `1d` (a bare number is seconds).
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().ok()?;
    let millis = match unit {
        "ms" => n,
        "" | "s" => n.checked_mul(1_000)?,
        "m" | "min" => n.checked_mul(60_000)?,
        "h" => n.checked_mul(3_600_000)?,
        "d" => n.checked_mul(86_400_000)?,
        _ => return None,
    };
    Some(Duration::from_millis(millis))
}

fn parse_schedule(text: &str) -> Result<RetrySchedule, ConfigError> {
    let delays: Option<Vec<Duration>> = text.split(',').map(parse_duration).collect();
    match delays {
        Some(delays) if !delays.is_empty() => Ok(RetrySchedule(delays)),
        _ => Err(ConfigError {
            variable: "GATEWAY_CALLBACK_SCHEDULE",
            flag: "callback-schedule",
            value: text.to_string(),
            expected: "a comma list of delays such as 10s,30s,1m,5m",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> ServeArgs {
        ServeArgs {
            demo: false,
            bind: "127.0.0.1:8080".into(),
            database_read_url: None,
            public_url: None,
            callback_allow_private: "false".into(),
            callback_schedule: None,
            callback_timeout: "10s".into(),
            rate_limit: "0".into(),
            sandbox_settle_ms: "2000".into(),
            sandbox: "true".into(),
            reconcile_after: "60s".into(),
            routing_budget: "15s".into(),
            http_workers: None,
            admin: "off".into(),
            console_timezone: "UTC".into(),
        }
    }

    #[test]
    fn defaults_follow_the_contract() {
        let config = ServeConfig::from_args("sqlite://gateway.db", &args()).expect("valid");
        assert_eq!(config.public_url, "http://127.0.0.1:8080");
        assert_eq!(config.callback_schedule, RetrySchedule::standard());
        assert_eq!(config.callback_timeout, Duration::from_secs(10));
        assert_eq!(config.rate_limit, 0);
        assert_eq!(config.sandbox_settle, Duration::from_millis(2000));
        assert!(!config.callback_allow_private);
        assert!(config.sandbox);
        assert_eq!(config.http_workers, None, "actix-web's default");
    }

    #[test]
    fn http_workers_are_a_whole_number_from_1_to_256() {
        let mut some = args();
        for (text, workers) in [(" 3 ", 3), ("1", 1), ("256", MAX_HTTP_WORKERS)] {
            some.http_workers = Some(text.into());
            let config = ServeConfig::from_args("sqlite://x.db", &some).expect(text);
            assert_eq!(config.http_workers.map(NonZeroUsize::get), Some(workers));
        }
        for bad in ["0", "257", "two", "-1"] {
            some.http_workers = Some(bad.into());
            let error = ServeConfig::from_args("sqlite://x.db", &some)
                .expect_err(bad)
                .to_string();
            assert!(error.contains("GATEWAY_HTTP_WORKERS"), "{bad}: {error}");
            let range = format!("1 to {MAX_HTTP_WORKERS}");
            assert!(error.contains(&range), "{bad}: {error}");
        }
        some.http_workers = Some(" ".into());
        let config = ServeConfig::from_args("sqlite://x.db", &some).expect("valid");
        assert_eq!(config.http_workers, None, "empty is the default");
    }

    #[test]
    fn the_sandbox_can_be_turned_off_and_a_bad_value_names_its_variable() {
        let mut off = args();
        off.sandbox = "false".into();
        assert!(
            !ServeConfig::from_args("sqlite://x.db", &off)
                .expect("valid")
                .sandbox
        );
        off.sandbox = String::new();
        assert!(
            ServeConfig::from_args("sqlite://x.db", &off)
                .expect("valid")
                .sandbox,
            "an empty GATEWAY_SANDBOX is the default, on"
        );
        off.sandbox = "maybe".into();
        let error = ServeConfig::from_args("sqlite://x.db", &off)
            .expect_err("invalid")
            .to_string();
        assert!(error.contains("GATEWAY_SANDBOX"), "{error}");
    }

    #[test]
    fn durations_and_schedules_parse() {
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m"), Some(Duration::from_secs(60)));
        assert_eq!(parse_duration("2h"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_duration("10x"), None);
        let schedule = parse_schedule("1s,2s,5s").expect("valid");
        assert_eq!(schedule.0.len(), 3);
    }

    #[test]
    fn bad_values_name_the_variable() {
        let mut bad = args();
        bad.bind = "localhost".into();
        let error = ServeConfig::from_args("sqlite://x.db", &bad)
            .expect_err("invalid")
            .to_string();
        assert!(error.contains("GATEWAY_BIND"), "{error}");
        let mut bad = args();
        bad.callback_timeout = "56s".into();
        let error = ServeConfig::from_args("sqlite://x.db", &bad)
            .expect_err("invalid")
            .to_string();
        assert!(error.contains("GATEWAY_CALLBACK_TIMEOUT"), "{error}");
        let mut bad = args();
        bad.callback_schedule = Some("1s,soon".into());
        let error = ServeConfig::from_args("sqlite://x.db", &bad)
            .expect_err("invalid")
            .to_string();
        assert!(error.contains("GATEWAY_CALLBACK_SCHEDULE"), "{error}");
        let error = ServeConfig::from_args("mysql://x", &args())
            .expect_err("invalid")
            .to_string();
        assert!(error.contains("GATEWAY_DATABASE_URL"), "{error}");
    }

    #[test]
    fn the_console_is_off_on_or_a_listener_of_its_own() {
        assert_eq!(
            parse_admin("off", false).expect("valid"),
            AdminListener::Off
        );
        assert_eq!(
            parse_admin("on", false).expect("valid"),
            AdminListener::Main
        );
        assert_eq!(
            parse_admin("127.0.0.1:8081", false).expect("valid"),
            AdminListener::Own("127.0.0.1:8081".parse().expect("valid"))
        );
        let refused = parse_admin("localhost:8081", false).expect_err("refused");
        assert_eq!(refused.variable, "GATEWAY_ADMIN");
        assert!(parse_admin("yes please", false).is_err());
    }

    #[test]
    fn the_demo_turns_the_console_on_unless_it_has_a_listener() {
        assert_eq!(
            parse_admin("off", true).expect("valid"),
            AdminListener::Main
        );
        assert_eq!(
            parse_admin("127.0.0.1:9", true).expect("valid"),
            AdminListener::Own("127.0.0.1:9".parse().expect("valid"))
        );
    }

    #[test]
    fn a_read_url_must_name_postgresql() {
        let mut with_replica = args();
        with_replica.database_read_url = Some("postgres://ro@replica/gw".into());
        let config = ServeConfig::from_args("sqlite://g.db", &with_replica).expect("valid");
        assert_eq!(
            config.database_read_url.as_deref(),
            Some("postgres://ro@replica/gw")
        );
        with_replica.database_read_url = Some("sqlite://replica.db".into());
        let error = ServeConfig::from_args("sqlite://g.db", &with_replica)
            .expect_err("SQLite has no replica")
            .to_string();
        assert!(error.contains("GATEWAY_DATABASE_READ_URL"), "{error}");
        with_replica.database_read_url = Some(" ".into());
        let config = ServeConfig::from_args("sqlite://g.db", &with_replica).expect("valid");
        assert_eq!(config.database_read_url, None, "empty is none");
    }
}
