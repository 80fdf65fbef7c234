//! Issue 5: callbacks end to end — a real `gateway serve`, a merchant made with the CLI,
//! operations created over the signed API and finished by the sandbox, and a real receiver.

use serde_json::Value;

use crate::helpers::{
    assert_signed_callback, card_payout, deposit, gateway, on_sqlite_and_postgres, wait_until, Api,
    CallbackReceiver, GatewayProcess, Merchant, Sandbox, Serve, TestDb, DEADLINE,
};

on_sqlite_and_postgres!(
    async end_to_end:
    callbacks_end_to_end_on_sqlite,
    callbacks_end_to_end_on_postgres
);

/// Creates an operation and checks the creation answer's status.
async fn create(api: &Api, path: &str, body: Value, status: i64) -> String {
    let answer = api.post(path, &body).await;
    let id = answer.operation_id();
    assert_eq!(answer.body["data"]["status"], status, "{}", answer.body);
    id
}

/// Creates a waiting deposit (status 3) and has the sandbox finish it with `status`.
async fn finished_deposit(api: &Api, sandbox: &mut Sandbox, body: Value, status: u8) -> String {
    let id = create(api, "/api/v1/deposits", body, 3).await;
    sandbox.complete(&id, status).await;
    id
}

async fn end_to_end(db: TestDb) {
    let shop = Merchant::funded(&db, "callback-shop", "1000.00");
    let receiver = CallbackReceiver::start();
    receiver.fail_first_on("/flaky");
    receiver.set_status("/down", 503);
    let mut gw = GatewayProcess::start("a", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let mut sandbox = Sandbox::new(&gw, &db).await;
    let cb = receiver.url("/cb");
    let cb = Some(cb.as_str());
    let deposits = "/api/v1/deposits";
    let payouts = "/api/v1/withdrawals";

    // No callbackUrl: finished, but nothing is queued.
    let body = deposit("card", "10.00", "silent", None);
    let silent = finished_deposit(&api, &mut sandbox, body, 1).await;

    let body = deposit("card", "100.00", "dep-ok", cb);
    let approved = finished_deposit(&api, &mut sandbox, body, 1).await;
    // A final status never changes again, and a refused change sends nothing.
    let again = sandbox.post_complete(&approved, 2).await;
    assert_eq!(again.status, 409, "{}", again.body);
    assert_eq!(again.body["errorCode"], "InvalidState");
    let body = deposit("bank_a_pay", "150.00", "dep-no", cb);
    let declined = finished_deposit(&api, &mut sandbox, body, 2).await;
    // The sandbox declines an amount ending in 05 at creation; that is final too.
    let at_creation = create(&api, deposits, deposit("sbp", "100.05", "dep-05", cb), 2).await;
    let paid = card_payout("200.00", "4242424242424242", "wd-ok", cb);
    let paid = create(&api, payouts, paid, 3).await;
    let refused = card_payout("50.00", "4000000000000002", "wd-no", cb);
    let refused = create(&api, payouts, refused, 3).await;
    let body = deposit("card", "300.00", "dep-flaky", Some(&receiver.url("/flaky")));
    let flaky = finished_deposit(&api, &mut sandbox, body, 1).await;
    let down_url = receiver.url("/down");
    let body = deposit("card", "20.00", "dep-down", Some(&down_url));
    let down = finished_deposit(&api, &mut sandbox, body, 1).await;

    let once = [
        approved.clone(),
        declined.clone(),
        at_creation.clone(),
        paid.clone(),
        refused.clone(),
    ];
    let mut delivered = once.to_vec();
    delivered.push(flaky.clone());
    receiver.wait_delivered(&delivered, DEADLINE).await;

    // Each callback: right headers, signed with its direction's secret, the documented body.
    for c in receiver.captured() {
        assert_signed_callback(&c, &shop);
    }
    let body = |id: &str| receiver.for_operation(id)[0].json()["data"].clone();
    let expect = |id: &str, kind: &str, method: &str, amount: &str, status: i64, moid: &str| {
        let data = body(id);
        assert_eq!(data["operationId"], id, "{data}");
        assert_eq!(data["type"], kind, "{data}");
        assert_eq!(data["paymentMethod"], method, "{data}");
        assert_eq!(data["amount"], amount, "{data}");
        assert_eq!(data["currency"], "RUB", "{data}");
        assert_eq!(data["status"], status, "{data}");
        assert_eq!(data["userId"], "user-42", "{data}");
        assert_eq!(data["merchantOperationId"], moid, "{data}");
        data
    };
    expect(&approved, "deposit", "card", "100.00", 1, "dep-ok");
    let data = expect(&declined, "deposit", "bank_a_pay", "150.00", 2, "dep-no");
    assert_eq!(data["errorCode"], "ProviderDeclined");
    let data = expect(&at_creation, "deposit", "sbp", "100.05", 2, "dep-05");
    assert_eq!(data["errorCode"], "ProviderDeclined");
    expect(&paid, "withdrawal", "card", "200.00", 1, "wd-ok");
    let data = expect(&refused, "withdrawal", "card", "50.00", 2, "wd-no");
    assert_eq!(data["errorCode"], "CardDeclined");

    // The callback tells what a read of the operation tells.
    let read = api.get(&format!("/api/v1/deposits/{approved}")).await;
    assert_eq!(read.status, 200, "{}", read.body);
    let data = body(&approved);
    assert_eq!(read.body["data"]["status"], data["status"]);
    assert_eq!(read.body["data"]["updatedAt"], data["updatedAt"]);

    // A 500 is retried: attempt 2 carries the same body and signature.
    let tries = receiver.for_operation(&flaky);
    assert_eq!(tries.len(), 2, "{tries:?}");
    assert_eq!((tries[0].attempt(), tries[0].answered), (1, Some(500)));
    assert_eq!((tries[1].attempt(), tries[1].answered), (2, Some(200)));
    assert_eq!(tries[0].body, tries[1].body);
    assert_eq!(
        tries[0].header("x-signature"),
        tries[1].header("x-signature")
    );

    // A target that keeps failing: 1 + 3 attempts (a schedule of 3 delays), then failed.
    wait_until("the failing callback to be marked failed", DEADLINE, || {
        let failed = failed_callbacks(&db);
        let done = failed.iter().any(|c| c["operationId"] == down.as_str());
        async move { (done, format!("failed: {failed:?}")) }
    })
    .await;
    let failed = failed_callbacks(&db);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["attempts"], 4, "{failed:?}");
    assert_eq!(failed[0]["state"], "failed");
    assert_eq!(failed[0]["url"], down_url.as_str());
    let tries = receiver.for_operation(&down);
    let attempts: Vec<u32> = tries.iter().map(|c| c.attempt()).collect();
    assert_eq!(attempts, [1, 2, 3, 4]);
    assert!(tries.iter().all(|c| c.answered == Some(503)), "{tries:?}");

    // The operator sends it again once the merchant is back: attempt numbers go on.
    receiver.set_status("/down", 200);
    gateway(&db, &["callbacks", "retry", &down]).expect_code(0);
    receiver
        .wait_delivered(std::slice::from_ref(&down), DEADLINE)
        .await;
    let tries = receiver.for_operation(&down);
    assert_eq!(tries.len(), 5, "{tries:?}");
    assert_eq!(tries[4].attempt(), 5);
    gateway(&db, &["callbacks", "retry", &down]).expect_code(3);
    let unknown = uuid::Uuid::new_v4().to_string();
    gateway(&db, &["callbacks", "retry", &unknown]).expect_code(3);

    // Exactly one callback per final status (the receiver answered 200 at once).
    for id in &once {
        let got = receiver.for_operation(id);
        assert_eq!(got.len(), 1, "{id}: {got:?}");
        assert_eq!(got[0].attempt(), 1);
        assert_eq!(got[0].path, "/cb");
    }
    assert!(receiver.for_operation(&silent).is_empty());
    let queued = db.count(&format!(
        "SELECT count(*) AS n FROM callback_outbox WHERE operation_id = '{silent}'"
    ));
    assert_eq!(queued, 0, "an operation without callbackUrl queues nothing");
    let listed = gateway(&db, &["callbacks", "list", "--json"]);
    listed.expect_code(0);
    let listed = listed.json();
    let rows = listed.as_array().expect("an array");
    assert_eq!(rows.len(), 7, "{listed}");
    assert!(rows.iter().all(|r| r["state"] == "delivered"), "{listed}");

    // 1000 + 10 + 100 + 300 + 20 in, 200 paid out; nothing held.
    assert_eq!(
        api.balance().await,
        ("1230.00".to_string(), "0.00".to_string())
    );
    gw.terminate();
    gateway(&db, &["ledger", "verify"]).expect_code(0);
}

