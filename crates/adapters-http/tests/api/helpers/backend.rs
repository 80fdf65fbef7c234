//! A fresh database per test on each backend, and the loop that runs a test on both.

use std::future::Future;
use std::time::Duration;

use std::sync::Arc;

use adapters_db::Database;
use domain::route::Flow;
use domain::testkit::TestClock;
use testkit::FreshDatabase;

use super::TestApp;

/// How long a sandbox payout takes to settle in these tests.
pub const SETTLE: Duration = Duration::from_millis(50);

fn open(fresh: &FreshDatabase) -> Database {
    let db = Database::connect(&fresh.url).expect("open the test database");
    db.migrate().expect("migrate the test database");
    db
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
    /// SBP deposits and payouts go to routes of an acquirer, [`OTHER_PROVIDER`], which takes
    /// every payment and finishes none (`domain::testkit::PendingAcquirer`).
    pub other_provider: bool,
    /// How long sandbox payouts and refunds take to settle; [`SETTLE`] if `None`.
    pub settle: Option<Duration>,
    /// The clock of the gateway and of the operator's use cases; the wall clock if `None`.
    pub clock: Option<Arc<TestClock>>,
    /// RUB credited by hand to the main merchant before the test starts.
    pub credit: Option<&'static str>,
}

impl Setup {
    /// The default app, its main merchant credited with `amount` RUB.
    pub fn credited(amount: &'static str) -> Setup {
        Setup {
            credit: Some(amount),
            ..Setup::default()
        }
    }
}

/// The provider of [`Setup::other_provider`]'s routes.
pub const OTHER_PROVIDER: &str = "acquirer-test";

/// Runs `test` on a fresh SQLite app, then on a fresh PostgreSQL app (see
/// `testkit::postgres_admin_url` for what happens without one). A set but unreachable
/// PostgreSQL fails the test.
pub async fn each_backend<F, Fut>(setup: Setup, test: F)
where
    F: Fn(TestApp) -> Fut,
    Fut: Future<Output = ()>,
{
    // Asked here, on the test's own thread, so a SKIPPED line names the test.
    let on_postgres = testkit::postgres_admin_url().is_some();
    let backends = tokio::task::spawn_blocking(move || {
        let sqlite = FreshDatabase::sqlite();
        let sqlite = (open(&sqlite), sqlite);
        let postgres = on_postgres
            .then(FreshDatabase::postgres)
            .flatten()
            .map(|fresh| (open(&fresh), fresh));
        std::iter::once(sqlite).chain(postgres).collect::<Vec<_>>()
    })
    .await
    .expect("the test databases");
    for (db, fresh) in backends {
        run(db, fresh, &setup, &test).await;
    }
}

async fn run<F, Fut>(db: Database, fresh: FreshDatabase, setup: &Setup, test: &F)
where
    F: Fn(TestApp) -> Fut,
    Fut: Future<Output = ()>,
{
    let app = TestApp::spawn(db, fresh, setup).await;
    if let Some(amount) = setup.credit {
        app.credit(amount).await;
    }
    let handle = app.handle.clone();
    test(app).await;
    handle.stop(false).await;
}
