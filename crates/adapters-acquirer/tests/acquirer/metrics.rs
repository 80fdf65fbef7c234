//! Every call is counted by provider, call and outcome, and timed.

use adapters_acquirer::AcquirerClient;
use domain::ports::Acquirer;
use prometheus::Registry;
use serde_json::json;

use crate::helpers::{card_payout, payin, payment, FakeAcquirer, NAME};

/// `gateway_provider_calls_total` by (call, outcome), for provider `NAME`.
fn counts(registry: &Registry) -> Vec<(String, String, u64)> {
    let families = registry.gather();
    let calls = families
        .iter()
        .find(|family| family.get_name() == "gateway_provider_calls_total")
        .expect("the counter is registered");
    let mut counts: Vec<(String, String, u64)> = calls
        .get_metric()
        .iter()
        .map(|metric| {
            let label = |name: &str| {
                metric
                    .get_label()
                    .iter()
                    .find(|pair| pair.get_name() == name)
                    .map(|pair| pair.get_value().to_string())
                    .unwrap_or_default()
            };
            assert_eq!(label("provider"), NAME);
            let count = metric.get_counter().get_value() as u64;
            (label("call"), label("outcome"), count)
        })
        .collect();
    counts.sort();
    counts
}

#[tokio::test]
async fn calls_are_counted_by_provider_call_and_outcome() {
    let acquirer = FakeAcquirer::start();
    let provider = acquirer.provider();
    let client = AcquirerClient::new();
    let registry = Registry::new();
    client.register(&registry).expect("registered");

    let order = payin();
    acquirer.reply(201, payment(&order, "action_required"));
    client.create(&provider, &order).await;
    let mut declined = payment(&order, "failed");
    declined["failureCode"] = json!("card_declined");
    acquirer.reply(201, &declined);
    client.create(&provider, &order).await;
    let payout = card_payout();
    let mut empty_float = payment(&payout, "failed");
    empty_float["failureCode"] = json!("insufficient_funds");
    acquirer.reply(201, &empty_float);
    client.create(&provider, &payout).await;
    acquirer.reply(503, "");
    client.create(&provider, &order).await;
    acquirer.reply(502, "");
    client.create(&provider, &order).await;

    acquirer.reply(200, payment(&order, "pending"));
    client.find(&provider, order.reference).await;
    acquirer.reply(404, "");
    client.find(&provider, order.reference).await;
    client.cancel(&provider, "acq_1").await;
    acquirer.reply(500, "");
    client.find(&provider, order.reference).await;
    acquirer.reply(409, payment(&order, "succeeded"));
    client.cancel(&provider, "acq_1").await;

    let expected = [
        ("cancel", "ok", 2),
        ("create", "declined", 1),
        ("create", "ok", 1),
        ("create", "unavailable", 2),
        ("create", "unknown", 1),
        ("read", "ok", 2),
        ("read", "unknown", 1),
    ]
    .map(|(call, outcome, n)| (call.to_string(), outcome.to_string(), n));
    assert_eq!(counts(&registry), expected);
    let timed = client
        .metrics()
        .duration
        .with_label_values(&[NAME, "create"])
        .get_sample_count();
    assert_eq!(timed, 5);
}
