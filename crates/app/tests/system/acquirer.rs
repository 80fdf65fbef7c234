//! Issue 14: the gateway against `acquirer-sim` over real sockets — creation in the
//! store-first order, every class of answer, notifications, the reconciler, expiry, a
//! discrepancy and a crash between the attempt row and the acquirer's answer.

use std::time::Duration;

use domain::merchant::Secret;
use domain::signature::sign;
use serde_json::{json, Value};

use crate::helpers::sim::{add_provider, recipient, route_to, Sim, SIM_WEBHOOK_SECRET};
use crate::helpers::{
    card_payout, deposit, gateway, Api, CallbackReceiver, GatewayProcess, Merchant, Serve, TestDb,
};

const PROVIDER: &str = "bank";
const DEADLINE: Duration = Duration::from_secs(60);

/// A gateway on `db` whose card payouts and card deposits go to a simulator.
struct Bench {
    db: TestDb,
    sim: Sim,
    gateway: GatewayProcess,
    api: Api,
    shop: Merchant,
    receiver: CallbackReceiver,
    http: reqwest::Client,
}

impl Bench {
    /// Nothing is held, `available` RUB is left and the ledger verifies.
    async fn assert_settled(&self, available: &str) {
        let balance = self.api.balance().await;
        assert_eq!(balance, (available.to_string(), "0.00".to_string()));
        gateway(&self.db, &["ledger", "verify"]).expect_code(0);
    }

    /// The simulator with `sim_args`, the provider with `provider_args`, card routes to it
    /// (`route_args` for the deposit route), a merchant with 100,000.00 RUB.
    fn start(db: TestDb, sim_args: &[&str], provider_args: &[&str], route_args: &[&str]) -> Bench {
        let sim = Sim::start(sim_args);
        add_provider(&db, PROVIDER, &sim, provider_args);
        route_to(&db, PROVIDER, "withdrawal", "card", &[]);
        route_to(&db, PROVIDER, "deposit", "card", route_args);
        let shop = Merchant::funded(&db, "acq-shop", "100000.00");
        let gateway = start_gateway("a", &db);
        let api = Api::new(&gateway, &shop);
        Bench {
            db,
            sim,
            api,
            gateway,
            shop,
            receiver: CallbackReceiver::start(),
            http: reqwest::Client::builder()
                .no_proxy()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
        }
    }

    /// A card payout of `amount` to `pan`; the answer's data.
    async fn payout(&self, amount: &str, pan: &str, moid: &str) -> Value {
        let cb = self.receiver.url("/cb");
        let answer = (self.api)
            .create_withdrawal(&card_payout(amount, pan, moid, Some(&cb)))
            .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        answer.body["data"].clone()
    }

    /// A card deposit; the answer's data.
    async fn deposit(&self, moid: &str) -> Value {
        let cb = self.receiver.url("/cb");
        let answer = (self.api)
            .create_deposit(&deposit("card", "150.00", moid, Some(&cb)))
            .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        answer.body["data"].clone()
    }

    /// Waits until the operation at `path` is final; its data.
    async fn final_state(&self, path: &str) -> Value {
        self.api.final_state(path, DEADLINE, &self.gateway).await
    }

    /// Notifies `body` to [`PROVIDER`], signed with the simulator's webhook secret: the status.
    async fn notify_signed(&self, body: &str) -> u16 {
        let signature = sign(&Secret::new(SIM_WEBHOOK_SECRET), body.as_bytes());
        self.notify(PROVIDER, body, &signature).await
    }

    /// Posts a notification body to the gateway with `signature`.
    async fn notify(&self, provider: &str, body: &str, signature: &str) -> u16 {
        self.http
            .post(
                self.gateway
                    .url(&format!("/providers/{provider}/notifications")),
            )
            .header("x-acquirer-signature", signature)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect("the gateway answers")
            .status()
            .as_u16()
    }

    /// The gateway's `/metrics` text.
    async fn metrics(&self) -> String {
        self.http
            .get(self.gateway.url("/metrics"))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("metrics text")
    }
}

fn start_gateway(name: &str, db: &TestDb) -> GatewayProcess {
    let serve = Serve::default()
        .with("GATEWAY_RECONCILE_AFTER", "1s")
        .log("info");
    GatewayProcess::start(name, db, &serve)
}

fn withdrawal_path(data: &Value) -> String {
    format!("/api/v1/withdrawals/{}", id_of(data))
}

