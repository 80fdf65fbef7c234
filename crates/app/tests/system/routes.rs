//! Issue 7: `gateway route list|add|disable` (docs/operations.md), run as the real binary.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::helpers::{gateway, gateway_line, on_sqlite_and_postgres, TestDb};

on_sqlite_and_postgres!(routes: routes_on_sqlite, routes_on_postgres);

fn route_list(db: &TestDb) -> Vec<Value> {
    let out = gateway(db, &["route", "list", "--json"]);
    out.expect_code(0);
    out.json().as_array().cloned().expect("a JSON array")
}

/// The default routes of a fresh database, then one added and disabled; bad ones refused.
fn routes(db: &TestDb) {
    let routes = route_list(db);
    let defaults: BTreeSet<(String, String, String)> = routes
        .iter()
        .map(|r| {
            assert_eq!(r["currency"], "RUB", "{r}");
            assert_eq!(r["min"], "0.01", "{r}");
            assert_eq!(r["max"], "10000000.00", "{r}");
            assert_eq!(r["provider"], "sandbox", "{r}");
            assert_eq!(r["enabled"], true, "{r}");
            let text = |key: &str| r[key].as_str().unwrap_or("").to_string();
            (text("direction"), text("method"), text("flow"))
        })
        .collect();
    let expected: BTreeSet<(String, String, String)> = [
        ("deposit", "card", "redirect"),
        ("deposit", "sbp", "redirect"),
        ("deposit", "sbp_qr", "qr"),
        ("deposit", "bank_a_pay", "redirect"),
        ("deposit", "bank_b_pay", "redirect"),
        ("deposit", "bank_c_pay", "redirect"),
        ("withdrawal", "card", "payout"),
        ("withdrawal", "sbp", "payout"),
    ]
    .into_iter()
    .map(|(d, m, f)| (d.to_string(), m.to_string(), f.to_string()))
    .collect();
    assert_eq!(routes.len(), 8, "{routes:?}");
    assert_eq!(defaults, expected);

    let added = gateway_line(
        db,
        "route add --direction deposit --method card --flow confirmation --min 1.00 --max 500.00 --priority 200 --lifetime 120 --json",
    );
    added.expect_code(0);
    let route = added.json();
    let id = route["id"].as_i64().expect("a route id");
    assert_eq!(route["flow"], "confirmation", "{added}");
    assert_eq!(route["priority"], 200);
    assert_eq!(route["lifetime"], 120);
    assert_eq!(route["min"], "1.00");
    assert_eq!(route["max"], "500.00");
    let routes = route_list(db);
    assert_eq!(routes.len(), 9);
    assert_eq!(find_route(&routes, id)["enabled"], true);

    let disabled = gateway(db, &["route", "disable", &id.to_string()]);
    disabled.expect_code(0);
    let routes = route_list(db);
    assert_eq!(find_route(&routes, id)["enabled"], false);
    assert_eq!(
        routes.iter().filter(|r| r["enabled"] == true).count(),
        8,
        "only the disabled route changed"
    );
    gateway(db, &["route", "disable", "9999"]).expect_code(3);

    for (direction, method, extra, named) in [
        ("deposit", "card", ["--flow", "teleport"], "--flow"),
        ("deposit", "cash", ["--priority", "1"], "--method"),
        ("sideways", "card", ["--priority", "1"], "--direction"),
        ("deposit", "card", ["--min", "5"], "--min"),
    ] {
        let mut args = vec!["route", "add", "--direction", direction, "--method", method];
        args.extend(extra);
        let bad = gateway(db, &args);
        bad.expect_code(2);
        assert!(bad.stderr.contains(named), "{args:?}: {bad}");
    }
    let upside_down = gateway_line(
        db,
        "route add --direction deposit --method card --min 10.00 --max 1.00",
    );
    assert_ne!(upside_down.code, 0, "{upside_down}");
    assert_eq!(route_list(db).len(), 9, "refused routes are not added");
    let text = gateway(db, &["route", "list"]);
    text.expect_code(0);
    assert!(text.stdout.contains("confirmation"), "{text}");
}

#[track_caller]
fn find_route(routes: &[Value], id: i64) -> &Value {
    routes
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no route {id} in {routes:?}"))
}
