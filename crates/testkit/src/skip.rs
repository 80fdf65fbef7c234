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

/// The server named by the variable `var`, which the tests of `part` need (`how` says
/// where to get it). Unset: `None` after a `SKIPPED` line, or a panic when
/// `GATEWAY_REQUIRE_POSTGRES=1` (CI sets every such variable).
fn server_url(var: &str, part: &str, how: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            assert!(
                !required(REQUIRE_POSTGRES_VAR),
                "{REQUIRE_POSTGRES_VAR}=1 but {var} is not set{how}: this {part} test cannot run"
            );
            report_skipped(&format!(
                "the {part} part did not run ({var} is not set{how})"
            ));
            None
        }
    }
}

/// The PostgreSQL server to create test databases on, from `GATEWAY_TEST_DATABASE_URL`.
///
/// Unset: `None` after a `SKIPPED` line, or a panic when `GATEWAY_REQUIRE_POSTGRES=1`.
pub fn postgres_admin_url() -> Option<String> {
    server_url(PG_VAR, "PostgreSQL", "")
}

/// The variable naming a PostgreSQL server that accepts TLS connections only, as
/// `scripts/pg-tls.sh start` prints it (with `sslrootcert`, without `sslmode`).
pub const TLS_PG_VAR: &str = "GATEWAY_TEST_TLS_DATABASE_URL";

/// The TLS-only PostgreSQL server of [`TLS_PG_VAR`]; unset, as [`postgres_admin_url`].
pub fn tls_postgres_url() -> Option<String> {
    server_url(TLS_PG_VAR, "TLS", "; scripts/pg-tls.sh start prints it")
}

/// The variable naming the pg_auto_failover cluster of `scripts/ha-cluster.sh start` (the
/// URL it prints, both nodes).
pub const HA_PG_VAR: &str = "GATEWAY_TEST_HA_DATABASE_URL";

/// The failover cluster of [`HA_PG_VAR`]; unset, as [`postgres_admin_url`].
pub fn ha_postgres_url() -> Option<String> {
    server_url(
        HA_PG_VAR,
        "failover",
        "; scripts/ha-cluster.sh start prints it",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_means_exactly_one() {
        assert!(!required("TESTKIT_SURELY_UNSET_VARIABLE"));
    }
}
