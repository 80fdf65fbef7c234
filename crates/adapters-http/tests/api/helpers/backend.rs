//! A fresh database per test on each backend, and the loop that runs a test on both.

use std::future::Future;
use std::time::Duration;

use adapters_db::Database;
use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection};
use domain::route::Flow;

use super::TestApp;

/// The variable naming a PostgreSQL server the tests may create databases on.
const PG_VAR: &str = "GATEWAY_TEST_DATABASE_URL";

/// How long a sandbox payout takes to settle in these tests.
pub const SETTLE: Duration = Duration::from_millis(50);

/// Where a test database lives; a PostgreSQL one is dropped with it.
pub(super) enum Place {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl Drop for Place {
    fn drop(&mut self) {
        if let Place::Postgres { admin_url, name } = self {
            if let Ok(mut admin) = PgConnection::establish(admin_url) {
                let _ =
                    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            }
        }
    }
}

fn sqlite() -> (Database, Place) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("gateway.db").display());
    let db = Database::connect(&url).expect("open SQLite");
    db.migrate().expect("migrate SQLite");
    (db, Place::Sqlite(dir))
}

fn postgres(admin_url: &str) -> (Database, Place) {
    let mut admin = PgConnection::establish(admin_url)
        .unwrap_or_else(|e| panic!("{PG_VAR} is set but PostgreSQL cannot be reached: {e}"));
    let name = format!("api_{}", uuid::Uuid::new_v4().simple());
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the test database");
    let place = Place::Postgres {
        admin_url: admin_url.to_string(),
        name: name.clone(),
    };
    let mut url = url::Url::parse(admin_url).expect("a PostgreSQL URL");
    url.set_path(&name);
    let db = Database::connect(url.as_str()).expect("open PostgreSQL");
    db.migrate().expect("migrate PostgreSQL");
    (db, place)
}

/// What the test app is built with.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// Requests per second per merchant (0 = off).
    pub rate_limit: u32,
    /// Extra routes (e.g. a card deposit with the confirmation flow), added before serving.
    pub routes: Vec<(Flow, i32)>,
    /// Also serve the hosted pages and the sandbox endpoint (`POST /sandbox/operations/{id}/complete`).
    pub pages: bool,
}

/// Runs `test` on a fresh SQLite app, then (when `GATEWAY_TEST_DATABASE_URL` is set) on a
/// fresh PostgreSQL app. A set but unreachable PostgreSQL fails the test.
pub async fn each_backend<F, Fut>(setup: Setup, test: F)
where
    F: Fn(TestApp) -> Fut,
    Fut: Future<Output = ()>,
{
    let (db, place) = tokio::task::spawn_blocking(sqlite).await.expect("SQLite");
    run(db, place, &setup, &test).await;
    match std::env::var(PG_VAR) {
        Ok(admin_url) if !admin_url.is_empty() => {
            let (db, place) = tokio::task::spawn_blocking(move || postgres(&admin_url))
                .await
                .expect("PostgreSQL");
            run(db, place, &setup, &test).await;
        }
        _ => eprintln!("PostgreSQL skipped: {PG_VAR} is not set"),
    }
}

async fn run<F, Fut>(db: Database, place: Place, setup: &Setup, test: &F)
where
    F: Fn(TestApp) -> Fut,
    Fut: Future<Output = ()>,
{
    let app = TestApp::spawn(db, place, setup).await;
    let handle = app.handle.clone();
    test(app).await;
    handle.stop(false).await;
}
