//! Issue 47: real callbacks verified by the official Standard Webhooks library for Python
//! (`standardwebhooks`, installed from PyPI by the test itself) through
//! `examples/merchant.py verify`: a deposit's, its refund's and payouts' callbacks, a payout's
//! during a rotation overlap (two `v1,` signatures: either key verifies it), and tampered
//! copies refused.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::helpers::api::deposit;
use crate::helpers::cli::rotate;
use crate::helpers::python::standard_webhooks_python;
use crate::helpers::{
    card_payout, wait_until, Api, CallbackReceiver, Captured, GatewayProcess, Merchant, Sandbox,
    Serve, TestDb, DEADLINE,
};

/// `examples/merchant.py verify` under `python`, with the merchant's secrets: one verdict
/// per callback, in order.
fn verify(python: &std::path::Path, secrets: &[(&str, &str)], received: &[Value]) -> Vec<Value> {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/merchant.py");
    let mut child = Command::new(python)
        .args([example, "verify"])
        .envs(secrets.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the verifier starts");
    let mut input = child.stdin.take().expect("stdin");
    for line in received {
        writeln!(input, "{line}").expect("written");
    }
    drop(input);
    let out = child.wait_with_output().expect("the verifier ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verdicts: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(verdicts.len(), received.len(), "{stdout}");
    verdicts
}

/// A received callback as the verifier reads it: its headers and exact body.
fn as_received(c: &Captured) -> Value {
    json!({"headers": c.headers, "body": String::from_utf8_lossy(&c.body)})
}

/// Whether each verdict verified.
fn verified(verdicts: &[Value]) -> Vec<bool> {
    verdicts.iter().map(|v| v["verified"] == true).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_standard_webhooks_library_verifies_real_callbacks_and_refuses_tampered_ones()
{
    let python = standard_webhooks_python();
    let db = TestDb::sqlite();
    let shop = Merchant::funded(&db, "standard-shop", "1000.00");
    let receiver = CallbackReceiver::start();
    let gw = GatewayProcess::start("a", &db, &Serve::default());
    let api = Api::new(&gw, &shop);
    let mut sandbox = Sandbox::new(&gw, &db).await;
    let cb = receiver.url("/cb");

    let dep = api
        .create_deposit(&deposit("card", "100.00", "sw-1", Some(&cb)))
        .await
        .operation_id();
    sandbox.complete(&dep, 1).await;
    let refund = api
        .post(
            &format!("/api/v1/deposits/{dep}/refunds"),
            &json!({"amount": "30.00"}),
        )
        .await;
    assert_eq!(refund.status, 200, "{}", refund.body);
    let before = api
        .create_withdrawal(&card_payout("20.00", "4242424242424242", "sw-2", Some(&cb)))
        .await
        .operation_id();
    wait_until("three callbacks", DEADLINE, || {
        let (d, p) = (
            receiver.for_operation(&dep),
            receiver.for_operation(&before),
        );
        async move { (d.len() >= 2 && !p.is_empty(), format!("{d:?} {p:?}")) }
    })
    .await;

    // A rotation with an overlap: the next payout's callback carries both secrets' signatures.
    let rotated = rotate(&db, &shop.id, "withdrawal", "2h");
    let new_secret = rotated["secret"].as_str().expect("a secret").to_string();
    let renewed = Merchant {
        withdrawal_secret: new_secret.clone(),
        ..shop.clone()
    };
    let during = Api::new(&gw, &renewed)
        .create_withdrawal(&card_payout("10.00", "4242424242424242", "sw-3", Some(&cb)))
        .await
        .operation_id();
    wait_until("the payout's callback in the overlap", DEADLINE, || {
        let got = receiver.for_operation(&during);
        async move { (!got.is_empty(), format!("{got:?}")) }
    })
    .await;

    let deposit_calls = receiver.for_operation(&dep);
    let (own, of_refund) = (&deposit_calls[0], &deposit_calls[1]);
    let paid_before = &receiver.for_operation(&before)[0];
    let paid_during = &receiver.for_operation(&during)[0];
    assert_eq!(
        paid_during.header("webhook-signature").split(' ').count(),
        2,
        "one signature per live secret"
    );
    let real = [own, of_refund, paid_before, paid_during];
    let mut received: Vec<Value> = real.iter().map(|c| as_received(c)).collect();
    // Tampered: the amount raised in the body, the id of another callback, a signature cut.
    let mut raised = as_received(own);
    let body = raised["body"]
        .as_str()
        .expect("a body")
        .replace("\"100.00\"", "\"1000.00\"");
    assert_ne!(
        body,
        raised["body"].as_str().expect("a body"),
        "the amount is in the body"
    );
    raised["body"] = json!(body);
    let mut moved = as_received(own);
    moved["headers"]["webhook-id"] = json!(of_refund.header("webhook-id"));
    let mut cut = as_received(paid_before);
    let signature = paid_before.header("webhook-signature");
    cut["headers"]["webhook-signature"] = json!(&signature[..signature.len() - 4]);
    received.extend([raised, moved, cut]);

    // The merchant still on the old payout secret: every real callback verifies (the one in
    // the overlap by the old secret's signature); no tampered one does.
    let old_key = [
        ("DEPOSIT_SECRET", shop.deposit_secret.as_str()),
        ("WITHDRAWAL_SECRET", shop.withdrawal_secret.as_str()),
    ];
    let verdicts = verify(&python, &old_key, &received);
    assert_eq!(
        verified(&verdicts),
        [true, true, true, true, false, false, false],
        "{verdicts:?}"
    );
    let ids: Vec<&Value> = verdicts.iter().map(|v| &v["webhookId"]).collect();
    assert_eq!(ids[0], dep.as_str());
    let sequences: Vec<&Value> = verdicts[..4].iter().map(|v| &v["sequence"]).collect();
    assert_eq!(sequences, [&json!(1), &json!(2), &json!(1), &json!(1)]);

    // On the new secret only: the callback in the overlap verifies by the new signature, the
    // one sent before the rotation (signed with the old secret alone) does not.
    let new_key = [
        ("DEPOSIT_SECRET", shop.deposit_secret.as_str()),
        ("WITHDRAWAL_SECRET", new_secret.as_str()),
    ];
    let verdicts = verify(&python, &new_key, &received[..4]);
    assert_eq!(
        verified(&verdicts),
        [true, true, false, true],
        "{verdicts:?}"
    );
}
