//! `GATEWAY_SANDBOX=false` on the real binary, as production runs it: the sandbox takes no new
//! operation (422 `NoRouteFound`), no `/sandbox` path or sandbox page answers but 404, and a
//! sandbox payout already processing still settles, while a waiting sandbox deposit takes no
//! more steps (it only expires).

use std::time::Duration;

use crate::helpers::{
    card_payout, deposit, gateway_line, on_sqlite_and_postgres, wait_until, Api, GatewayProcess,
    Merchant, Serve, TestDb,
};

const DEADLINE: Duration = Duration::from_secs(30);

on_sqlite_and_postgres!(
    async sandbox_off:
    without_the_sandbox_nothing_new_starts_and_what_was_started_finishes_on_sqlite,
    without_the_sandbox_nothing_new_starts_and_what_was_started_finishes_on_postgres
);

async fn sandbox_off(db: TestDb) {
    let shop = Merchant::funded(&db, "production-shop", "100.00");
    // Card deposits of exactly 7.00 ask for a confirmation code (the sandbox's is 123456).
    gateway_line(
        &db,
        "route add --direction deposit --method card --flow confirmation --priority 200 --min 7.00 --max 7.00",
    )
    .expect_code(0);
    let with_sandbox = Serve::default().with("GATEWAY_SANDBOX_SETTLE_MS", "3000");
    let mut before = GatewayProcess::start("with-sandbox", &db, &with_sandbox);
    let api = Api::new(&before, &shop);
    let payout = card_payout("10.00", "4242424242424242", "payout-1", None);
    let payout = api.create_withdrawal(&payout).await.operation_id();
    let waiting = deposit("card", "5.00", "deposit-1", None);
    let waiting = api.create_deposit(&waiting).await.operation_id();
    let confirming = deposit("card", "7.00", "deposit-3", None);
    let confirming = api.create_deposit(&confirming).await;
    assert_eq!(
        confirming.body["data"]["confirmRequired"], true,
        "waits for a code: {}",
        confirming.body
    );
    let confirming = confirming.operation_id();
    before.terminate();

    let production = with_sandbox.with("GATEWAY_SANDBOX", "false");
    let after = GatewayProcess::start("without-sandbox", &db, &production);
    let api = Api::new(&after, &shop);
    for (path, body) in [
        (
            "/api/v1/deposits",
            deposit("card", "5.00", "deposit-2", None),
        ),
        (
            "/api/v1/withdrawals",
            card_payout("1.00", "4242424242424242", "payout-2", None),
        ),
    ] {
        let answer = api.post(path, &body).await;
        assert_eq!(answer.status, 422, "{path}: {}", answer.body);
        assert_eq!(answer.body["errorCode"], "NoRouteFound", "{}", answer.body);
    }

    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a client");
    let complete = client
        .post(after.url(&format!("/sandbox/operations/{waiting}/complete")))
        .header("content-type", "application/json")
        .body(r#"{"status": 1}"#)
        .send()
        .await
        .expect("an answer");
    assert_eq!(complete.status(), 404);
    for page in [
        format!("/pay/{waiting}"),
        format!("/pay/{waiting}/result"),
        format!("/sandbox/qr/{waiting}"),
    ] {
        let answer = client
            .get(after.url(&page))
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status(), 404, "{page}");
    }

    let code = api
        .post(
            &format!("/api/v1/deposits/{confirming}/confirm"),
            &serde_json::json!({"code": "123456"}),
        )
        .await;
    assert_eq!(
        code.status, 409,
        "no test money on production: {}",
        code.body
    );
    assert_eq!(code.body["errorCode"], "InvalidState");
    let still = api.get(&format!("/api/v1/deposits/{confirming}")).await;
    assert_eq!(still.body["data"]["status"], 3);

    wait_until(
        "the payout started with the sandbox settles",
        DEADLINE,
        || {
            let api = api.clone();
            let path = format!("/api/v1/withdrawals/{payout}");
            async move {
                let now = api.get(&path).await;
                (now.body["data"]["status"] == 1, now.body.to_string())
            }
        },
    )
    .await;
    assert_eq!(api.balance().await, ("90.00".into(), "0.00".into()));
    let still = api.get(&format!("/api/v1/deposits/{waiting}")).await;
    assert_eq!(
        still.body["data"]["status"], 3,
        "the deposit waits to expire"
    );
}
