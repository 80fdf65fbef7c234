//! Issue 18: the operator console in a real browser (headless Chromium over WebDriver), on the
//! real binary: sign in, find an operation the test made, see its failed callback attempts,
//! retry the callback, see the audit entry, sign out.
//!
//! Needs `chromedriver` and `chromium` (see `testkit::browser`). With
//! `GATEWAY_SCREENSHOT_DIR=DIR` it saves `console-overview.png`, `console-operations.png` and
//! `console-operation.png` there (the screenshots in docs/).

use std::time::Duration;

use fantoccini::{Client, Locator};
use testkit::browser::{screenshot_dir, Driver};

use crate::helpers::console::create_operator;
use crate::helpers::{
    deposit, wait_until, Api, CallbackReceiver, GatewayProcess, Merchant, Sandbox, Serve, TestDb,
};

const PASSWORD: &str = "correct horse battery staple";
const DEADLINE: Duration = Duration::from_secs(30);

async fn path_of(client: &Client) -> String {
    client
        .current_url()
        .await
        .expect("the current URL")
        .path()
        .to_string()
}

async fn wait_for_path(client: &Client, path: &str) {
    let started = std::time::Instant::now();
    loop {
        let now = path_of(client).await;
        if now == path {
            return;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "never reached {path}; at {now}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Opens `url` (`what` names the page if it fails).
async fn open(client: &Client, url: &str, what: &str) {
    client.goto(url).await.expect(what);
}

async fn source(client: &Client) -> String {
    client.source().await.expect("the page source")
}

async fn click(client: &Client, css: &str) {
    client
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no {css}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("cannot click {css}: {e}"));
}

async fn type_into(client: &Client, css: &str, text: &str) {
    let field = client
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no {css}: {e}"));
    field.clear().await.expect("cleared");
    field.send_keys(text).await.expect("typed");
}

async fn screenshot(client: &Client, name: &str) {
    if let Some(dir) = screenshot_dir() {
        let png = client.screenshot().await.expect("a screenshot");
        std::fs::write(dir.join(name), png).expect("saved");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_finds_an_operation_and_retries_its_callback_in_chromium() {
    let Some(driver) = Driver::start_or_skip("the console's browser test") else {
        return;
    };
    let db = TestDb::sqlite();
    let shop = Merchant::funded(&db, "browser-shop", "5000.00");
    create_operator(&db, "ops", "operator", PASSWORD);
    let receiver = CallbackReceiver::start();
    receiver.set_status("/hook", 500);
    let gw = GatewayProcess::start("a", &db, &Serve::default().with("GATEWAY_ADMIN", "on"));
    let api = Api::new(&gw, &shop);
    let mut sandbox = Sandbox::new(&gw, &db).await;
    let hook = receiver.url("/hook");

    // Some traffic for the overview and the list, then the operation under test, whose
    // callback fails every attempt (the default test schedule: 1 + 3 attempts).
    for (i, method) in ["card", "sbp", "bank_a_pay", "card", "sbp"]
        .iter()
        .enumerate()
    {
        let body = deposit(method, &format!("{}.00", 100 + i), &format!("bg-{i}"), None);
        let id = api.create_deposit(&body).await.operation_id();
        sandbox.complete(&id, if i % 3 == 2 { 2 } else { 1 }).await;
    }
    let moid = "browser-order-1";
    let answer = api
        .create_deposit(&deposit("card", "123.45", moid, Some(&hook)))
        .await;
    let id = answer.operation_id();
    sandbox.complete(&id, 1).await;
    wait_until("the callback's four failed attempts", DEADLINE, || async {
        let n = receiver.finished("/hook");
        (n >= 4, format!("{n} attempts"))
    })
    .await;
    // Let the last failure be recorded (the callback is then failed, not pending).
    tokio::time::sleep(Duration::from_millis(500)).await;

    let client = driver.browser(1280, 900).await;
    let base = gw.url("");

    // Without a session: to the sign-in page.
    open(
        &client,
        &format!("{base}/admin/operations"),
        "the operations page",
    )
    .await;
    wait_for_path(&client, "/admin/login").await;
    type_into(&client, "input[name=name]", "ops").await;
    type_into(&client, "input[name=password]", PASSWORD).await;
    click(&client, "form[action='/admin/login'] button[type=submit]").await;
    wait_for_path(&client, "/admin").await;
    let overview = source(&client).await;
    assert!(overview.contains("<svg"), "the overview draws its charts");
    assert!(overview.contains("UTC"), "the zone is named");
    screenshot(&client, "console-overview.png").await;

    // Filter to the operation by its merchantOperationId and open it.
    open(&client, &format!("{base}/admin/operations"), "the list").await;
    type_into(&client, "input[name=q]", moid).await;
    click(&client, "form.filters button[type=submit]").await;
    let link = format!("a[href='/admin/operations/{id}']");
    let started = std::time::Instant::now();
    while client.find(Locator::Css(&link)).await.is_err() {
        assert!(started.elapsed() < DEADLINE, "{}", source(&client).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let listed = source(&client).await;
    assert_eq!(
        listed.matches("href=\"/admin/operations/").count(),
        1,
        "only the match"
    );
    // The list screenshot shows every operation.
    open(&client, &format!("{base}/admin/operations"), "the list").await;
    screenshot(&client, "console-operations.png").await;
    client.back().await.expect("back to the filtered list");
    click(&client, &link).await;
    wait_for_path(&client, &format!("/admin/operations/{id}")).await;
    let page = source(&client).await;
    assert!(page.contains(moid), "{page}");
    assert!(page.contains("123.45"));
    assert!(page.contains("500"), "the attempts' HTTP status: {page}");
    assert!(
        page.matches(" ms<").count() >= 4,
        "each attempt's latency: {page}"
    );
    screenshot(&client, "console-operation.png").await;

    // The merchant is back: retry the callback from the page.
    receiver.set_status("/hook", 200);
    click(&client, "form[action$='/callback-retry'] button").await;
    receiver
        .wait_delivered(std::slice::from_ref(&id), DEADLINE)
        .await;

    // The retry is in the audit log, by this operator.
    open(&client, &format!("{base}/admin/audit"), "the audit log").await;
    let audit = source(&client).await;
    assert!(audit.contains("callback.retry"), "{audit}");
    assert!(audit.contains("operator:ops"));
    assert!(audit.contains(&id));

    // Sign out: the session is gone.
    click(&client, "form[action='/admin/logout'] button").await;
    wait_for_path(&client, "/admin/login").await;
    open(&client, &format!("{base}/admin"), "the overview").await;
    wait_for_path(&client, "/admin/login").await;
    client.close().await.expect("the browser closes");
}
