//! A fresh database per test on each backend, and raw SQL for what the public API does not show.

use std::future::Future;

use adapters_db::{Backend, Database, DbOptions};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use domain::operation::Operation;
use domain::ports::OperationStore;
use domain::OperationId;

pub use crate::doubles::gateway;
pub use crate::fixtures::*;

/// The variable naming the PostgreSQL server to test against.
const PG_VAR: &str = "GATEWAY_TEST_DATABASE_URL";

/// One test's database: a temp SQLite file, or a fresh PostgreSQL database dropped afterwards.
pub struct TestDb {
    pub db: Database,
    pub url: String,
    _place: Place,
}

/// Keeps a test's closure from capturing `db` alone (edition 2021 captures disjoint fields),
/// which would drop the database while the test still runs. Fields then drop in order: the
/// pool first, then the place.
impl Drop for TestDb {
    fn drop(&mut self) {}
}

enum Place {
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

fn options() -> DbOptions {
    DbOptions {
        max_connections: Some(8),
        ..DbOptions::default()
    }
}

impl TestDb {
    fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("gateway.db").display());
        let db = Database::connect_with(&url, options()).expect("open SQLite");
        db.migrate().expect("migrate SQLite");
        TestDb {
            db,
            url,
            _place: Place::Sqlite(dir),
        }
    }

    fn postgres(admin_url: &str) -> TestDb {
        let mut admin = PgConnection::establish(admin_url)
            .unwrap_or_else(|e| panic!("{PG_VAR} is set but PostgreSQL cannot be reached: {e}"));
        let name = format!("test_{}", uuid::Uuid::new_v4().simple());
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create the test database");
        let mut url = url::Url::parse(admin_url).expect("a valid PostgreSQL URL");
        url.set_path(&name);
        let place = Place::Postgres {
            admin_url: admin_url.to_string(),
            name,
        };
        let url = url.to_string();
        let db = Database::connect_with(&url, options()).expect("open PostgreSQL");
        db.migrate().expect("migrate PostgreSQL");
        TestDb {
            db,
            url,
            _place: place,
        }
    }

    pub fn backend(&self) -> Backend {
        self.db.backend()
    }

    fn raw(&self) -> RawConn {
        match self.backend() {
            Backend::Sqlite => RawConn::Sqlite(
                SqliteConnection::establish(self.url.trim_start_matches("sqlite://"))
                    .expect("raw SQLite connection"),
            ),
            Backend::Postgres => {
                RawConn::Pg(PgConnection::establish(&self.url).expect("raw PostgreSQL connection"))
            }
        }
    }

    /// Runs raw SQL (to tamper with data the way a bug or an operator might).
    pub fn exec(&self, sql: &str) {
        match self.raw() {
            RawConn::Sqlite(mut c) => c.batch_execute(sql),
            RawConn::Pg(mut c) => c.batch_execute(sql),
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// The single BIGINT a query returns as `n`.
    pub fn count(&self, sql: &str) -> i64 {
        #[derive(QueryableByName)]
        struct N {
            #[diesel(sql_type = BigInt)]
            n: i64,
        }
        let query = diesel::sql_query(sql);
        let row: N = match self.raw() {
            RawConn::Sqlite(mut c) => query.get_result(&mut c),
            RawConn::Pg(mut c) => query.get_result(&mut c),
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
        row.n
    }
}

enum RawConn {
    Sqlite(SqliteConnection),
    Pg(PgConnection),
}

/// Runs `test` on a fresh SQLite database, then (when `GATEWAY_TEST_DATABASE_URL` is set) on a
/// fresh PostgreSQL database. An unreachable PostgreSQL fails the test.
pub async fn each_backend<F, Fut>(test: F)
where
    F: Fn(TestDb) -> Fut,
    Fut: Future<Output = ()>,
{
    eprintln!("-- on SQLite");
    let sqlite = tokio::task::spawn_blocking(TestDb::sqlite)
        .await
        .expect("SQLite setup");
    test(sqlite).await;
    match std::env::var(PG_VAR) {
        Ok(admin_url) if !admin_url.is_empty() => {
            eprintln!("-- on PostgreSQL");
            let pg = tokio::task::spawn_blocking(move || TestDb::postgres(&admin_url))
                .await
                .expect("PostgreSQL setup");
            test(pg).await;
        }
        _ => eprintln!("-- PostgreSQL skipped: {PG_VAR} is not set"),
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
        match self.raw() {
            RawConn::Sqlite(mut c) => c.batch_execute(sql),
            RawConn::Pg(mut c) => c.batch_execute(sql),
        }
        .map_err(|e| e.to_string())
    }
}

impl TestDb {
    /// Another handle on the same database, with its own pool, caches and SQLite writer lock:
    /// what a second gateway process would have.
    pub fn second_process(&self) -> Database {
        Database::connect_with(&self.url, options()).expect("a second handle")
    }
}
