//! Issue 7: operator changes made with the CLI while a gateway runs are seen by it
//! (docs/operations.md: route changes within 5 seconds; disabled merchants are refused).

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::helpers::{
    deposit, gateway, gateway_line, Api, GatewayProcess, Merchant, Serve, TestDb,
};

const DEADLINE: Duration = Duration::from_secs(60);

/// Sends fresh deposits until `done` accepts an answer; returns how long that took.
async fn until_answer(api: &Api, tag: &str, done: impl Fn(u16, &Value) -> bool) -> Duration {
    let started = Instant::now();
    for i in 0.. {
        let body = deposit("card", "100.00", &format!("{tag}-{i}"), None);
        let answer = api.create_deposit(&body).await;
        if done(answer.status, &answer.body) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < DEADLINE,
            "{tag}: still answered {} {} after {DEADLINE:?}",
            answer.status,
            answer.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    unreachable!("the loop returns or fails")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_gateway_sees_route_and_merchant_changes() {
    let db = TestDb::sqlite();
    let shop = Merchant::create(&db, "live-shop");
    let mut gw = GatewayProcess::start("a", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let first = deposit("card", "100.00", "before", None);
    let first = api.create_deposit(&first).await;
    assert_eq!(first.body["data"]["status"], 3, "{}", first.body);
    assert!(first.body["data"]["redirectUrl"].is_string());

    let routes = gateway(&db, &["route", "list", "--json"]).json();
    let card = routes
        .as_array()
        .and_then(|all| {
            all.iter()
                .find(|r| r["direction"] == "deposit" && r["method"] == "card")
        })
        .and_then(|r| r["id"].as_i64())
        .expect("the default card deposit route");
    gateway(&db, &["route", "disable", &card.to_string()]).expect_code(0);
    let lag = until_answer(&api, "disabled", |status, body| {
        status == 422 && body["errorCode"] == "NoRouteFound"
    })
    .await;
    eprintln!("a disabled route was refused after {lag:?} (documented: within 5 s)");

    gateway_line(
        &db,
        "route add --direction deposit --method card --flow requisites",
    )
    .expect_code(0);
    let lag = until_answer(&api, "added", |status, body| {
        status == 200 && body["data"]["requisites"]["cardNumber"].is_string()
    })
    .await;
    eprintln!("an added route was used after {lag:?} (documented: within 5 s)");

    gateway(&db, &["merchant", "disable", &shop.id]).expect_code(0);
    let lag = until_answer(&api, "merchant-off", |status, body| {
        status == 401 && body["errorCode"] == "Unauthorized"
    })
    .await;
    eprintln!("a disabled merchant was refused after {lag:?}");
    gw.terminate();
}