/// The operation id in an answer's data.
fn id_of(data: &Value) -> String {
    data["operationId"].as_str().unwrap_or_default().to_string()
}

fn deposit_path(data: &Value) -> String {
    format!("/api/v1/deposits/{}", id_of(data))
}

/// How many payouts the simulator executed to `pan` (counted once `succeeded`).
async fn paid_to(sim: &Sim, pan: &str) -> u64 {
    sim.stats().await["byRecipient"][recipient(pan)]["payouts"]
        .as_u64()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payout_at_the_acquirer_is_paid_once_with_its_callback_and_ledger() {
    let bench = Bench::start(TestDb::sqlite(), &["--settle-ms", "300"], &[], &[]);
    let created = bench.payout("100.00", "4111111111111111", "p-1").await;
    assert_eq!(created["status"], 3, "processing once committed: {created}");

    let done = bench.final_state(&withdrawal_path(&created)).await;

    assert_eq!(done["status"], 1, "{done}");
    bench
        .receiver
        .wait_delivered(&[id_of(&created)], DEADLINE)
        .await;
    assert_eq!(paid_to(&bench.sim, "4111111111111111").await, 1);
    bench.assert_settled("99900.00").await;
    let metrics = bench.metrics().await;
    assert!(
        metrics.contains(
            r#"gateway_provider_calls_total{call="create",outcome="ok",provider="bank"} 1"#
        ),
        "{metrics}"
    );
    let _ = &bench.shop;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn definite_failures_decline_as_provider_unavailable_and_release_the_hold() {
    let bench = Bench::start(TestDb::sqlite(), &["--settle-ms", "300"], &[], &[]);
    bench.sim.faults(json!({"failRate": 1.0})).await;
    let refused = bench.payout("100.00", "4111111111111111", "f-1").await;
    bench
        .sim
        .faults(json!({"failRate": 0.0, "down": true}))
        .await;
    let unreachable = bench.payout("100.00", "4111111111111111", "f-2").await;
    bench.sim.faults(json!({"down": false})).await;
    let float_empty = bench.payout("100.00", "4000000000000119", "f-3").await;

    for data in [&refused, &unreachable, &float_empty] {
        assert_eq!(data["status"], 2, "{data}");
        assert_eq!(data["errorCode"], "ProviderUnavailable", "{data}");
    }
    assert_eq!(
        bench.api.balance().await,
        ("100000.00".into(), "0.00".into())
    );
    assert_eq!(bench.sim.stats().await["payouts"]["count"], 0);
    gateway(&bench.db, &["ledger", "verify"]).expect_code(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_outcomes_stay_processing_and_are_resolved_by_reading_never_by_resending() {
    let bench = Bench::start(
        TestDb::sqlite(),
        &[
            "--settle-ms",
            "300",
            "--hold-ms",
            "4000",
            "--drop-notify-rate",
            "1",
        ],
        &["--timeout", "1s"],
        &[],
    );
    // 502 after the payment was created, then an answer held past the gateway's timeout.
    bench.sim.faults(json!({"ambiguousRate": 1.0})).await;
    let bad_gateway = bench.payout("100.00", "4111111111111111", "u-1").await;
    bench
        .sim
        .faults(json!({"ambiguousRate": 0.0, "timeoutRate": 1.0}))
        .await;
    let timed_out = bench.payout("100.00", "4222222222222220", "u-2").await;
    bench.sim.faults(json!({"timeoutRate": 0.0})).await;
    for data in [&bad_gateway, &timed_out] {
        assert_eq!(
            data["status"], 3,
            "an unknown outcome stays processing: {data}"
        );
    }
    assert_eq!(bench.api.balance().await.1, "200.00", "both holds stay");

    // No notification arrives (all dropped): only the reconciler's reads can finish them.
    for data in [&bad_gateway, &timed_out] {
        let done = bench.final_state(&withdrawal_path(data)).await;
        assert_eq!(done["status"], 1, "{done}");
    }
    assert_eq!(paid_to(&bench.sim, "4111111111111111").await, 1);
    assert_eq!(paid_to(&bench.sim, "4222222222222220").await, 1);
    bench.assert_settled("99800.00").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payin_paid_on_the_acquirers_page_is_approved_and_the_user_comes_back() {
    let bench = Bench::start(TestDb::sqlite(), &[], &[], &[]);
    let created = bench.deposit("d-1").await;
    let id = id_of(&created);
    assert_eq!(
        created["redirectUrl"],
        bench.gateway.url(&format!("/pay/{id}")),
        "{created}"
    );

    let to_acquirer = bench
        .http
        .get(bench.gateway.url(&format!("/pay/{id}")))
        .send()
        .await
        .expect("pay page");
    assert_eq!(to_acquirer.status(), 303);
    let location = to_acquirer.headers()["location"]
        .to_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        location.starts_with(&bench.sim.api),
        "sent on to the acquirer's page: {location}"
    );

    assert_eq!(bench.sim.complete_payin(&id, "confirm").await, 200);
    let done = bench.final_state(&deposit_path(&created)).await;
    assert_eq!(done["status"], 1, "{done}");
    bench
        .receiver
        .wait_delivered(std::slice::from_ref(&id), DEADLINE)
        .await;

    let back = bench
        .http
        .get(
            bench
                .gateway
                .url(&format!("/pay/{id}/return?from=acquirer")),
        )
        .send()
        .await
        .expect("return page");
    assert_eq!(back.status(), 303);
    assert_eq!(
        back.headers()["location"],
        format!("/pay/{id}/result").as_str()
    );
    // The sandbox's own surfaces do not act on an acquirer's operation.
    let sandbox = bench
        .http
        .post(
            bench
                .gateway
                .url(&format!("/sandbox/operations/{id}/complete")),
        )
        .header("content-type", "application/json")
        .body(json!({"status": 2}).to_string())
        .send()
        .await
        .expect("sandbox endpoint");
    assert_eq!(sandbox.status(), 404);
    gateway(&bench.db, &["ledger", "verify"]).expect_code(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_are_checked_in_order_and_applied_once() {
    let bench = Bench::start(TestDb::sqlite(), &["--settle-ms", "300"], &[], &[]);
    let created = bench.payout("100.00", "4111111111111111", "n-1").await;
    let id = id_of(&created);
    let done = bench.final_state(&withdrawal_path(&created)).await;
    assert_eq!(done["status"], 1);
    let (_, payment) = bench.sim.payment(&id).await;
    let acquirer_id = payment["id"].as_str().unwrap_or_default().to_string();
    let secret = Secret::new(SIM_WEBHOOK_SECRET);
    let body = |reference: &str, acq: &str, status: &str| {
        json!({"object": "payment", "id": acq, "reference": reference, "status": status,
               "updatedAt": "2026-11-23T00:00:00Z"})
        .to_string()
    };
    let good = body(&id, &acquirer_id, "succeeded");
    let signed = sign(&secret, good.as_bytes());

    assert_eq!(
        bench.notify("nobody", &good, &signed).await,
        404,
        "unknown provider"
    );
    let huge = "x".repeat(65 * 1024);
    assert_eq!(bench.notify_signed(&huge).await, 413);
    assert_eq!(
        bench.notify(PROVIDER, &good, "00").await,
        401,
        "bad signature"
    );
    assert_eq!(bench.notify(PROVIDER, &good, "").await, 401, "no signature");
    assert_eq!(bench.notify_signed("not json").await, 400);
    let stranger = body(&uuid::Uuid::new_v4().to_string(), &acquirer_id, "succeeded");
    assert_eq!(bench.notify_signed(&stranger).await, 404);
    let other_id = body(&id, "acq_someone_else", "succeeded");
    assert_eq!(bench.notify_signed(&other_id).await, 404);
    // The same final status again, in upper-case hex: applied already, nothing changes.
    assert_eq!(
        bench.notify(PROVIDER, &good, &signed.to_uppercase()).await,
        200
    );
    let pending = body(&id, &acquirer_id, "pending");
    assert_eq!(bench.notify_signed(&pending).await, 200);

    let after = bench.api.get(&withdrawal_path(&created)).await;
    assert_eq!(after.body["data"]["status"], 1);
    bench
        .receiver
        .wait_delivered(std::slice::from_ref(&id), DEADLINE)
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(bench.receiver.for_operation(&id).len(), 1, "one callback");
    assert_eq!(
        bench.api.balance().await,
        ("99900.00".into(), "0.00".into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doubled_and_reordered_notifications_finish_each_payout_once() {
    let bench = Bench::start(
        TestDb::sqlite(),
        &[
            "--settle-ms",
            "200",
            "--duplicate-notify-rate",
            "1",
            "--reorder-notify",
            "true",
            "--hold-ms",
            "1500",
        ],
        &[],
        &[],
    );
    let mut ids = Vec::new();
    for i in 0..5 {
        let pan = [
            "4111111111111111",
            "4222222222222220",
            "5555555555554444",
            "4000000000000077",
            "4012888888881881",
        ][i];
        let data = bench.payout("10.00", pan, &format!("r-{i}")).await;
        ids.push(id_of(&data));
    }
    bench.receiver.wait_delivered(&ids, DEADLINE).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    for id in &ids {
        assert_eq!(
            bench.receiver.for_operation(id).len(),
            1,
            "one callback for {id}"
        );
        let done = bench.api.get(&format!("/api/v1/withdrawals/{id}")).await;
        assert_eq!(done.body["data"]["status"], 1, "{}", done.body);
    }
    assert_eq!(bench.sim.stats().await["payouts"]["count"], 5);
    bench.assert_settled("99950.00").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deposit_whose_lifetime_passes_is_cancelled_at_the_acquirer_unless_it_was_paid() {
    let bench = Bench::start(
        TestDb::sqlite(),
        &["--drop-notify-rate", "1"],
        &[],
        &["--lifetime", "3"],
    );
    let unpaid = bench.deposit("e-1").await;
    let paid = bench.deposit("e-2").await;
    let paid_id = id_of(&paid);
    // Paid at the acquirer, but its notification is lost: expiry finds it succeeded.
    assert_eq!(bench.sim.complete_payin(&paid_id, "confirm").await, 200);

    let expired = bench.final_state(&deposit_path(&unpaid)).await;
    let approved = bench.final_state(&deposit_path(&paid)).await;

    assert_eq!(expired["status"], 2, "{expired}");
    assert_eq!(expired["errorCode"], "Expired", "{expired}");
    // The gateway's cancel and the acquirer's own lapse at `expiresAt` race; either way the
    // payment is dead at the acquirer, never paid.
    let unpaid_id = unpaid["operationId"].as_str().unwrap_or_default();
    let at_acquirer = bench.sim.payment(unpaid_id).await.1;
    let dead = at_acquirer["status"] == "canceled"
        || (at_acquirer["status"] == "failed" && at_acquirer["failureCode"] == "expired");
    assert!(dead, "{at_acquirer}");
    assert_eq!(approved["status"], 1, "{approved}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_that_contradicts_a_final_operation_is_a_discrepancy_never_applied() {
    let bench = Bench::start(TestDb::sqlite(), &["--settle-ms", "200"], &[], &[]);
    // The simulator declines this card when it settles.
    let created = bench.payout("100.00", "4000000000000002", "x-1").await;
    let id = id_of(&created);
    let done = bench.final_state(&withdrawal_path(&created)).await;
    assert_eq!(done["errorCode"], "CardDeclined", "{done}");
    let (_, payment) = bench.sim.payment(&id).await;
    let body = json!({"object": "payment", "id": payment["id"], "reference": id,
                      "status": "succeeded", "updatedAt": "2026-11-23T00:00:00Z"})
    .to_string();

    assert_eq!(bench.notify_signed(&body).await, 200);

    let after = bench.api.get(&withdrawal_path(&created)).await;
    assert_eq!(
        after.body["data"]["status"], 2,
        "the operation keeps its status"
    );
    assert_eq!(
        bench.api.balance().await,
        ("100000.00".into(), "0.00".into())
    );
    bench.gateway.wait_for_log("discrepancy", DEADLINE);
    // The metric is read from storage every 5 s.
    let until = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let metrics = bench.metrics().await;
        if metrics.contains(r#"gateway_provider_discrepancies_total{provider="bank"} 1"#) {
            break;
        }
        assert!(std::time::Instant::now() < until, "{metrics}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_killed_between_the_attempt_row_and_the_answer_is_finished_after_restart() {
    let db = TestDb::sqlite();
    let mut bench = Bench::start(
        db,
        &[
            "--settle-ms",
            "200",
            "--hold-ms",
            "20000",
            "--timeout-rate",
            "1",
        ],
        &["--timeout", "2s"],
        &[],
    );
    let api = bench.api.clone();
    let body = card_payout("100.00", "4111111111111111", "k-1", None);
    let in_flight = tokio::spawn(async move {
        let _ = api.create_withdrawal(&body).await;
    });
    bench.gateway.wait_for_log("operation created", DEADLINE);
    // The call is on its way (the simulator holds its answer): a crash now loses the answer.
    tokio::time::sleep(Duration::from_millis(300)).await;
    bench.gateway.crash();
    in_flight.abort();
    bench.sim.faults(json!({"timeoutRate": 0.0})).await;

    let restarted = start_gateway("b", &bench.db);
    bench.api = Api::new(&restarted, &bench.shop);
    let found = bench
        .api
        .get("/api/v1/withdrawals?merchantOperationId=k-1")
        .await;
    assert_eq!(
        found.status, 200,
        "committed before the call: {}",
        found.body
    );
    let done = bench
        .final_state(&withdrawal_path(&found.body["data"]))
        .await;

    assert_eq!(done["status"], 1, "{done}");
    assert_eq!(
        paid_to(&bench.sim, "4111111111111111").await,
        1,
        "paid once"
    );
    bench.assert_settled("99900.00").await;
}

/// Waits until the refund `refund` of deposit `deposit` is final; its data.
async fn final_refund(bench: &Bench, deposit: &str, refund: &str) -> Value {
    let path = format!("/api/v1/deposits/{deposit}/refunds/{refund}");
    let until = std::time::Instant::now() + DEADLINE;
    loop {
        let answer = bench.api.get(&path).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        if answer.body["data"]["status"] != 3 {
            return answer.body["data"].clone();
        }
        assert!(
            std::time::Instant::now() < until,
            "refund not final: {}\n{}",
            answer.body,
            bench.gateway.log_text()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refunds_at_the_acquirer_are_sent_once_and_lost_answers_are_read() {
    let bench = Bench::start(
        TestDb::sqlite(),
        &["--settle-ms", "300", "--hold-ms", "3000"],
        &["--timeout", "1s"],
        &[],
    );
    let created = bench.deposit("rf-1").await;
    // From here no notification arrives: only the gateway's reads learn how refunds end.
    let id = id_of(&created);
    assert_eq!(bench.sim.complete_payin(&id, "confirm").await, 200);
    assert_eq!(
        bench.final_state(&deposit_path(&created)).await["status"],
        1
    );
    bench.sim.faults(json!({"dropNotifyRate": 1.0})).await;
    let refunds = format!("/api/v1/deposits/{id}/refunds");

    // Answered: pending, then settled by the acquirer (its notification or a read).
    let first = bench.api.post(&refunds, &json!({"amount": "50.00"})).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let r1 = first.body["data"]["refundId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // An answer held past the gateway's timeout: the refund stays 3 and is read, never resent.
    bench.sim.faults(json!({"timeoutRate": 1.0})).await;
    let second = bench.api.post(&refunds, &json!({"amount": "20.00"})).await;
    bench.sim.faults(json!({"timeoutRate": 0.0})).await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(second.body["data"]["status"], 3, "{}", second.body);
    let r2 = second.body["data"]["refundId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // Unreachable: a definite failure declines the refund and frees its amount.
    bench.sim.faults(json!({"down": true})).await;
    let third = bench.api.post(&refunds, &json!({"amount": "80.00"})).await;
    bench.sim.faults(json!({"down": false})).await;
    assert_eq!(third.status, 200, "{}", third.body);
    assert_eq!(third.body["data"]["status"], 2, "{}", third.body);
    assert_eq!(third.body["data"]["errorCode"], "ProviderUnavailable");

    assert_eq!(final_refund(&bench, &id, &r1).await["status"], 1);
    assert_eq!(final_refund(&bench, &id, &r2).await["status"], 1);
    let stats = bench.sim.stats().await;
    assert_eq!(stats["byReference"][&r1]["refunds"], 1, "{stats}");
    assert_eq!(stats["byReference"][&r2]["refunds"], 1, "{stats}");
    assert_eq!(stats["refunds"]["count"], 2, "{stats}");
    let read = bench.api.get(&deposit_path(&created)).await;
    assert_eq!(
        read.body["data"]["refundedAmount"], "70.00",
        "{}",
        read.body
    );
    assert_eq!(
        bench.api.balance().await,
        ("100080.00".into(), "0.00".into()),
        "150.00 in, 70.00 refunded"
    );
    gateway(&bench.db, &["ledger", "verify"]).expect_code(0);
}
