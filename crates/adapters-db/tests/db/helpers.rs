//! A fresh database per test on each backend, and raw SQL for what the public API does not show.

use std::future::Future;
use std::sync::Arc;

use adapters_db::{Backend, Database, DbOptions};
use domain::callback::CallbackState;
use domain::operation::Operation;
use domain::ports::{CallbackOutbox, CallbackStatus, OperationStore, OperatorStore};
use domain::OperationId;
use testkit::FreshDatabase;
use tokio::sync::Barrier;

pub use crate::doubles::{gateway, operator};
pub use crate::fixtures::*;
pub use crate::refund_fixtures::*;
pub use crate::secret_fixtures::*;

/// Raw SQL: merchant `shop` as the first version stored it, with secrets `d` and `w`.
pub const FIRST_VERSION_SHOP: &str = "INSERT INTO merchants (id, name, deposit_secret, \
     withdrawal_secret, enabled, created_at) VALUES ('shop', 'shop', 'd', 'w', 1, 0)";

/// Raw SQL: gateway process `p` of version 0.1.0, started and seen at 0.
pub const PROCESS_P: &str = "INSERT INTO gateway_processes (id, version, started_at, seen_at) \
     VALUES ('p', '0.1.0', 0, 0)";

/// One test's database: a temp SQLite file, or a fresh PostgreSQL database dropped afterwards.
pub struct TestDb {
    pub db: Database,
    pub url: String,
    fresh: FreshDatabase,
}

/// Keeps a test's closure from capturing `db` alone (edition 2021 captures disjoint fields),
/// which would drop the database while the test still runs. Fields then drop in order: the
/// pool first, then the database itself.
impl Drop for TestDb {
    fn drop(&mut self) {}
}

fn options() -> DbOptions {
    DbOptions {
        max_connections: Some(8),
        ..DbOptions::default()
    }
}

impl TestDb {
    fn open(fresh: FreshDatabase) -> TestDb {
        let db = Database::connect_with(&fresh.url, options()).expect("open the test database");
        db.migrate().expect("migrate the test database");
        TestDb {
            db,
            url: fresh.url.clone(),
            fresh,
        }
    }

    pub fn backend(&self) -> Backend {
        self.db.backend()
    }

    /// Runs raw SQL (to tamper with data the way a bug or an operator might).
    pub fn exec(&self, sql: &str) {
        self.fresh.exec(sql);
    }

    /// The single BIGINT a query returns as `n`.
    pub fn count(&self, sql: &str) -> i64 {
        self.fresh.count(sql)
    }

    /// How many rows `table` holds.
    pub fn rows(&self, table: &str) -> i64 {
        self.count(&format!("SELECT COUNT(*) AS n FROM {table}"))
    }

    /// How many rows of `table` meet `condition`.
    pub fn rows_where(&self, table: &str, condition: &str) -> i64 {
        self.count(&format!(
            "SELECT COUNT(*) AS n FROM {table} WHERE {condition}"
        ))
    }
}

/// Runs `test` on a fresh SQLite database, then on a fresh PostgreSQL database (see
/// `testkit::postgres_admin_url` for what happens without one). An unreachable PostgreSQL
/// fails the test.
pub async fn each_backend<F, Fut>(test: F)
where
    F: Fn(TestDb) -> Fut,
    Fut: Future<Output = ()>,
{
    eprintln!("-- on SQLite");
    let sqlite = tokio::task::spawn_blocking(|| TestDb::open(FreshDatabase::sqlite()))
        .await
        .expect("SQLite setup");
    test(sqlite).await;
    if let Some(pg) = postgres_only().await {
        eprintln!("-- on PostgreSQL");
        test(pg).await;
    }
}

/// A fresh PostgreSQL test database, for what only PostgreSQL has (a server that ends its
/// connections); `None` after a `SKIPPED` line when PostgreSQL is not configured.
pub async fn postgres_only() -> Option<TestDb> {
    // Asked here, on the test's own thread, so a SKIPPED line names the test.
    testkit::postgres_admin_url()?;
    let pg = tokio::task::spawn_blocking(|| {
        FreshDatabase::postgres()
            .map(TestDb::open)
            .expect("PostgreSQL is configured")
    })
    .await
    .expect("PostgreSQL setup");
    Some(pg)
}

