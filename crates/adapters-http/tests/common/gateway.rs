//! The gateway's use cases on a test database, shared by the API tests and the page tests
//! (included with `#[path]`: this folder is no test target of its own).

use std::sync::Arc;

use adapters_db::Database;
use domain::ports::{Clock, PaymentProvider};
use domain::service::{Gateway, Ports};
use domain::testkit::RandomIds;

/// The gateway on `db` (its operations, refunds, merchants, routes and acquirer records) with this
/// sandbox provider and clock, random ids, and an acquirer that takes every payment and
/// finishes none ([`domain::testkit::PendingAcquirer`]).
pub fn gateway_on(
    db: &Database,
    provider: Arc<dyn PaymentProvider>,
    clock: Arc<dyn Clock>,
) -> Gateway {
    let store = Arc::new(db.clone());
    Gateway::new(Ports {
        store: store.clone(),
        refunds: store.clone(),
        disputes: store.clone(),
        merchants: store.clone(),
        routes: store.clone(),
        tariffs: store.clone(),
        ledger: store.clone(),
        provider,
        providers: store.clone(),
        acquirer: Arc::new(domain::testkit::PendingAcquirer),
        clock,
        ids: Arc::new(RandomIds),
        callback_format: Arc::new(adapters_http::JsonCallbackFormat),
        callbacks: store,
        qr: Arc::new(domain::testkit::TextQr),
    })
}
