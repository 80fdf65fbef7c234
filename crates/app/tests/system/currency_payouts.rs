//! Issue 43 at the bank: JPY and KWD payouts through `acquirer-sim` while it fails calls,
//! answers ambiguously, times out and loses or doubles its notifications. Each payout the
//! gateway approved was paid exactly once, in the currency's minor units (1500 yen, 1250
//! fils), and nothing else was paid; the balances and the ledger agree.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::sim::{add_provider, pan, recipient, route_to, wait_all_final, Sim};
use crate::helpers::{gateway, gateway_line, Api, GatewayProcess, Merchant, Serve, TestDb};

const PROVIDER: &str = "bank";
/// Payouts per currency.
const EACH: usize = 8;
/// Reads of an unknown outcome start 1 s after it; a read fails at most a few times in a row.
const SETTLE_DEADLINE: Duration = Duration::from_secs(300);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yen_and_dinar_payouts_are_paid_once_under_faults_on_sqlite() {
    yen_and_dinars(TestDb::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yen_and_dinar_payouts_are_paid_once_under_faults_on_postgres() {
    if let Some(db) = TestDb::on(crate::helpers::Backend::Postgres) {
        yen_and_dinars(db).await;
    }
}

/// (currency, amount as sent, its minor units, the merchant's starting balance, the balance
/// left after `n` approved payouts).
struct Case {
    currency: &'static str,
    amount: &'static str,
    minor: u64,
    start: &'static str,
    left: fn(u64) -> String,
}

const CASES: [Case; 2] = [
    Case {
        currency: "JPY",
        amount: "1500",
        minor: 1500,
        start: "100000",
        left: |n| (100_000 - 1500 * n).to_string(),
    },
    Case {
        currency: "KWD",
        amount: "1.250",
        minor: 1250,
        start: "100.000",
        left: |n| {
            let fils = 100_000 - 1250 * n;
            format!("{}.{:03}", fils / 1000, fils % 1000)
        },
    },
];

async fn yen_and_dinars(db: TestDb) {
    let sim = Sim::start(&[
        "--settle-ms",
        "200",
        "--fail-rate",
        "0.15",
        "--ambiguous-rate",
        "0.15",
        "--timeout-rate",
        "0.15",
        "--drop-notify-rate",
        "0.3",
        "--duplicate-notify-rate",
        "0.3",
        "--reorder-notify",
        "true",
        "--seed",
        "43",
    ]);
    add_provider(&db, PROVIDER, &sim, &["--timeout", "1s"]);
    let shop = Merchant::create(&db, "currency-bank-shop");
    for case in &CASES {
        route_to(
            &db,
            PROVIDER,
            "withdrawal",
            "card",
            &["--currency", case.currency],
        );
        gateway_line(
            &db,
            &format!(
                "balance credit --merchant {} --currency {} --amount {}",
                shop.id, case.currency, case.start
            ),
        )
        .expect_code(0);
    }
    let serve = Serve::default()
        .with("GATEWAY_RECONCILE_AFTER", "1s")
        .log("warn,app=info,domain=info");
    let gw = GatewayProcess::start("currency-bank", &db, &serve);
    let api = Api::new(&gw, &shop);

    // Every payout to its own card; a creation whose answer was lost is asked again with the
    // same merchantOperationId, which answers the same operation.
    let mut created: Vec<(usize, usize, String)> = Vec::new();
    for (c, case) in CASES.iter().enumerate() {
        for i in 0..EACH {
            let body = json!({"amount": case.amount, "currency": case.currency,
                              "paymentMethod": "card", "userId": "user-43",
                              "merchantOperationId": format!("{}-{i}", case.currency),
                              "requisites": {"pan": pan(c * 100 + i),
                                             "cardholderName": "IVAN IVANOV"}});
            let id = create(&api, &body).await;
            created.push((c, i, id));
        }
    }

    let reads: Vec<(String, String)> = created
        .iter()
        .map(|(_, _, id)| (id.clone(), format!("/api/v1/withdrawals/{id}")))
        .collect();
    let finals = wait_all_final(&api, &sim, &reads, SETTLE_DEADLINE).await;
    let stats = sim.stats().await;
    let by_reference = stats["byReference"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let by_recipient = stats["byRecipient"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut approved = [0u64; 2];
    for (c, i, id) in &created {
        let case = &CASES[*c];
        let data = &finals[id];
        assert_eq!(data["amount"], case.amount, "{data}");
        let paid = &by_recipient.get(&recipient(&pan(c * 100 + i)));
        let (payouts, amount) = paid.map_or((0, 0), |p| {
            (
                p["payouts"].as_u64().unwrap_or(0),
                p["amount"].as_u64().unwrap_or(0),
            )
        });
        let at_bank = by_reference
            .get(id)
            .map_or(0, |p| p["payouts"].as_u64().unwrap_or(0));
        if data["status"] == 1 {
            approved[*c] += 1;
            assert_eq!(
                (payouts, amount, at_bank),
                (1, case.minor, 1),
                "{id} approved: paid once, in minor units; {stats}"
            );
        } else {
            assert_eq!(
                (payouts, at_bank),
                (0, 0),
                "{id} declined, never paid: {data}\n{stats}"
            );
        }
    }
    assert!(
        approved.iter().all(|n| *n > 0),
        "some payouts of each currency went through: {approved:?}"
    );
    for (c, case) in CASES.iter().enumerate() {
        let (available, held) = balance_in(&api, case.currency).await;
        let zero = if case.currency == "JPY" { "0" } else { "0.000" };
        assert_eq!(
            (available, held),
            ((case.left)(approved[c]), zero.to_string()),
            "{} after {} approved",
            case.currency,
            approved[c]
        );
    }
    gateway(&db, &["ledger", "verify"]).expect_code(0);
}

/// Creates a payout, asking again while the gateway cannot answer; its operation id.
async fn create(api: &Api, body: &Value) -> String {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some((status, answer)) = api.try_post("/api/v1/withdrawals", body).await {
            if status == 201 || status == 200 {
                return answer["data"]["operationId"]
                    .as_str()
                    .expect("an operation id")
                    .to_string();
            }
            assert!(status >= 500, "the payout was refused: {status} {answer}");
        }
        assert!(Instant::now() < until, "no answer for {body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn balance_in(api: &Api, code: &str) -> (String, String) {
    let answer = api.get("/api/v1/balance").await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let balances = answer.body["data"]["balances"].as_array().cloned();
    let found = balances
        .unwrap_or_default()
        .into_iter()
        .find(|b| b["currency"] == code)
        .unwrap_or_else(|| panic!("no {code} balance: {}", answer.body));
    let field = |name: &str| found[name].as_str().unwrap_or_default().to_string();
    (field("available"), field("held"))
}
