//! Signatures bound to their path, and confirmation attempts that cannot be raced, on the real
//! binary, on SQLite and PostgreSQL: the attacks of the hardening issue tried as an attacker
//! who captured a merchant's requests would.
//!
//! * A version-1 signature covers the body alone, and every cancel's body is `{}`: a POST that
//!   names an operation takes only version 2, whose signature covers the path. A captured
//!   version-2 signature replayed on another operation's cancel or refund is 401 and changes
//!   nothing.
//! * A merchant made to require version 2 has every version-1 request refused.
//! * Twenty concurrent wrong confirmation codes spend one attempt each: two `InvalidCode`, one
//!   decline, the rest `InvalidState`; the right code afterwards is refused.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};
use testkit::signing::Scheme;

use crate::helpers::db::several_postgres_gateways;
use crate::helpers::{
    deposit, gateway, gateway_line, on_sqlite_and_postgres, Api, Backend, GatewayProcess, Merchant,
    Sandbox, Serve, TestDb,
};

on_sqlite_and_postgres!(
    async captured_signatures:
    a_captured_signature_acts_on_no_other_operation_on_sqlite,
    a_captured_signature_acts_on_no_other_operation_on_postgres
);

on_sqlite_and_postgres!(
    async required_version_2:
    a_merchant_can_require_version_2_on_sqlite,
    a_merchant_can_require_version_2_on_postgres
);

on_sqlite_and_postgres!(
    async racing_codes:
    concurrent_wrong_codes_spend_one_attempt_each_on_sqlite,
    concurrent_wrong_codes_spend_one_attempt_each_on_postgres
);

