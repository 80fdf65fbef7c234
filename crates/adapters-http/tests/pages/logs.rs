//! Card numbers and CVCs never reach a log line.

use testkit::CapturedLogs;

use crate::helpers::{TestApp, Urls};

#[actix_web::test]
async fn card_payments_log_the_operation_id_but_never_the_card() {
    let (captured, _guard) = CapturedLogs::start();
    let app = TestApp::new().await;
    let paid = app.deposit("card", "100.00", Urls::None).await;
    let refused = app.deposit("card", "100.00", Urls::None).await;

    let expiry = app.future_expiry();
    app.post_card(paid.id(), "4000000000009995", &expiry, "9876")
        .await;
    app.post_card(refused.id(), "5555555555554440", "01/20", "8765")
        .await;

    let logs = captured.text();
    assert!(logs.contains(&paid.id().to_string()), "captured: {logs}");
    assert!(logs.contains(&refused.id().to_string()));
    for secret in ["4000000000009995", "5555555555554440", "9876", "8765"] {
        assert!(!logs.contains(secret), "{secret} in the logs:\n{logs}");
    }
}
