//! `gateway provider ...` and the acquirer side of `gateway route ...`: exit codes,
//! credentials that never come from the command line nor go back out.

use crate::helpers::cli::{command, run};
use crate::helpers::{gateway, gateway_line, TestDb};

const KEY: &str = "api-key-never-printed-123";
const SECRET: &str = "webhook-secret-never-printed-456";

/// `gateway provider add` of `name` at a loopback URL with credentials from the environment,
/// plus `extra` flags.
fn add(db: &TestDb, name: &str, extra: &[&str]) -> crate::helpers::cli::Output {
    run(command(db)
        .args([
            "provider",
            "add",
            "--name",
            name,
            "--url",
            "http://127.0.0.1:9100",
        ])
        .args(["--api-key-env", "T_KEY", "--webhook-secret-env", "T_SECRET"])
        .args(extra)
        .env("T_KEY", KEY)
        .env("T_SECRET", SECRET))
}

#[test]
fn providers_are_added_listed_and_changed_with_the_exit_codes_of_the_operations_guide() {
    let db = TestDb::sqlite();
    let added = add(&db, "bank", &["--timeout", "3s", "--json"]);
    added.expect_code(0);
    assert_eq!(added.json()["timeoutSeconds"], 3, "{added}");

    // Taken names, the built-in one included, exit 4; bad values exit 2.
    add(&db, "bank", &[]).expect_code(4);
    add(&db, "sandbox", &[]).expect_code(4);
    for bad in [
        vec!["--timeout", "56s"],
        vec!["--timeout", "soon"],
        vec!["--kind", "bank"],
    ] {
        add(&db, "other", &bad).expect_code(2);
    }
    add(&db, "Bad Name", &[]).expect_code(2);
    let remote = run(command(&db)
        .args([
            "provider",
            "add",
            "--name",
            "remote",
            "--url",
            "http://acq.example.com",
        ])
        .args(["--api-key-env", "T_KEY", "--webhook-secret-env", "T_SECRET"])
        .env("T_KEY", KEY)
        .env("T_SECRET", SECRET));
    remote.expect_code(2);
    assert!(remote.stderr.contains("--url"), "{remote}");

    // Literal credentials are refused, and never echoed.
    let literal = gateway(
        &db,
        &[
            "provider",
            "add",
            "--name",
            "lit",
            "--url",
            "http://127.0.0.1:9100",
            "--api-key",
            KEY,
        ],
    );
    literal.expect_code(2);
    assert!(
        !literal.stderr.contains(KEY) && !literal.stdout.contains(KEY),
        "{literal}"
    );
    let unset = run(command(&db)
        .args([
            "provider",
            "add",
            "--name",
            "nokeys",
            "--url",
            "http://127.0.0.1:9100",
        ])
        .args([
            "--api-key-env",
            "UNSET_VARIABLE_XYZ",
            "--webhook-secret-env",
            "T_SECRET",
        ])
        .env_remove("UNSET_VARIABLE_XYZ")
        .env("T_SECRET", SECRET));
    unset.expect_code(2);
    assert!(unset.stderr.contains("UNSET_VARIABLE_XYZ"), "{unset}");

    // Credentials from stdin.
    let mut stdin_add = command(&db);
    stdin_add
        .args([
            "provider",
            "add",
            "--name",
            "piped",
            "--url",
            "http://127.0.0.1:9101",
        ])
        .arg("--credentials-stdin")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = stdin_add.spawn().expect("spawn");
    {
        use std::io::Write;
        let mut pipe = child.stdin.take().expect("stdin");
        write!(
            pipe,
            r#"{{"apiKey": "{KEY}", "webhookSecret": "{SECRET}"}}"#
        )
        .expect("write");
    }
    let piped = child.wait_with_output().expect("wait");
    assert_eq!(piped.status.code(), Some(0), "{piped:?}");

    let list = gateway(&db, &["provider", "list", "--json"]);
    list.expect_code(0);
    let rows = list.json();
    let names: Vec<&str> = rows
        .as_array()
        .map(|rows| rows.iter().filter_map(|r| r["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["sandbox", "bank", "piped"], "{list}");
    let text = gateway(&db, &["provider", "list"]);
    for out in [&list, &text] {
        assert!(
            !out.stdout.contains(KEY) && !out.stdout.contains(SECRET),
            "{out}"
        );
    }

    gateway_line(&db, "provider disable bank").expect_code(0);
    let disabled = gateway(&db, &["provider", "list", "--json"]).json();
    assert_eq!(disabled[1]["enabled"], false, "{disabled}");
    gateway_line(&db, "provider enable bank").expect_code(0);
    gateway_line(&db, "provider enable nobody").expect_code(3);
    gateway_line(&db, "provider disable Not-A-Name").expect_code(2);
    let updated = gateway_line(&db, "provider update bank --timeout 9s --json");
    updated.expect_code(0);
    assert_eq!(updated.json()["timeoutSeconds"], 9, "{updated}");
    gateway_line(&db, "provider update nobody --timeout 9s").expect_code(3);
}

#[test]
fn acquirer_routes_need_a_known_provider_and_the_acquirers_flow() {
    let db = TestDb::sqlite();
    add(&db, "bank", &[]).expect_code(0);

    gateway_line(
        &db,
        "route add --direction deposit --method card --provider nobody",
    )
    .expect_code(3);
    gateway_line(
        &db,
        "route add --direction deposit --method card --provider bank --flow confirmation",
    )
    .expect_code(2);
    let added = gateway_line(
        &db,
        "route add --direction deposit --method card --provider bank --priority 200",
    );
    added.expect_code(0);
    // It names the routes it competes with, the one chosen first at the top.
    let lines: Vec<&str> = added.stdout.lines().collect();
    assert!(lines.len() >= 3, "{added}");
    assert!(lines[2].contains("provider bank"), "{added}");
    assert!(added.stdout.contains("provider sandbox"), "{added}");

    let id = gateway(&db, &["route", "list", "--json"])
        .json()
        .as_array()
        .and_then(|routes| routes.iter().find(|r| r["provider"] == "bank").cloned())
        .and_then(|r| r["id"].as_i64())
        .expect("the bank's route");
    let id = id.to_string();
    gateway(&db, &["route", "set-priority", &id, "-5"]).expect_code(0);
    gateway(&db, &["route", "disable", &id]).expect_code(0);
    gateway(&db, &["route", "enable", &id]).expect_code(0);
    let route = gateway(&db, &["route", "list", "--json"]).json();
    let ours = route
        .as_array()
        .and_then(|routes| routes.iter().find(|r| r["provider"] == "bank").cloned())
        .expect("the bank's route");
    assert_eq!(
        (ours["priority"].as_i64(), ours["enabled"].as_bool()),
        (Some(-5), Some(true))
    );
    gateway_line(&db, "route enable 99999").expect_code(3);
    gateway_line(&db, "route set-priority 99999 1").expect_code(3);
}
