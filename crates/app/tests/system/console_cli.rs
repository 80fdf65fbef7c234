//! Issue 18: the console's accounts on the command line (`gateway operator ...`) and the audit
//! trail every changing command writes, run as the real binary on both backends.

use adapters_db::Database;
use domain::console::AuditRecord;
use domain::ports::ConsoleStore;
use serde_json::Value;

use crate::helpers::cli::with_stdin;
use crate::helpers::{gateway, on_sqlite_and_postgres, Merchant, TestDb};

on_sqlite_and_postgres!(async operators_and_audit: console_cli_on_sqlite, console_cli_on_postgres);

async fn operators_and_audit(db: TestDb) {
    accounts(&db);
    let audit = audit_of_changes(&db).await;
    // Nothing secret is ever written to the audit log.
    for record in &audit {
        let text = format!("{:?}", record.entry);
        assert!(!text.contains("$argon2"), "{text}");
        assert!(!text.to_lowercase().contains("secret\":\""), "{text}");
    }
}

fn accounts(db: &TestDb) {
    let made = gateway(
        db,
        &[
            "operator", "create", "--name", "Alice", "--role", "operator", "--json",
        ],
    );
    made.expect_code(0);
    let json = made.json();
    assert_eq!(
        json["name"], "alice",
        "names are folded to lower case: {made}"
    );
    assert_eq!(json["role"], "operator");
    let password = json["password"].as_str().expect("a generated password");
    assert_eq!(password.chars().count(), 20, "{made}");

    // The name is taken (in any case): exit 4.
    gateway(db, &["operator", "create", "--name", "ALICE"]).expect_code(4);
    // Bad values: exit 2, naming the flag.
    let role = gateway(
        db,
        &["operator", "create", "--name", "bob", "--role", "root"],
    );
    role.expect_code(2);
    assert!(role.stderr.contains("--role"), "{role}");
    gateway(db, &["operator", "create", "--name", "b b"]).expect_code(2);

    // A password from stdin is checked, and never printed.
    let short = with_stdin(
        db,
        &["operator", "create", "--name", "carol", "--password-stdin"],
        "short\n",
    );
    short.expect_code(2);
    let chosen = with_stdin(
        db,
        &[
            "operator",
            "create",
            "--name",
            "carol",
            "--role",
            "admin",
            "--password-stdin",
        ],
        "a long enough password\n",
    );
    chosen.expect_code(0);
    assert!(
        !chosen.stdout.contains("a long enough password"),
        "{chosen}"
    );

    let list = gateway(db, &["operator", "list", "--json"]);
    list.expect_code(0);
    assert!(!list.stdout.contains("argon2"), "{list}");
    let rows = list.json();
    let names: Vec<(&str, &str, bool)> = rows
        .as_array()
        .expect("an array")
        .iter()
        .map(|r| {
            (
                r["name"].as_str().expect("name"),
                r["role"].as_str().expect("role"),
                r["enabled"].as_bool().expect("enabled"),
            )
        })
        .collect();
    assert_eq!(
        names,
        vec![("alice", "operator", true), ("carol", "admin", true)]
    );

    // A new password from stdin, never printed; refusals write nothing.
    let set = |name: &str, input: &str| {
        with_stdin(
            db,
            &["operator", "set-password", name, "--password-stdin"],
            input,
        )
    };
    let changed = set("Carol", "another long password\n");
    changed.expect_code(0);
    assert!(
        !changed.stdout.contains("another long password"),
        "{changed}"
    );
    set("nobody", "another long password\n").expect_code(3);
    set("carol", "short\n").expect_code(2);
    set("b b", "another long password\n").expect_code(2);
    with_stdin(
        db,
        &["operator", "set-password", "carol"],
        "another long password\n",
    )
    .expect_code(2);

    gateway(db, &["operator", "disable", "alice"]).expect_code(0);
    gateway(db, &["operator", "disable", "nobody"]).expect_code(3);
    // A new password does not enable a disabled account.
    set("alice", "a password for alice\n").expect_code(0);
    let list = gateway(db, &["operator", "list", "--json"]).json();
    assert_eq!(list[0]["enabled"], false);
}

