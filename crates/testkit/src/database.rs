//! A fresh database per test: a temp SQLite file, or a PostgreSQL database created on the
//! server named by `GATEWAY_TEST_DATABASE_URL` and dropped (with its connections) afterwards.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;

use crate::skip::{postgres_admin_url, PG_VAR};

/// Which engine a test database runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// One test's empty database. Nothing is migrated: the code under test does that.
pub struct FreshDatabase {
    /// `sqlite://PATH` or `postgres://.../NAME`, as `GATEWAY_DATABASE_URL` takes it.
    pub url: String,
    pub backend: Backend,
    place: Place,
}

enum Place {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl Drop for FreshDatabase {
    fn drop(&mut self) {
        if let Place::Postgres { admin_url, name } = &self.place {
            let dropped = PgConnection::establish(admin_url)
                .map_err(|e| e.to_string())
                .and_then(|mut admin| {
                    admin
                        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .map_err(|e| e.to_string())
                });
            if let Err(error) = dropped {
                eprintln!("could not drop the test database {name}: {error}");
            }
        }
    }
}

impl FreshDatabase {
    /// A new SQLite file in a temp directory.
    pub fn sqlite() -> FreshDatabase {
        let dir = tempfile::Builder::new()
            .prefix("gateway-test-")
            .tempdir()
            .expect("a temp dir");
        let url = format!("sqlite://{}", dir.path().join("gateway.db").display());
        FreshDatabase {
            url,
            backend: Backend::Sqlite,
            place: Place::Sqlite(dir),
        }
    }

    /// A new, empty PostgreSQL database, or `None` (after a `SKIPPED` line) when
    /// `GATEWAY_TEST_DATABASE_URL` is not set; see [`crate::postgres_admin_url`]. A set but
    /// unreachable server fails the test.
    pub fn postgres() -> Option<FreshDatabase> {
        let admin_url = postgres_admin_url()?;
        let mut admin = PgConnection::establish(&admin_url).unwrap_or_else(|e| {
            panic!("{PG_VAR} is set to {admin_url:?} but PostgreSQL cannot be reached: {e}")
        });
        let name = format!("test_{}", uuid::Uuid::new_v4().simple());
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("cannot create the test database {name}: {e}"));
        let mut url = url::Url::parse(&admin_url)
            .unwrap_or_else(|e| panic!("{PG_VAR} is not a URL ({e}): {admin_url:?}"));
        url.set_path(&name);
        Some(FreshDatabase {
            url: url.to_string(),
            backend: Backend::Postgres,
            place: Place::Postgres { admin_url, name },
        })
    }

    /// A new, empty database on the PostgreSQL server (or cluster) of `admin_url`, which may
    /// name several hosts (`postgres://u@h1:6001,h2:6002/gw?target_session_attrs=...`): the
    /// new database's URL is `admin_url` with the database's name in place of its path.
    pub fn postgres_at(admin_url: &str) -> FreshDatabase {
        let mut admin = PgConnection::establish(admin_url)
            .unwrap_or_else(|e| panic!("PostgreSQL at {admin_url:?} cannot be reached: {e}"));
        let name = format!("test_{}", uuid::Uuid::new_v4().simple());
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("cannot create the test database {name}: {e}"));
        FreshDatabase {
            url: with_database(admin_url, &name),
            backend: Backend::Postgres,
            place: Place::Postgres {
                admin_url: admin_url.to_string(),
                name,
            },
        }
    }

    /// A fresh database on `backend`; `None` if PostgreSQL is not configured.
    pub fn on(backend: Backend) -> Option<FreshDatabase> {
        match backend {
            Backend::Sqlite => Some(FreshDatabase::sqlite()),
            Backend::Postgres => FreshDatabase::postgres(),
        }
    }

    fn raw(&self) -> Raw {
        match self.backend {
            Backend::Sqlite => {
                let mut conn =
                    SqliteConnection::establish(self.url.trim_start_matches("sqlite://"))
                        .expect("a raw SQLite connection");
                conn.batch_execute("PRAGMA busy_timeout = 10000;")
                    .expect("a busy timeout");
                Raw::Sqlite(conn)
            }
            Backend::Postgres => {
                Raw::Pg(PgConnection::establish(&self.url).expect("a raw PostgreSQL connection"))
            }
        }
    }

    /// Runs raw SQL behind the code's back (to tamper with data as a bug or an operator might).
    pub fn exec(&self, sql: &str) {
        self.try_exec(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Runs raw SQL that may be refused, with the database's message.
    pub fn try_exec(&self, sql: &str) -> Result<(), String> {
        match self.raw() {
            Raw::Sqlite(mut c) => c.batch_execute(sql),
            Raw::Pg(mut c) => c.batch_execute(sql),
        }
        .map_err(|e| e.to_string())
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
            Raw::Sqlite(mut c) => query.get_result(&mut c),
            Raw::Pg(mut c) => query.get_result(&mut c),
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
        row.n
    }
}

/// `url` (a libpq URL, several hosts allowed) naming database `name` instead of its own.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_end = base
        .find("://")
        .map(|scheme| scheme + 3)
        .and_then(|start| base[start..].find('/').map(|slash| start + slash))
        .unwrap_or(base.len());
    let mut named = format!("{}/{name}", &base[..authority_end]);
    if let Some(query) = query {
        named.push('?');
        named.push_str(query);
    }
    named
}

enum Raw {
    Sqlite(SqliteConnection),
    Pg(PgConnection),
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn the_database_is_put_in_place_of_the_path_with_several_hosts_and_a_query() {
        assert_eq!(
            with_database(
                "postgres://u@h1:6001,h2:6002/gw?target_session_attrs=read-write",
                "t"
            ),
            "postgres://u@h1:6001,h2:6002/t?target_session_attrs=read-write"
        );
        assert_eq!(with_database("postgres://u@h", "t"), "postgres://u@h/t");
    }
}
