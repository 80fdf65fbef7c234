//! Issue 7: every sub-command has `--help`, and `gateway serve` refuses a bad setting with a
//! message naming its variable.

use std::time::Duration;

use crate::helpers::cli::{command, run_bounded};
use crate::helpers::process::{GatewayProcess, Serve};
use crate::helpers::{gateway, TestDb};

#[test]
fn every_subcommand_has_help() {
    let commands: &[&[&str]] = &[
        &[],
        &["serve"],
        &["migrate"],
        &["merchant"],
        &["merchant", "create"],
        &["merchant", "list"],
        &["merchant", "disable"],
        &["balance"],
        &["balance", "credit"],
        &["balance", "debit"],
        &["route"],
        &["route", "list"],
        &["route", "add"],
        &["route", "disable"],
        &["callbacks"],
        &["callbacks", "retry"],
        &["callbacks", "list"],
        &["ledger"],
        &["ledger", "verify"],
    ];
    // No database is touched: --help must work anywhere.
    let db = TestDb::sqlite();
    for args in commands {
        let mut all = args.to_vec();
        all.push("--help");
        let out = gateway(&db, &all);
        out.expect_code(0);
        assert!(out.stdout.contains("Usage:"), "{all:?}: {out}");
    }
    let out = gateway(&db, &["--version"]);
    out.expect_code(0);
    // Bad usage is clap's exit 2.
    gateway(&db, &["merchant", "frobnicate"]).expect_code(2);
    gateway(&db, &["balance", "credit", "--amount", "1.00"]).expect_code(2);
}

/// A refused start ends at once; this only bounds a start that wrongly goes on serving.
const REFUSAL_DEADLINE: Duration = Duration::from_secs(60);

#[test]
fn serve_refuses_bad_configuration_naming_the_variable() {
    let db = TestDb::sqlite();
    for (variable, value) in [
        ("GATEWAY_BIND", "localhost"),
        ("GATEWAY_BIND", "127.0.0.1:99999"),
        ("GATEWAY_PUBLIC_URL", "ftp://example.com"),
        ("GATEWAY_CALLBACK_ALLOW_PRIVATE", "maybe"),
        ("GATEWAY_CALLBACK_SCHEDULE", "1s,soon"),
        ("GATEWAY_CALLBACK_TIMEOUT", "0s"),
        // Longer than an attempt may take within the worker's 30 s lease.
        ("GATEWAY_CALLBACK_TIMEOUT", "60s"),
        ("GATEWAY_RATE_LIMIT", "-5"),
        ("GATEWAY_SANDBOX_SETTLE_MS", "2s"),
        ("GATEWAY_HTTP_WORKERS", "0"),
        ("GATEWAY_DATABASE_URL", "mysql://localhost/gateway"),
    ] {
        // Never the default port: a setting checked late would otherwise start a real server.
        let out = run_bounded(
            command(&db)
                .arg("serve")
                .env("GATEWAY_BIND", "127.0.0.1:0")
                .env(variable, value)
                .env("RUST_LOG", "off"),
            REFUSAL_DEADLINE,
        );
        assert_ne!(out.code, 0, "{variable}={value}: {out}");
        assert!(
            out.stderr.contains(variable),
            "{variable}={value}: the message does not name the variable: {out}"
        );
    }

    // An address already taken names GATEWAY_BIND too.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = taken.local_addr().expect("address").to_string();
    let out = run_bounded(
        command(&db)
            .arg("serve")
            .env("GATEWAY_BIND", &address)
            .env("RUST_LOG", "off"),
        REFUSAL_DEADLINE,
    );
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("GATEWAY_BIND"), "{out}");
    assert!(
        !out.stderr.contains("panicked"),
        "a refused start is an error, not a panic: {out}"
    );
}

/// `GATEWAY_HTTP_WORKERS` sets how many threads serve the API: counted among the process's
/// threads by the name actix-web gives them (`actix-server worker N`, cut by the kernel to
/// 15 characters). The gateway is ready when `start` returns, so every worker is up.
#[cfg(target_os = "linux")]
#[test]
fn serve_runs_the_configured_number_of_http_workers() {
    let db = TestDb::sqlite();
    for workers in [1, 3] {
        let gateway = GatewayProcess::start(
            "workers",
            &db,
            &Serve::default().with("GATEWAY_HTTP_WORKERS", &workers.to_string()),
        );
        let threads = std::fs::read_dir(format!("/proc/{}/task", gateway.pid()))
            .expect("the gateway's threads")
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
            .filter(|name| name.starts_with("actix-server wo"))
            .count();
        assert_eq!(threads, workers, "GATEWAY_HTTP_WORKERS={workers}");
    }
}
