//! Card numbers and CVCs never reach a log line.

use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing_subscriber::fmt::MakeWriter;

use crate::helpers::{TestApp, Urls};

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        let bytes = self.0.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut bytes) = self.0.lock() {
            bytes.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[actix_web::test]
async fn card_payments_log_the_operation_id_but_never_the_card() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(captured.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
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