/// Changes made on the command line, each found in the audit log with its actor, target and
/// before/after; reads change nothing and write nothing.
async fn audit_of_changes(db: &TestDb) -> Vec<AuditRecord> {
    let shop = Merchant::create(db, "audited-shop");
    let credit = gateway(
        db,
        &[
            "balance",
            "credit",
            "--merchant",
            &shop.id,
            "--amount",
            "100.00",
            "--reason",
            "opening float",
        ],
    );
    credit.expect_code(0);
    let debit = |amount| {
        let args = [
            "balance",
            "debit",
            "--merchant",
            &shop.id,
            "--amount",
            amount,
        ];
        gateway(db, &args)
    };
    debit("30.00").expect_code(0);
    // A refused debit changes nothing and is not audited.
    debit("1000.00").expect_code(4);
    gateway(db, &["merchant", "disable", &shop.id]).expect_code(0);
    gateway(db, &["route", "set-priority", "1", "7"]).expect_code(0);
    let before_reads = entries(db).await.len();
    gateway(db, &["merchant", "list"]).expect_code(0);
    gateway(db, &["route", "list"]).expect_code(0);
    gateway(db, &["operator", "list"]).expect_code(0);
    assert_eq!(
        entries(db).await.len(),
        before_reads,
        "reads are not audited"
    );

    gateway(db, &["ledger", "verify"]).expect_code(0);
    let store = database(db).await;
    let health = store
        .health(domain::Timestamp::from_millis(0))
        .await
        .expect("health");
    let check = health.last_check.expect("ledger verify records its run");
    assert_eq!(check.mismatches, 0);
    assert!(check.actor.as_str().starts_with("cli:"), "{check:?}");

    let log = entries(db).await;
    let actions: Vec<&str> = log.iter().rev().map(|r| r.entry.action.as_str()).collect();
    assert_eq!(
        actions,
        [
            "operator.create",
            "operator.create",
            "operator.password",
            "operator.disable",
            "operator.password",
            "merchant.create",
            "balance.credit",
            "balance.debit",
            "merchant.disable",
            "route.set_priority",
        ],
        "{log:#?}"
    );
    for record in &log {
        assert!(
            record.entry.actor.as_str().starts_with("cli:"),
            "{record:?}"
        );
    }
    let credit = log
        .iter()
        .find(|r| r.entry.action == "balance.credit")
        .expect("the credit");
    assert_eq!(credit.entry.target, shop.id);
    let before: Value = serde_json::from_str(credit.entry.before.as_deref().expect("before"))
        .expect("before is JSON");
    let after: Value =
        serde_json::from_str(credit.entry.after.as_deref().expect("after")).expect("after is JSON");
    assert_eq!(before["available"], "0.00", "{before}");
    assert_eq!(after["available"], "100.00", "{after}");
    assert_eq!(after["reason"], "opening float");
    let debit = log
        .iter()
        .find(|r| r.entry.action == "balance.debit")
        .expect("the debit");
    let after: Value =
        serde_json::from_str(debit.entry.after.as_deref().expect("after")).expect("after is JSON");
    assert_eq!(
        after["reason"], "manual",
        "no --reason is recorded as manual"
    );
    let priority = log
        .iter()
        .find(|r| r.entry.action == "route.set_priority")
        .expect("the priority change");
    let after: Value = serde_json::from_str(priority.entry.after.as_deref().expect("after"))
        .expect("after is JSON");
    assert_eq!(after["priority"], 7);
    log
}

async fn database(db: &TestDb) -> Database {
    Database::connect(&db.url).expect("the test database")
}

async fn entries(db: &TestDb) -> Vec<AuditRecord> {
    database(db)
        .await
        .audit_log(None, 100)
        .await
        .expect("the audit log")
}
