//! A disabled merchant's callbacks are held, not failed: with the real binary, a callback
//! that comes due while its merchant is disabled waits (`held` in `gateway callbacks list`),
//! and `gateway merchant enable` sends it, exactly once.

use std::time::Duration;

use serde_json::Value;

use crate::helpers::{
    assert_signed_callback, deposit, gateway, on_sqlite_and_postgres, wait_until, Api,
    CallbackReceiver, GatewayProcess, Merchant, Sandbox, Serve, TestDb, DEADLINE,
};

on_sqlite_and_postgres!(
    async held_until_enabled:
    a_disabled_merchants_callback_is_held_then_sent_once_on_sqlite,
    a_disabled_merchants_callback_is_held_then_sent_once_on_postgres
);

/// `gateway callbacks list --json` with `flags`: every callback listed.
fn listed(db: &TestDb, flags: &[&str]) -> Vec<Value> {
    crate::helpers::cli::json_list(db, "callbacks", flags)
}

/// The callback of operation `id` as `gateway callbacks list --json` shows it.
fn callback_of(db: &TestDb, id: &str) -> Option<Value> {
    listed(db, &[])
        .into_iter()
        .find(|c| c["operationId"] == id && c["refundId"].is_null())
}

async fn held_until_enabled(db: TestDb) {
    let shop = Merchant::create(&db, "held-shop");
    let receiver = CallbackReceiver::start();
    let gw = GatewayProcess::start("a", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let mut sandbox = Sandbox::new(&gw, &db).await;
    let cb = receiver.url("/cb");
    let created = api
        .create_deposit(&deposit("card", "100.00", "held-1", Some(&cb)))
        .await;
    let id = created.operation_id();
    assert_eq!(created.body["data"]["status"], 3, "{}", created.body);

    gateway(&db, &["merchant", "disable", &shop.id]).expect_code(0);
    // The serving gateway sees the disable within its cache's life: its API refuses the
    // merchant from then on.
    api.wait_for_balance_status("the gateway to refuse the disabled merchant", DEADLINE, 401)
        .await;

    // The deposit completes: its callback is due now, with the merchant disabled.
    sandbox.complete(&id, 1).await;
    wait_until("the callback to be held", DEADLINE, || {
        let found = callback_of(&db, &id);
        async move {
            let state = found.as_ref().map(|c| c["state"].clone());
            (state == Some(Value::from("held")), format!("{found:?}"))
        }
    })
    .await;
    let held = listed(&db, &["--held"]);
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0]["operationId"], id.as_str());
    assert_eq!(
        held[0]["attempts"], 0,
        "holding is not an attempt: {held:?}"
    );
    assert!(held[0]["nextAttemptAt"].is_string(), "its due time is kept");
    assert!(listed(&db, &["--failed"]).is_empty(), "nothing failed");
    // An operator's retry does not send it while the merchant is disabled.
    let retry = gateway(&db, &["callbacks", "retry", &id]);
    retry.expect_code(4);
    assert!(retry.stderr.contains("held"), "{retry}");
    // Held, it stays held: nothing is sent however long it waits.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(receiver.for_operation(&id).is_empty(), "sent while held");
    assert_eq!(
        callback_of(&db, &id).map(|c| c["state"].clone()),
        Some(Value::from("held"))
    );

    let unknown = gateway(&db, &["merchant", "enable", "no-such-merchant"]);
    unknown.expect_code(3);
    assert!(unknown.stderr.contains("no-such-merchant"), "{unknown}");
    let enabled = gateway(&db, &["merchant", "enable", &shop.id]);
    enabled.expect_code(0);
    let merchants = gateway(&db, &["merchant", "list", "--json"]);
    merchants.expect_code(0);
    let listed_shop = merchants.json().as_array().and_then(|all| {
        all.iter()
            .find(|m| m["merchantId"] == shop.id.as_str())
            .cloned()
    });
    assert_eq!(
        listed_shop.map(|m| m["enabled"].clone()),
        Some(Value::Bool(true))
    );
    assert!(
        enabled.stdout.contains("1 held callback(s) released"),
        "{enabled}"
    );
    receiver
        .wait_delivered(std::slice::from_ref(&id), DEADLINE)
        .await;
    // A little longer: a second delivery would show by now.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let delivered = receiver.for_operation(&id);
    assert_eq!(delivered.len(), 1, "exactly once");
    assert_eq!(delivered[0].attempt(), 1, "its first attempt");
    assert_signed_callback(&delivered[0], &shop);
    let after = callback_of(&db, &id).expect("listed");
    assert_eq!(after["state"], "delivered", "{after}");
    assert_eq!(after["attempts"], 1, "{after}");
    assert!(listed(&db, &["--failed"]).is_empty(), "nothing failed");
    assert!(listed(&db, &["--held"]).is_empty(), "nothing held");
    assert_eq!(
        db.count(
            "SELECT COUNT(*) AS n FROM audit_log WHERE action = 'merchant.enable' \
             AND after_value LIKE '%\"heldCallbacksReleased\":1%'"
        ),
        1
    );
    // The merchant's API works again (within the serving gateway's cache's life).
    api.wait_for_balance_status("the gateway to take the merchant again", DEADLINE, 200)
        .await;
}
