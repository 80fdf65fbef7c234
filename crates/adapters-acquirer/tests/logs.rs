//! Logs say why and for what, never with the API key, requisites or bodies.
//!
//! A binary of its own: with tests on other threads, tracing's shared cache of which events
//! are wanted can miss a subscriber set for one thread (events then go unrecorded).

#[allow(dead_code)] // shared with the main test binary, which uses all of it
#[path = "acquirer/helpers.rs"]
mod helpers;

use adapters_acquirer::AcquirerClient;
use domain::ports::Acquirer;
use serde_json::json;
use testkit::CapturedLogs;

use helpers::{
    card_payout, closed_port, payment, provider_on, sbp_payout, FakeAcquirer, API_KEY, HOLDER, PAN,
    PHONE,
};

#[tokio::test]
async fn logs_name_the_provider_operation_and_reason_and_nothing_secret() {
    let (logs, _guard) = CapturedLogs::start();
    let acquirer = FakeAcquirer::start();
    let client = AcquirerClient::new();

    let card = card_payout();
    acquirer.reply(502, json!({"echo": PAN}));
    client.create(&acquirer.provider(), &card).await;
    let sbp = sbp_payout();
    let mut answer = payment(&sbp, "pending");
    answer["amount"] = json!(1);
    acquirer.reply(201, &answer);
    client.create(&acquirer.provider(), &sbp).await;
    client.create(&provider_on(closed_port()), &card).await;
    acquirer.reply(200, payment(&sbp, "pending"));
    client.find(&acquirer.provider(), sbp.reference).await;

    let text = logs.text();
    for secret in [API_KEY, PAN, PHONE, HOLDER, "Bank A", "notifyUrl"] {
        assert!(!text.contains(secret), "{secret} logged:\n{text}");
    }
    let warned = |reason: &str, reference: &str| {
        text.lines().any(|line| {
            line.contains("WARN")
                && line.contains("provider=bank-a")
                && line.contains(&format!("operation.id={reference}"))
                && line.contains(reason)
        })
    };
    let card_ref = card.reference.to_string();
    assert!(warned("reason=HTTP 502", &card_ref), "{text}");
    assert!(
        warned("reason=answer's amount differs", &sbp.reference.to_string()),
        "{text}"
    );
    assert!(warned("reason=connection refused", &card_ref), "{text}");
}