/// Runs `test` on an empty, unmigrated database on each backend, as [`each_backend`] does.
pub async fn each_empty_backend<F, Fut>(test: F)
where
    F: Fn(FreshDatabase) -> Fut,
    Fut: Future<Output = ()>,
{
    eprintln!("-- on SQLite");
    test(FreshDatabase::sqlite()).await;
    if testkit::postgres_admin_url().is_some() {
        eprintln!("-- on PostgreSQL");
        let pg = tokio::task::spawn_blocking(|| {
            FreshDatabase::postgres().expect("PostgreSQL is configured")
        })
        .await
        .expect("PostgreSQL setup");
        test(pg).await;
    }
}

impl TestDb {
    /// The stored operation, which must exist.
    pub async fn db_get(&self, id: OperationId) -> Operation {
        self.db.get(id).await.expect("get").expect("stored")
    }
}

impl TestDb {
    /// Runs raw SQL that may be refused, with the database's message.
    pub fn try_exec(&self, sql: &str) -> Result<(), String> {
        self.fresh.try_exec(sql)
    }
}

impl TestDb {
    /// Another handle on the same database, with its own pool, caches and SQLite writer lock:
    /// what a second gateway process would have.
    pub fn second_process(&self) -> Database {
        Database::connect_with(&self.url, options()).expect("a second handle")
    }
}

impl TestDb {
    /// The ledger entries of operation `id`.
    pub async fn ledger_of(&self, id: OperationId) -> Vec<domain::story::LedgerEntry> {
        self.db.operation_ledger(id).await.expect("ledger")
    }

    /// The callbacks of operation `id`, each with its deliveries.
    pub async fn callbacks_of(&self, id: OperationId) -> Vec<domain::story::CallbackDelivery> {
        self.db.operation_callbacks(id).await.expect("callbacks")
    }
}

impl TestDb {
    /// The newest ten callbacks in `state`, or in any state.
    pub async fn callbacks_in(&self, state: Option<CallbackState>) -> Vec<CallbackStatus> {
        self.db.list(state, 10).await.expect("list callbacks")
    }
}

impl TestDb {
    /// Every balance equals the sum of its ledger entries, each entry records the balance it
    /// left, and in every currency the balances plus the fee account equal what came in less
    /// what went out.
    pub async fn assert_ledger_verifies(&self) {
        assert_eq!(self.db.verify_ledger().await.expect("verify"), vec![]);
        let recorded = crate::migrations::recorded_in(self);
        // A database reverted to before disputes has no table of them for the flows to read
        // (a gateway migrates before it serves, so only these tests meet one).
        if recorded.has(crate::migrations::DISPUTES) {
            let flows = self.db.ledger_flows().await.expect("flows");
            let unbalanced: Vec<_> = flows.iter().filter(|f| !f.balanced()).collect();
            assert!(unbalanced.is_empty(), "{unbalanced:?}");
        }
        // A database reverted to before entries recorded their balance has no chain yet.
        if recorded.has(crate::migrations::BALANCE_TRANSACTIONS) {
            assert_eq!(self.db.broken_entries(100).await.expect("chain"), vec![]);
        }
    }
}

/// How many of `results` succeeded and how many failed as `expected` holds; any other
/// failure fails the test.
pub fn tally<T, E: std::fmt::Debug>(
    results: &[Result<T, E>],
    expected: impl Fn(&E) -> bool,
) -> (usize, usize) {
    let mut counts = (0, 0);
    for result in results {
        match result {
            Ok(_) => counts.0 += 1,
            Err(error) if expected(error) => counts.1 += 1,
            Err(other) => panic!("unexpected error: {other:?}"),
        }
    }
    counts
}

/// Runs `task(0)` to `task(n - 1)` as `n` tasks released at the same moment; their answers in
/// order.
pub async fn all_at_once<F, Fut>(n: usize, task: F) -> Vec<Fut::Output>
where
    F: Fn(usize) -> Fut,
    Fut: Future + Send + 'static,
    Fut::Output: Send + 'static,
{
    let start = Arc::new(Barrier::new(n));
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let (start, work) = (start.clone(), task(i));
            tokio::spawn(async move {
                start.wait().await;
                work.await
            })
        })
        .collect();
    futures::future::join_all(tasks)
        .await
        .into_iter()
        .map(|joined| joined.expect("task"))
        .collect()
}
