//! A fresh database per test: a temp SQLite file, or a PostgreSQL database created on the
//! server named by `GATEWAY_TEST_DATABASE_URL` and dropped afterwards.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;

/// The variable naming the PostgreSQL server the tests may create databases on.
pub const PG_VAR: &str = "GATEWAY_TEST_DATABASE_URL";

/// Held by tests that run several PostgreSQL gateways at once: each may pool 16 connections,
/// and two such tests side by side could pass the server's default limit of 100.
static SEVERAL_GATEWAYS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Waits until no other test runs several PostgreSQL gateways; hold the guard to the end.
pub async fn several_postgres_gateways() -> tokio::sync::MutexGuard<'static, ()> {
    SEVERAL_GATEWAYS.lock().await
}

/// Which engine a test database runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// One test's database; a PostgreSQL one is dropped (with its connections) when this drops.
pub struct TestDb {
    /// What `GATEWAY_DATABASE_URL` is set to for the gateway processes.
    pub url: String,
    pub backend: Backend,
    place: Place,
}

enum Place {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Place::Postgres { admin_url, name } = &self.place {
            match PgConnection::establish(admin_url) {
                Ok(mut admin) => {
                    let drop = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                    if let Err(e) = admin.batch_execute(&drop) {
                        eprintln!("could not drop the test database {name}: {e}");
                    }
                }
                Err(e) => eprintln!("could not drop the test database {name}: {e}"),
            }
        }
    }
}

impl TestDb {
    /// A new SQLite file in a temp directory (the gateway creates and migrates it).
    pub fn sqlite() -> TestDb {
        let dir = tempfile::Builder::new()
            .prefix("gateway-system-")
            .tempdir()
            .expect("a temp dir");
        let url = format!("sqlite://{}", dir.path().join("gateway.db").display());
        TestDb {
            url,
            backend: Backend::Sqlite,
            place: Place::Sqlite(dir),
        }
    }

    /// A new, empty PostgreSQL database, or `None` (after saying so) when
    /// `GATEWAY_TEST_DATABASE_URL` is not set. A set but unreachable server fails the test.
    pub fn postgres(test: &str) -> Option<TestDb> {
        let admin_url = match std::env::var(PG_VAR) {
            Ok(url) if !url.trim().is_empty() => url,
            _ => {
                eprintln!("{test}: skipped, {PG_VAR} is not set (PostgreSQL tests need it)");
                return None;
            }
        };
        let mut admin = PgConnection::establish(&admin_url).unwrap_or_else(|e| {
            panic!("{PG_VAR} is set to {admin_url:?} but PostgreSQL cannot be reached: {e}")
        });
        let name = format!("sys_{}", uuid::Uuid::new_v4().simple());
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("cannot create the test database {name}: {e}"));
        let mut url = url::Url::parse(&admin_url)
            .unwrap_or_else(|e| panic!("{PG_VAR} is not a URL ({e}): {admin_url:?}"));
        url.set_path(&name);
        Some(TestDb {
            url: url.to_string(),
            backend: Backend::Postgres,
            place: Place::Postgres { admin_url, name },
        })
    }

    /// The database for a test that runs on `backend`; `None` if PostgreSQL is not configured.
    pub fn on(backend: Backend, test: &str) -> Option<TestDb> {
        match backend {
            Backend::Sqlite => Some(TestDb::sqlite()),
            Backend::Postgres => TestDb::postgres(test),
        }
    }

    fn raw(&self) -> Raw {
        match self.backend {
            Backend::Sqlite => Raw::Sqlite(
                SqliteConnection::establish(self.url.trim_start_matches("sqlite://"))
                    .expect("a raw SQLite connection"),
            ),
            Backend::Postgres => {
                Raw::Pg(PgConnection::establish(&self.url).expect("a raw PostgreSQL connection"))
            }
        }
    }

    /// Runs raw SQL behind the gateway's back (to tamper with data as a bug or an operator might).
    pub fn exec(&self, sql: &str) {
        let done = match self.raw() {
            Raw::Sqlite(mut c) => c
                .batch_execute(&format!("PRAGMA busy_timeout = 10000; {sql}"))
                .map(drop),
            Raw::Pg(mut c) => c.batch_execute(sql),
        };
        done.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// The one number a query returns in a column named `n`.
    pub fn count(&self, sql: &str) -> i64 {
        #[derive(QueryableByName)]
        struct N {
            #[diesel(sql_type = BigInt)]
            n: i64,
        }
        let query = diesel::sql_query(sql);
        let row: N = match self.raw() {
            Raw::Sqlite(mut c) => {
                let _ = c.batch_execute("PRAGMA busy_timeout = 10000;");
                query.get_result(&mut c)
            }
            Raw::Pg(mut c) => query.get_result(&mut c),
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
        row.n
    }
}

enum Raw {
    Sqlite(SqliteConnection),
    Pg(PgConnection),
}