fn failed_callbacks(db: &TestDb) -> Vec<Value> {
    let out = gateway(db, &["callbacks", "list", "--failed", "--json"]);
    out.expect_code(0);
    out.json().as_array().cloned().unwrap_or_default()
}

/// Without `GATEWAY_CALLBACK_ALLOW_PRIVATE`, a callback to a loopback address is refused at
/// delivery: marked failed at once with the reason, never sent, never retried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callbacks_to_private_addresses_are_refused_by_default() {
    let db = TestDb::sqlite();
    let shop = Merchant::create(&db, "ssrf-shop");
    let receiver = CallbackReceiver::start();
    let serve = Serve::default().with("GATEWAY_CALLBACK_ALLOW_PRIVATE", "false");
    let mut gw = GatewayProcess::start("a", &db, &serve);
    let api = Api::new(&gw, &shop);
    let mut ids = Vec::new();
    for (i, url) in [
        receiver.url("/cb"),
        format!("http://localhost:{}/cb", receiver.port),
    ]
    .iter()
    .enumerate()
    {
        let body = deposit("card", "10.05", &format!("ssrf-{i}"), Some(url));
        ids.push(create(&api, "/api/v1/deposits", body, 2).await);
    }
    wait_until("both callbacks refused", DEADLINE, || {
        let failed = failed_callbacks(&db);
        async move { (failed.len() == 2, format!("failed: {failed:?}")) }
    })
    .await;
    for row in failed_callbacks(&db) {
        assert_eq!(row["attempts"], 1, "refused once, not retried: {row}");
        let reason = row["lastError"].as_str().unwrap_or("");
        assert!(reason.contains("refused"), "the reason is kept: {row}");
    }
    assert!(receiver.captured().is_empty(), "nothing reached the target");
    gw.terminate();
}
