//! Skips that are never silent.

use std::io::Write;

/// The variable naming a PostgreSQL server the tests may create databases on.
pub const PG_VAR: &str = "GATEWAY_TEST_DATABASE_URL";

/// Set to `1` (CI does) to make every PostgreSQL test fail rather than skip without a server.
pub const REQUIRE_POSTGRES_VAR: &str = "GATEWAY_REQUIRE_POSTGRES";

/// Whether the variable `name` is set to `1`.
pub fn required(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| value.trim() == "1")
}

/// Says on the terminal that part of the current test did not run.
///
/// libtest captures `eprintln!` of passing tests and never shows it; this writes to the
/// process's standard error directly, so the line appears in a plain `cargo test` run. The
/// test's name is the thread's (libtest names each test's thread after it).
pub fn report_skipped(what: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {test}: {what}");
}

/// The PostgreSQL server to create test databases on, from `GATEWAY_TEST_DATABASE_URL`.
///
/// Unset: `None` after a `SKIPPED` line, or a panic when `GATEWAY_REQUIRE_POSTGRES=1`.
pub fn postgres_admin_url() -> Option<String> {
    match std::env::var(PG_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            assert!(
                !required(REQUIRE_POSTGRES_VAR),
                "{REQUIRE_POSTGRES_VAR}=1 but {PG_VAR} is not set: this PostgreSQL test cannot run"
            );
            report_skipped(&format!(
                "the PostgreSQL part did not run ({PG_VAR} is not set)"
            ));
            None
        }
    }
}

/// The variable naming a PostgreSQL server that accepts TLS connections only, as
/// `scripts/pg-tls.sh start` prints it (with `sslrootcert`, without `sslmode`).
pub const TLS_PG_VAR: &str = "GATEWAY_TEST_TLS_DATABASE_URL";

/// The TLS-only PostgreSQL server of [`TLS_PG_VAR`]. Unset: `None` after a `SKIPPED` line,
/// or a panic when `GATEWAY_REQUIRE_POSTGRES=1` (CI starts that server too).
pub fn tls_postgres_url() -> Option<String> {
    match std::env::var(TLS_PG_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            assert!(
                !required(REQUIRE_POSTGRES_VAR),
                "{REQUIRE_POSTGRES_VAR}=1 but {TLS_PG_VAR} is not set (scripts/pg-tls.sh start \
                 prints it): this TLS test cannot run"
            );
            report_skipped(&format!(
                "the TLS part did not run ({TLS_PG_VAR} is not set; scripts/pg-tls.sh start)"
            ));
            None
        }
    }
}

/// The variable naming the pg_auto_failover cluster of `scripts/ha-cluster.sh start` (the
/// URL it prints, both nodes).
pub const HA_PG_VAR: &str = "GATEWAY_TEST_HA_DATABASE_URL";

/// The failover cluster of [`HA_PG_VAR`]. Unset: `None` after a `SKIPPED` line, or a panic
/// when `GATEWAY_REQUIRE_POSTGRES=1` (CI starts the cluster).
pub fn ha_postgres_url() -> Option<String> {
    match std::env::var(HA_PG_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            assert!(
                !required(REQUIRE_POSTGRES_VAR),
                "{REQUIRE_POSTGRES_VAR}=1 but {HA_PG_VAR} is not set (scripts/ha-cluster.sh \
                 start prints it): this failover test cannot run"
            );
            report_skipped(&format!(
                "the failover part did not run ({HA_PG_VAR} is not set; scripts/ha-cluster.sh start)"
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_means_exactly_one() {
        assert!(!required("TESTKIT_SURELY_UNSET_VARIABLE"));
    }
}
