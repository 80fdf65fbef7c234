//! The callback body the use cases queue (the callback rules of docs/api.md).

use std::collections::BTreeSet;

use futures::executor::block_on;
use serde_json::Value;

use super::fixtures::*;
use crate::callback::QueuedCallback;
use crate::operation::{Decline, DeclineCode, Operation, Outcome};

const ALWAYS: [&str; 8] = [
    "operationId",
    "type",
    "paymentMethod",
    "userId",
    "status",
    "amount",
    "currency",
    "updatedAt",
];

/// Completes `op` with `outcome` and returns the callback queued with it.
fn queued(op: Operation, outcome: Outcome) -> QueuedCallback {
    let mut mocks = Mocks::new();
    let id = op.id;
    mocks.stored(op);
    let finished = mocks.expect_finish(1, || Ok(()));
    block_on(mocks.gateway().complete(id, outcome)).unwrap();
    finished.one().callback.expect("a callback is queued")
}

fn data(callback: &QueuedCallback) -> serde_json::Map<String, Value> {
    let body: Value = serde_json::from_str(&callback.body).unwrap();
    let outer = body.as_object().unwrap();
    assert_eq!(outer.keys().collect::<Vec<_>>(), vec!["data"]);
    outer["data"].as_object().unwrap().clone()
}

fn keys(data: &serde_json::Map<String, Value>) -> BTreeSet<&str> {
    data.keys().map(String::as_str).collect()
}

#[test]
fn an_approved_callback_carries_exactly_the_contract_fields() {
    let callback = queued(deposit(id(1)), Outcome::Approve);

    let data = data(&callback);
    let mut expected: BTreeSet<&str> = ALWAYS.into_iter().collect();
    expected.insert("merchantOperationId");
    assert_eq!(keys(&data), expected);
    assert_eq!(data["operationId"], id(1).to_string());
    assert_eq!(data["merchantOperationId"], MOID);
    assert_eq!(data["type"], "deposit");
    assert_eq!(data["paymentMethod"], "card");
    assert_eq!(data["userId"], "user-7");
    assert_eq!(data["status"], 1);
    assert_eq!(data["amount"], "100.00");
    assert_eq!(data["currency"], "RUB");
    assert_eq!(data["updatedAt"], "2026-11-21T10:00:00Z");
    assert_eq!(callback.url.as_str(), CALLBACK_URL);
    assert_eq!(callback.merchant_id, merchant().id);
}

#[test]
fn a_declined_callback_adds_error_code_and_message() {
    let callback = queued(
        payout(id(2)),
        Outcome::Decline(Decline::new(DeclineCode::RecipientNotFound)),
    );

    let data = data(&callback);
    let mut expected: BTreeSet<&str> = ALWAYS.into_iter().collect();
    expected.extend(["merchantOperationId", "errorCode", "errorMessage"]);
    assert_eq!(keys(&data), expected);
    assert_eq!(data["type"], "withdrawal");
    assert_eq!(data["status"], 2);
    assert_eq!(data["amount"], "250.00");
    assert_eq!(data["errorCode"], "RecipientNotFound");
    assert_eq!(
        data["errorMessage"],
        DeclineCode::RecipientNotFound.message()
    );
}

#[test]
fn without_merchant_operation_id_the_key_is_left_out_not_null() {
    let mut op = deposit(id(1));
    op.merchant_operation_id = None;

    let callback = queued(op, Outcome::Approve);

    let data = data(&callback);
    assert_eq!(keys(&data), ALWAYS.into_iter().collect());
    assert!(data.values().all(|v| !v.is_null()));
}
