//! Process reports: a serving process shows in `gateway provider list` with its circuit
//! breaker for every acquirer, its `/metrics` has `gateway_provider_circuit_open`, and a
//! clean stop takes it off the list.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::helpers::sim::{add_provider, route_to, Sim};
use crate::helpers::{
    card_payout, gateway, on_sqlite_and_postgres, Api, GatewayProcess, Merchant, Serve, TestDb,
};

/// Reports come every 5 s; the first one as the process starts serving.
const REPORTED_WITHIN: Duration = Duration::from_secs(15);

on_sqlite_and_postgres!(
    async reports_circuits:
    a_serving_process_reports_its_circuits_on_sqlite,
    a_serving_process_reports_its_circuits_on_postgres
);

async fn reports_circuits(db: TestDb) {
    let sim = Sim::start(&[]);
    add_provider(&db, "bank", &sim, &[]);
    route_to(&db, "bank", "withdrawal", "card", &[]);
    let shop = Merchant::funded(&db, "circuit-shop", "1000.00");
    let mut serving = GatewayProcess::start("a", &db, &Serve::default());

    // The process shows for the acquirer before calling it: closed, no failures.
    let circuit = wait_for_circuit(&db, &serving).await;
    assert_eq!(circuit["state"], "closed", "{circuit}");
    assert_eq!(circuit["failures"], 0, "{circuit}");
    assert_eq!(circuit["openUntil"], Value::Null, "{circuit}");
    assert_eq!(circuit["version"], env!("CARGO_PKG_VERSION"), "{circuit}");
    assert!(
        circuit["seenAt"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{circuit}"
    );
    let process = circuit["process"].as_str().unwrap_or_default().to_string();

    // A payout calls the acquirer through its circuit; the gauge shows it closed.
    let api = Api::new(&serving, &shop);
    let payout = card_payout("10.00", "4111111111111111", "circuit-1", None);
    let answer = api.create_withdrawal(&payout).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let metrics = wait_for_metric(
        &serving,
        r#"gateway_provider_circuit_open{provider="bank"} 0"#,
    )
    .await;
    assert!(
        metrics.contains("# TYPE gateway_provider_circuit_open gauge"),
        "{metrics}"
    );

    // The text list has a Circuits row for the process and the acquirer.
    let text = gateway(&db, &["provider", "list"]);
    text.expect_code(0);
    let row = text
        .stdout
        .lines()
        .find(|line| line.starts_with(&process))
        .unwrap_or_else(|| panic!("no Circuits row for {process}:\n{text}"));
    let columns: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(columns[3..6], ["bank", "closed", "0"], "{text}");
    assert!(text.stdout.contains("Circuits"), "{text}");

    // The sandbox has no circuit breaker; the list keeps its shape.
    let list = gateway(&db, &["provider", "list", "--json"]).json();
    assert_eq!(list[0]["name"], "sandbox", "{list}");
    assert_eq!(list[0]["circuits"], serde_json::json!([]), "{list}");
    assert!(list[1]["timeoutSeconds"].is_u64(), "{list}");

    // A clean stop deletes the process's report.
    serving.terminate();
    let after = gateway(&db, &["provider", "list", "--json"]).json();
    assert_eq!(after[1]["circuits"], serde_json::json!([]), "{after}");
    let text = gateway(&db, &["provider", "list"]);
    assert!(text.stdout.contains("no serving process seen"), "{text}");
}

/// Polls `gateway provider list --json` until `bank` has a circuit from `serving`; that
/// circuit.
async fn wait_for_circuit(db: &TestDb, serving: &GatewayProcess) -> Value {
    let until = Instant::now() + REPORTED_WITHIN;
    let pid = format!("-{}-", serving.pid());
    loop {
        let list = gateway(db, &["provider", "list", "--json"]);
        list.expect_code(0);
        let rows = list.json();
        let bank = rows
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["name"] == "bank"))
            .unwrap_or_else(|| panic!("no bank in the list:\n{list}"));
        let ours = bank["circuits"].as_array().and_then(|circuits| {
            circuits
                .iter()
                .find(|c| c["process"].as_str().is_some_and(|p| p.contains(&pid)))
                .cloned()
        });
        if let Some(circuit) = ours {
            return circuit;
        }
        assert!(
            Instant::now() < until,
            "no circuit of process {pid} within {REPORTED_WITHIN:?}:\n{list}\n{}",
            serving.log_text()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Polls `/metrics` of `serving` until it contains `line`; the whole text.
async fn wait_for_metric(serving: &GatewayProcess, line: &str) -> String {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let until = Instant::now() + REPORTED_WITHIN;
    loop {
        let metrics = client
            .get(serving.url("/metrics"))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("metrics text");
        if metrics.contains(line) {
            return metrics;
        }
        assert!(
            Instant::now() < until,
            "{line} not in /metrics within {REPORTED_WITHIN:?}:\n{metrics}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