/// The deposit's read data.
async fn read(api: &Api, id: &str) -> Value {
    let answer = api.get(&format!("/api/v1/deposits/{id}")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.body["data"].clone()
}

/// A processing sandbox card deposit (the redirect flow waits for the payer): its id.
async fn waiting_deposit(api: &Api, moid: &str) -> String {
    let answer = api
        .create_deposit(&deposit("card", "100.00", moid, None))
        .await;
    let id = answer.operation_id();
    assert_eq!(answer.body["data"]["status"], 3, "{}", answer.body);
    id
}

#[track_caller]
fn assert_unauthorized(answer: &crate::helpers::api::Answer, what: &str) {
    assert_eq!(answer.status, 401, "{what}: {}", answer.body);
    assert_eq!(answer.body["errorCode"], "Unauthorized", "{what}");
}

async fn captured_signatures(db: TestDb) {
    let shop = Merchant::funded(&db, "bound-shop", "1000.00");
    let gw = GatewayProcess::start("a", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let mut sandbox = Sandbox::new(&gw, &db).await;

    // Cancels: `{}` is every cancel's body.
    let a = waiting_deposit(&api, "cancel-a").await;
    let b = waiting_deposit(&api, "cancel-b").await;
    let cancel = |id: &str| format!("/api/v1/deposits/{id}/cancel");
    let empty = json!({});
    for scheme in [Scheme::V1, Scheme::V1Stamped] {
        let v1 = api.signature(scheme, "POST", &cancel(&a), b"{}");
        let answer = api.post_raw(&cancel(&a), &empty, &v1).await;
        assert_unauthorized(&answer, &format!("a {scheme:?} cancel"));
    }
    // A version-2 signature made for A's cancel, replayed on B's.
    let captured = api.signature(Scheme::V2, "POST", &cancel(&a), b"{}");
    let replayed = api.post_raw(&cancel(&b), &empty, &captured).await;
    assert_unauthorized(&replayed, "A's cancel signature on B");
    assert_eq!(read(&api, &a).await["status"], 3, "nothing canceled");
    assert_eq!(read(&api, &b).await["status"], 3, "nothing canceled");
    // Any other version header is 401 too.
    let mut other_version = captured.clone();
    for (name, value) in &mut other_version {
        if *name == "x-signature-version" {
            *value = "1".into();
        }
    }
    let answer = api.post_raw(&cancel(&a), &empty, &other_version).await;
    assert_unauthorized(&answer, "x-signature-version: 1");
    // Where it was made, it works.
    let answer = api.post_raw(&cancel(&a), &empty, &captured).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["data"]["errorCode"], "Canceled");
    assert_eq!(read(&api, &b).await["status"], 3, "B untouched");

    // Payout cancels too (the withdrawal secret).
    let payout = api
        .create_withdrawal(&crate::helpers::card_payout(
            "10.00",
            "4242424242424242",
            "payout-1",
            None,
        ))
        .await
        .operation_id();
    let payout_cancel = format!("/api/v1/withdrawals/{payout}/cancel");
    let v1 = api.signature(Scheme::V1, "POST", &payout_cancel, b"{}");
    let answer = api.post_raw(&payout_cancel, &empty, &v1).await;
    assert_unauthorized(&answer, "a version-1 payout cancel");

    // Refunds: a body without merchantRefundId is the same for every deposit.
    let c = waiting_deposit(&api, "refund-c").await;
    let d = waiting_deposit(&api, "refund-d").await;
    sandbox.complete(&c, 1).await;
    sandbox.complete(&d, 1).await;
    let balance_before = api.balance().await;
    let refund = json!({"amount": "10.00"});
    let refunds = |id: &str| format!("/api/v1/deposits/{id}/refunds");
    let bytes = refund.to_string().into_bytes();
    let v1 = api.signature(Scheme::V1, "POST", &refunds(&c), &bytes);
    let answer = api.post_raw(&refunds(&c), &refund, &v1).await;
    assert_unauthorized(&answer, "a version-1 refund");
    let captured = api.signature(Scheme::V2, "POST", &refunds(&c), &bytes);
    let answer = api.post_raw(&refunds(&d), &refund, &captured).await;
    assert_unauthorized(&answer, "C's refund signature on D");
    assert_eq!(read(&api, &c).await["refunds"], json!([]), "no refund of C");
    assert_eq!(read(&api, &d).await["refunds"], json!([]), "no refund of D");
    assert_eq!(api.balance().await, balance_before, "no money moved");
    let answer = api.post_raw(&refunds(&c), &refund, &captured).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(read(&api, &d).await["refunds"], json!([]), "D untouched");

    // Version 2 is accepted everywhere else: a creation, a read, a look-up, the balance.
    let v2 = api.signing(Scheme::V2);
    let created = v2
        .create_deposit(&deposit("card", "5.00", "v2-created", None))
        .await
        .operation_id();
    assert_eq!(read(&v2, &created).await["status"], 3);
    let found = v2
        .get("/api/v1/deposits?merchantOperationId=v2-created")
        .await;
    assert_eq!(found.body["data"]["operationId"], created.as_str());
    assert_eq!(v2.get("/api/v1/balance").await.status, 200);
    gateway(&db, &["ledger", "verify"]).expect_code(0);
}

async fn required_version_2(db: TestDb) {
    let shop = Merchant::create(&db, "strict-shop");
    let gw = GatewayProcess::start("a", &db, &Serve::default());
    let v1 = Api::new(&gw, &shop);
    let v2 = v1.signing(Scheme::V2);
    assert_eq!(v1.get("/api/v1/balance").await.status, 200);

    gateway_line(
        &db,
        &format!("merchant update {} --require-signature-v2", shop.id),
    )
    .expect_code(0);
    let listed = gateway(&db, &["merchant", "list", "--json"]).json();
    let row = &listed[0];
    assert_eq!(row["requireSignatureV2"], true, "{listed}");
    assert_eq!(
        row["requireTimestamp"], false,
        "the other rule is left: {listed}"
    );
    // Running gateways apply it within 5 s.
    v1.wait_for_balance_status("version 1 refused", Duration::from_secs(10), 401)
        .await;
    for scheme in [Scheme::V1, Scheme::V1Stamped] {
        let api = v1.signing(scheme);
        let read = api.get("/api/v1/balance").await;
        assert_unauthorized(&read, &format!("a {scheme:?} read"));
        let created = api
            .create_deposit(&deposit("card", "1.00", "strict-1", None))
            .await;
        assert_unauthorized(&created, &format!("a {scheme:?} creation"));
    }
    assert_eq!(v2.get("/api/v1/balance").await.status, 200);
    let created = v2
        .create_deposit(&deposit("card", "1.00", "strict-1", None))
        .await;
    assert_eq!(created.status, 200, "{}", created.body);

    gateway_line(
        &db,
        &format!("merchant update {} --no-require-signature-v2", shop.id),
    )
    .expect_code(0);
    v1.wait_for_balance_status("version 1 accepted again", Duration::from_secs(10), 200)
        .await;
    // Created with the rule on.
    let strict = gateway(
        &db,
        &[
            "merchant",
            "create",
            "--name",
            "strict-from-birth",
            "--require-signature-v2",
            "--json",
        ],
    );
    strict.expect_code(0);
    let listed = gateway(&db, &["merchant", "list", "--json"]).json();
    let born = listed
        .as_array()
        .and_then(|all| all.iter().find(|m| m["name"] == "strict-from-birth"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(born["requireSignatureV2"], true, "{listed}");
    // Said outright, version 1 stays accepted; both at once is a usage error.
    gateway(
        &db,
        &[
            "merchant",
            "create",
            "--name",
            "lenient",
            "--no-require-signature-v2",
        ],
    )
    .expect_code(0);
    gateway(
        &db,
        &[
            "merchant",
            "create",
            "--name",
            "confused",
            "--require-signature-v2",
            "--no-require-signature-v2",
        ],
    )
    .expect_code(2);
    // An update needs a rule to change, and one rule cannot be both on and off.
    gateway_line(&db, &format!("merchant update {}", shop.id)).expect_code(2);
    gateway_line(
        &db,
        &format!(
            "merchant update {} --require-signature-v2 --no-require-signature-v2",
            shop.id
        ),
    )
    .expect_code(2);
    // Each change is audited, before and after.
    let audited = db.count(&format!(
        "SELECT COUNT(*) AS n FROM audit_log WHERE action = 'merchant.update' AND target = '{}' \
         AND before_value LIKE '%requireSignatureV2%' AND after_value LIKE '%requireSignatureV2%'",
        shop.id
    ));
    assert_eq!(audited, 2, "both updates audited");
}

async fn racing_codes(db: TestDb) {
    let _turn = match db.backend {
        Backend::Postgres => Some(several_postgres_gateways().await),
        Backend::Sqlite => None,
    };
    let shop = Merchant::create(&db, "code-shop");
    // Card deposits of 550.00 ask for a code (the sandbox's right one is 123456).
    gateway_line(
        &db,
        "route add --direction deposit --method card --flow confirmation --min 550.00 --max 550.00 --priority 200",
    )
    .expect_code(0);
    let gateways: Vec<GatewayProcess> = ["a", "b"]
        .iter()
        .map(|name| GatewayProcess::start(name, &db, &Serve::default()))
        .collect();
    let apis: Vec<Api> = gateways.iter().map(|g| Api::new(g, &shop)).collect();
    let answer = apis[0]
        .create_deposit(&deposit("card", "550.00", "coded", None))
        .await;
    let id = answer.operation_id();
    assert_eq!(
        answer.body["data"]["confirmRequired"], true,
        "{}",
        answer.body
    );

    let confirm = format!("/api/v1/deposits/{id}/confirm");
    let answers: Vec<(u16, Value)> = futures::stream::iter(0..20)
        .map(|i| {
            let api = apis[i % apis.len()].clone();
            let confirm = confirm.clone();
            async move {
                let answer = api.post(&confirm, &json!({"code": "000000"})).await;
                (answer.status, answer.body)
            }
        })
        .buffer_unordered(20)
        .collect()
        .await;
    let count = |status: u16, code: &str| {
        answers
            .iter()
            .filter(|(s, body)| {
                *s == status
                    && match status {
                        200 => body["data"]["errorCode"] == code,
                        _ => body["errorCode"] == code,
                    }
            })
            .count()
    };
    let summary = format!("{answers:?}");
    assert_eq!(count(422, "InvalidCode"), 2, "{summary}");
    assert_eq!(count(200, "ConfirmationFailed"), 1, "{summary}");
    assert_eq!(count(409, "InvalidState"), 17, "{summary}");
    let after = read(&apis[1], &id).await;
    assert_eq!(after["status"], 2, "{after}");
    assert_eq!(after["errorCode"], "ConfirmationFailed", "{after}");

    // The right code now is too late.
    let late = apis[0].post(&confirm, &json!({"code": "123456"})).await;
    assert_eq!(late.status, 409, "{}", late.body);
    assert_eq!(late.body["errorCode"], "InvalidState");
}
