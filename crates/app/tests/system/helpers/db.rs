//! A fresh database per test: a temp SQLite file, or a PostgreSQL database created on the
//! server named by `GATEWAY_TEST_DATABASE_URL` and dropped afterwards.

pub use testkit::PG_VAR;

/// Held by tests that run several PostgreSQL gateways at once: each may pool 16 connections,
/// and two such tests side by side could pass the server's default limit of 100.
static SEVERAL_GATEWAYS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Waits until no other test runs several PostgreSQL gateways; hold the guard to the end.
pub async fn several_postgres_gateways() -> tokio::sync::MutexGuard<'static, ()> {
    SEVERAL_GATEWAYS.lock().await
}

pub use testkit::{Backend, FreshDatabase as TestDb};

/// A fresh PostgreSQL database when one is configured, with this test's turn to run several
/// gateways on it ([`several_postgres_gateways`]).
pub async fn postgres_for_several_gateways(
) -> Option<(TestDb, tokio::sync::MutexGuard<'static, ()>)> {
    let db = TestDb::on(Backend::Postgres)?;
    Some((db, several_postgres_gateways().await))
}
