//! Hardening: `/pay/{id}/return` reads the acquirer at most once per operation per two
//! seconds, whatever the number of requests and of gateway processes on the database, and
//! answers 429 beyond ten requests a second per operation. The reads are counted where they
//! land: at `acquirer-sim`.

use std::time::{Duration, Instant};

use futures::future::join_all;

use crate::helpers::db::several_postgres_gateways;
use crate::helpers::sim::{add_provider, route_to, Sim};
use crate::helpers::{
    deposit, on_sqlite_and_postgres, Api, GatewayProcess, Merchant, Serve, TestDb,
};

const PROVIDER: &str = "bank";

/// The gateway's quiet reads would add to the count: they wait longer than any test here.
fn serve() -> Serve {
    Serve::default().with("GATEWAY_RECONCILE_AFTER", "5m")
}

/// Card deposits go to a simulator; a merchant to make them.
fn set_up(db: &TestDb) -> (Sim, Merchant) {
    let sim = Sim::start(&[]);
    add_provider(db, PROVIDER, &sim, &[]);
    route_to(db, PROVIDER, "deposit", "card", &[]);
    (sim, Merchant::create(db, "pages-shop"))
}

/// A card deposit at the simulator, still processing (its payer has not paid); its id.
async fn processing_deposit(api: &Api, moid: &str) -> String {
    let created = api
        .create_deposit(&deposit("card", "150.00", moid, None))
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    assert_eq!(created.body["data"]["status"], 3, "{}", created.body);
    created.operation_id()
}

/// How many reads of `reference` the simulator answered.
async fn reads_of(sim: &Sim, reference: &str) -> u64 {
    sim.stats().await["reads"]["byReference"][reference]
        .as_u64()
        .unwrap_or(0)
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// `GET /pay/{id}/return` as the acquirer's redirect leaves it; the status.
async fn back(client: &reqwest::Client, gateway: &str, id: &str) -> u16 {
    client
        .get(format!("{gateway}/pay/{id}/return?from=acquirer"))
        .send()
        .await
        .expect("the return page answers")
        .status()
        .as_u16()
}

/// The most reads one operation may cost over `window`: one, then one more per two seconds.
fn allowed(window: Duration) -> u64 {
    1 + window.as_secs() / 2
}

on_sqlite_and_postgres!(async a_burst_of_returns: a_burst_of_returns_on_sqlite, a_burst_of_returns_on_postgres);

/// 200 returns at once for one processing deposit: a handful of reads reach the acquirer, and
/// the requests beyond ten a second are refused with 429.
async fn a_burst_of_returns(db: TestDb) {
    let (sim, shop) = set_up(&db);
    let gateway = GatewayProcess::start("a", &db, &serve());
    let id = processing_deposit(&Api::new(&gateway, &shop), "burst-1").await;
    assert_eq!(reads_of(&sim, &id).await, 0, "creating is not a read");

    let client = client();
    let base = gateway.url("");
    let started = Instant::now();
    let statuses = join_all((0..200).map(|_| back(&client, &base, &id))).await;
    let window = started.elapsed();

    let went_on = statuses.iter().filter(|s| **s == 303).count();
    let limited = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!(went_on + limited, 200, "303 or 429 only: {statuses:?}");
    assert!(limited > 0, "some are refused: {statuses:?}");
    assert!(went_on >= 10, "a burst of ten goes on: {statuses:?}");
    let reads = reads_of(&sim, &id).await;
    assert!(
        (1..=allowed(window)).contains(&reads),
        "{reads} reads in {window:?} for {went_on} requests that went on"
    );
    assert!(reads <= 4, "a handful: {reads}");
}

on_sqlite_and_postgres!(async two_processes_share_the_gap: two_gateways_read_once_per_gap_on_sqlite, two_gateways_read_once_per_gap_on_postgres);

/// Two gateways on one database, each asked for the return page of one deposit every 150 ms
/// for six seconds: their reads together stay within one per two seconds, and reads go on
/// once a gap has passed.
async fn two_processes_share_the_gap(db: TestDb) {
    let _turn = several_postgres_gateways().await;
    let (sim, shop) = set_up(&db);
    let a = GatewayProcess::start("a", &db, &serve());
    let b = GatewayProcess::start("b", &db, &serve());
    let id = processing_deposit(&Api::new(&a, &shop), "shared-1").await;

    let client = client();
    let (on_a, on_b) = (a.url(""), b.url(""));
    let started = Instant::now();
    let mut asked = Vec::new();
    while started.elapsed() < Duration::from_secs(6) {
        let (client, on_a, on_b, id) = (client.clone(), on_a.clone(), on_b.clone(), id.clone());
        asked.push(tokio::spawn(async move {
            futures::join!(back(&client, &on_a, &id), back(&client, &on_b, &id))
        }));
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    let window = started.elapsed();
    for answers in join_all(asked).await {
        let (from_a, from_b) = answers.expect("the requests' task");
        assert_eq!((from_a, from_b), (303, 303), "under ten a second each");
    }

    let reads = reads_of(&sim, &id).await;
    assert!(
        reads <= allowed(window),
        "{reads} reads from two processes in {window:?}"
    );
    assert!(reads >= 2, "reads go on once a gap has passed: {reads}");
}
