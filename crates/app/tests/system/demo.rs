//! Issue 7: `gateway serve --demo` — a ready merchant with fixed secrets and a balance that
//! is credited once, however often the demo starts.

use app::demo::{DEMO_DEPOSIT_SECRET, DEMO_MERCHANT, DEMO_WITHDRAWAL_SECRET};

use crate::helpers::console::Visitor;
use crate::helpers::{deposit, gateway, Api, GatewayProcess, Merchant, Serve, TestDb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_merchant_is_created_once_and_works() {
    let db = TestDb::sqlite();
    let demo = Merchant {
        id: DEMO_MERCHANT.into(),
        deposit_secret: DEMO_DEPOSIT_SECRET.into(),
        withdrawal_secret: DEMO_WITHDRAWAL_SECRET.into(),
    };
    let serve = Serve::default();
    let mut earlier: Option<Visitor> = None;
    for round in ["a", "b"] {
        let mut gw = GatewayProcess::start_with_args(round, &db, &serve, &["--demo"]);
        // The banner shows the credentials and a request to paste.
        gw.wait_for_log(DEMO_DEPOSIT_SECRET, std::time::Duration::from_secs(60));
        assert!(
            gw.log_lines("curl -s http://127.0.0.1:") > 0,
            "{}",
            gw.log_text()
        );
        let api = Api::new(&gw, &demo);
        assert_eq!(
            api.balance().await,
            ("1000000.00".to_string(), "0.00".to_string()),
            "credited once (start {round})"
        );
        let body = deposit("card", "100.00", &format!("demo-{round}"), None);
        let answer = api.create_deposit(&body).await;
        assert_eq!(answer.body["data"]["status"], 3, "{}", answer.body);
        // Five currencies, each credited once, each with a card route: a yen deposit works.
        let balances = api.get("/api/v1/balance").await.body["data"]["balances"].clone();
        for (currency, available) in [
            ("USD", "1000000.00"),
            ("EUR", "1000000.00"),
            ("KZT", "1000000.00"),
            ("JPY", "1000000"),
        ] {
            let found = balances
                .as_array()
                .into_iter()
                .flatten()
                .find(|b| b["currency"] == currency);
            assert_eq!(
                found.map(|b| b["available"].clone()),
                Some(serde_json::json!(available)),
                "{currency} credited once (start {round}): {balances}"
            );
        }
        let mut yen = deposit("card", "1500", &format!("demo-yen-{round}"), None);
        yen["currency"] = serde_json::json!("JPY");
        let answer = api.create_deposit(&yen).await;
        assert_eq!(answer.body["data"]["amount"], "1500", "{}", answer.body);
        assert_eq!(answer.body["data"]["status"], 3, "{}", answer.body);
        // The new password of this start ended the sessions made with the last one.
        if let Some(before) = earlier.take() {
            let page = before.at(&gw.url("")).get("/admin").await;
            assert_eq!(page.status, 303, "start {round}: {page:?}");
            assert_eq!(page.location.as_deref(), Some("/admin/login"));
        }
        // The console is on, and the banner's password signs the demo operator in (an admin).
        let password = banner_password(&gw.log_text());
        let mut visitor = Visitor::new(&gw.url(""));
        let signed = visitor.sign_in("demo", &password).await;
        assert_eq!(signed.status, 303, "start {round}: {signed:?}");
        let merchants = visitor.get("/admin/merchants").await;
        assert!(
            merchants.body.contains("admin"),
            "the demo operator is an admin"
        );
        gw.terminate();
        earlier = Some(visitor);
    }
    let operators = gateway(&db, &["operator", "list", "--json"]).json();
    assert_eq!(
        operators.as_array().map(Vec::len),
        Some(1),
        "created once: {operators}"
    );
    let list = gateway(&db, &["merchant", "list", "--json"]);
    list.expect_code(0);
    let merchants = list.json();
    let merchants = merchants.as_array().expect("an array");
    assert_eq!(merchants.len(), 1, "{merchants:?}");
    assert_eq!(merchants[0]["merchantId"], DEMO_MERCHANT);
    gateway(&db, &["ledger", "verify"]).expect_code(0);
    let routes = gateway(&db, &["route", "list", "--json"]).json();
    for currency in ["USD", "EUR", "KZT", "JPY"] {
        let card = |direction: &str| {
            routes
                .as_array()
                .into_iter()
                .flatten()
                .filter(|r| {
                    r["currency"] == currency
                        && r["method"] == "card"
                        && r["direction"] == direction
                })
                .count()
        };
        assert_eq!(
            (card("deposit"), card("withdrawal")),
            (1, 1),
            "{currency}: added once: {routes}"
        );
    }
}

/// The console password the demo banner printed (`  password: ...`).
fn banner_password(log: &str) -> String {
    log.lines()
        .find_map(|line| line.trim().strip_prefix("password: "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no console password in the banner:\n{log}"))
        .to_string()
}

/// What the demo banner tells a newcomer to paste, and the Python example of the docs, work
/// as printed against `serve --demo`: each signs with version 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_banner_request_and_the_python_example_work_as_printed() {
    let db = TestDb::sqlite();
    let gw = GatewayProcess::start_with_args("demo", &db, &Serve::default(), &["--demo"]);
    gw.wait_for_log(DEMO_DEPOSIT_SECRET, std::time::Duration::from_secs(60));
    let log = gw.log_text();
    let snippet = banner_snippet(&log);
    assert!(snippet.contains("x-signature-version: 2"), "{snippet}");
    let ran = std::process::Command::new("bash")
        .args(["-c", &snippet])
        .output()
        .expect("bash runs");
    let out = String::from_utf8_lossy(&ran.stdout);
    let answer: serde_json::Value = serde_json::from_str(&out)
        .unwrap_or_else(|_| panic!("not JSON: {out}\n{}", String::from_utf8_lossy(&ran.stderr)));
    assert_eq!(answer["data"]["status"], 3, "{answer}");

    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/merchant.py");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let ran = std::process::Command::new("python3")
        .arg(example)
        .env("GATEWAY_URL", gw.url(""))
        .env("CALLBACK_PORT", port.to_string())
        .output()
        .expect("python3 runs (CPython 3 is part of the build machine)");
    let out = String::from_utf8_lossy(&ran.stdout);
    assert!(
        ran.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    for step in [
        "deposit: 200",
        "payout: 200",
        "read deposit: 200",
        "refund: 200",
        "read refund: 200",
        "cancel deposit: 200",
        "cancel payout: 200",
        "balance: 200",
    ] {
        assert!(out.contains(step), "{step:?} missing from:\n{out}");
    }
    assert!(out.contains(" valid"), "callbacks verified:\n{out}");
    assert!(!out.contains("INVALID") && !out.contains("STALE"), "{out}");
}

/// The shell lines between the banner's "Create a card deposit" and "Then open".
fn banner_snippet(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains("Create a card deposit"))
        .unwrap_or_else(|| panic!("no request in the banner:\n{log}"));
    lines[start + 1..]
        .iter()
        .take_while(|l| !l.contains("Then open"))
        .map(|l| crate::helpers::process::strip_ansi(l))
        .collect::<Vec<_>>()
        .join("\n")
}
