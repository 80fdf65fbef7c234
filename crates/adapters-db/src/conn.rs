//! The connection type over both backends and the pool's connection manager.

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::r2d2::{Error as PoolError, R2D2Connection};
use diesel::sqlite::SqliteConnection;
use diesel::Connection;

use crate::target::Target;

/// A connection to either backend: queries written once with diesel's DSL run on both, and a
/// `match` reaches the inner connection for what differs.
#[derive(diesel::MultiConnection)]
pub(crate) enum DbConn {
    Pg(PgConnection),
    Sqlite(SqliteConnection),
}

/// How long an SQLite connection waits for another writer (another process) before `BUSY`.
pub(crate) const SQLITE_BUSY_TIMEOUT_MS: u32 = 5_000;

/// Set on every SQLite connection: WAL so readers never block the writer, a busy timeout,
/// foreign keys, `synchronous = NORMAL` (durable across process crashes in WAL mode), the
/// savepoints' sub-journals in memory (each grouped write runs in a savepoint, see
/// `crate::group`; on disk they were a write per page touched), and checkpoints left to the
/// checkpoint thread up to a backstop (see `crate::checkpoint`).
fn sqlite_pragmas() -> String {
    let backstop = crate::checkpoint::BACKSTOP_PAGES;
    format!(
        "PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}; PRAGMA journal_mode = WAL; \
         PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY; \
         PRAGMA wal_autocheckpoint = {backstop};"
    )
}

/// Set on every PostgreSQL connection: the isolation the conditional updates are written for,
/// whatever the server's default.
const PG_SESSION: &str =
    "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED";

/// Opens connections for the pool, to exactly the backend the URL named (diesel's derived
/// `establish` would try each backend in turn, and SQLite accepts any string as a file name).
#[derive(Debug)]
pub(crate) struct Manager {
    target: Target,
}

impl Manager {
    pub(crate) fn new(target: Target) -> Self {
        Self { target }
    }
}

impl diesel::r2d2::ManageConnection for Manager {
    type Connection = DbConn;
    type Error = PoolError;

    fn connect(&self) -> Result<DbConn, PoolError> {
        match &self.target {
            Target::Sqlite(path) => {
                let mut conn =
                    SqliteConnection::establish(path).map_err(PoolError::ConnectionError)?;
                conn.batch_execute(&sqlite_pragmas())
                    .map_err(PoolError::QueryError)?;
                Ok(DbConn::Sqlite(conn))
            }
            Target::Postgres(url) => {
                let mut conn = PgConnection::establish(url).map_err(PoolError::ConnectionError)?;
                conn.batch_execute(PG_SESSION)
                    .map_err(PoolError::QueryError)?;
                Ok(DbConn::Pg(conn))
            }
        }
    }

    fn is_valid(&self, conn: &mut DbConn) -> Result<(), PoolError> {
        conn.ping().map_err(PoolError::QueryError)
    }

    fn has_broken(&self, conn: &mut DbConn) -> bool {
        conn.is_broken()
    }
}
