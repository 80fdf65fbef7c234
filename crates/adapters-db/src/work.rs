//! Units of work: one blocking task, one pooled connection, one transaction, retried a few
//! times on transient conflicts (SQLite busy, PostgreSQL serialization failure or deadlock).
//!
//! Losing the database (a closed or reset connection, a server shutting down, a session
//! that became read-only after a failover) is `Unavailable`, never a bug. The connection is
//! then dropped by the pool, and for a while every checked-out connection is pinged first
//! ([`Connections::retrying`]), so that the pool's other connections to a lost server are
//! found before a unit of work runs on them. A unit of work that lost its connection before
//! anything of it could have been committed ([`TxError::Unsent`]: at BEGIN, at a statement
//! before COMMIT, or when libpq sent nothing) runs again on a fresh connection; one that lost
//! it at COMMIT (or at its one autocommitted statement) has an unknown outcome and is never
//! run again here: the caller answers 503 and the merchant's retry resolves it through
//! idempotency.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use diesel::connection::{AnsiTransactionManager, TransactionManager};
use diesel::r2d2::Pool;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use domain::ports::StoreError;

use diesel::r2d2::{PooledConnection, R2D2Connection};

use crate::conn::{DbConn, Manager, Pooled};

/// How long after a lost connection every checked-out connection is pinged before use.
const SUSPECT_FOR: Duration = Duration::from_secs(10);

/// The connections units of work run on: the pool, and on SQLite this process's writer lock.
pub(crate) struct Connections {
    pub(crate) pool: Pool<Manager>,
    /// SQLite only: this process's writers take turns here.
    writer: Option<Mutex<()>>,
    /// Until when (milliseconds since the epoch) connections are pinged at check-out: set
    /// when one was found lost, as its pool-mates may be too.
    suspect_until: AtomicI64,
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Connections {
    /// `pool`'s connections; with `one_writer` (SQLite), writers take turns in this process.
    pub(crate) fn new(pool: Pool<Manager>, one_writer: bool) -> Self {
        Self {
            pool,
            writer: one_writer.then(|| Mutex::new(())),
            suspect_until: AtomicI64::new(0),
        }
    }

    /// `conn` was found lost: the pool drops it when it comes back, and the connections
    /// checked out for a while are pinged first.
    pub(crate) fn lost(&self, conn: &mut Pooled) {
        if !conn.is_lost() {
            tracing::warn!("a database connection was lost; it is dropped");
        }
        conn.mark_lost();
        let until = now_millis().saturating_add(SUSPECT_FOR.as_millis() as i64);
        self.suspect_until.fetch_max(until, Ordering::Relaxed);
    }

    /// A connection from the pool, within its connection timeout. While connections are
    /// suspect (one was lost lately), each is checked first (for a write, that its session
    /// takes writes) and a lost one dropped for the next: a check did nothing, so trying
    /// another is always safe.
    pub(crate) fn checkout(&self, write: bool) -> Result<PooledConnection<Manager>, Unavailable> {
        let started = std::time::Instant::now();
        loop {
            let mut conn = self.pool.get().map_err(Unavailable::NoConnection)?;
            if now_millis() >= self.suspect_until.load(Ordering::Relaxed) {
                return Ok(conn);
            }
            match usable(&mut conn, write) {
                Ok(()) => return Ok(conn),
                Err(error) if started.elapsed() >= self.pool.connection_timeout() => {
                    self.lost(&mut conn);
                    return Err(Unavailable::ConnectionLost(error));
                }
                Err(_) => self.lost(&mut conn),
            }
        }
    }

    /// SQLite: the in-process writer lock (held for one write transaction).
    pub(crate) fn writer(&self) -> Option<MutexGuard<'_, ()>> {
        self.writer
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Checks out a connection and runs `once`, again after a short pause on transient errors.
    pub(crate) fn retrying<T, E: From<StoreError>>(
        &self,
        write: bool,
        mut once: impl FnMut(&mut DbConn) -> Result<T, TxError<E>>,
    ) -> Result<T, E> {
        retry(|| {
            // SQLite has one writer at a time: queue this process's writers here rather
            // than have them poll the file lock. Other processes still wait on busy_timeout.
            let _writer = write.then(|| self.writer()).flatten();
            let mut conn = self
                .checkout(write)
                .map_err(|e| TxError::Fail(E::from(e.into())))?;
            let result = once(&mut conn);
            if let Err(TxError::Db(error) | TxError::Unsent(error)) = &result {
                if is_connection_lost(error) {
                    self.lost(&mut conn);
                }
            }
            result
        })
    }
}

/// Why one attempt at a unit of work stopped; anything but `Ok` rolls the transaction back.
#[derive(Debug)]
pub(crate) enum TxError<E> {
    /// A database error: transient ones are retried, the rest end the unit of work.
    Db(DieselError),
    /// A business outcome (e.g. insufficient balance), returned as is.
    Fail(E),
    /// A conflict a fresh attempt resolves (e.g. a balance row inserted concurrently).
    Retry(&'static str),
    /// The connection was lost before anything of the unit of work could have been
    /// committed: a fresh connection may run it again.
    Unsent(DieselError),
}

impl<E> From<DieselError> for TxError<E> {
    fn from(error: DieselError) -> Self {
        TxError::Db(error)
    }
}

/// Stored data that does not decode, or a value that does not encode: a bug, never a default.
pub(crate) fn corrupt<E: From<StoreError>>(error: anyhow::Error) -> TxError<E> {
    TxError::Fail(E::from(StoreError::Other(error)))
}

/// Converts each of `rows` as read with `each`, all or none: a row that does not convert is
/// corrupt data ([`corrupt`]).
pub(crate) fn decode_all<R, T, E: From<StoreError>>(
    rows: impl IntoIterator<Item = R>,
    each: impl FnMut(R) -> anyhow::Result<T>,
) -> Result<Vec<T>, TxError<E>> {
    rows.into_iter()
        .map(each)
        .collect::<anyhow::Result<_>>()
        .map_err(corrupt)
}

/// Attempts per unit of work before a transient conflict becomes `Unavailable`.
const MAX_ATTEMPTS: u32 = 6;

/// No new attempt starts after this long (SQLite may already have waited its busy timeout).
const RETRY_BUDGET: Duration = Duration::from_secs(8);

/// Errors after which the transaction was rolled back and a fresh attempt may succeed.
pub(crate) fn is_transient(error: &DieselError) -> bool {
    match error {
        DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => true,
        // diesel has no kinds for these: SQLITE_BUSY / SQLITE_LOCKED and PostgreSQL's 40P01.
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info) => {
            let message = info.message();
            message.contains("database is locked")
                || message.contains("database table is locked")
                || message.contains("deadlock detected")
        }
        _ => false,
    }
}

/// Whether `conn` answers, and for a write on PostgreSQL, whether its session takes writes
/// (not a standby's nor a read-only one); a session that does not is an error as if lost.
pub(crate) fn usable(conn: &mut DbConn, write: bool) -> Result<(), DieselError> {
    if !write || !matches!(conn, DbConn::Pg(_)) {
        return conn.ping();
    }
    let writable: bool = diesel::RunQueryDsl::get_result(
        diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(WRITABLE)),
        conn,
    )?;
    if writable {
        Ok(())
    } else {
        Err(DieselError::DatabaseError(
            DatabaseErrorKind::ReadOnlyTransaction,
            Box::new("the session does not take writes".to_string()),
        ))
    }
}

/// PostgreSQL: whether this session takes writes (a primary's, not read-only).
const WRITABLE: &str =
    "NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off'";

/// Whether `error` says the connection or its server is gone, or no longer takes writes:
/// closed or reset, never opened, a server shutting down or restarting, a session that
/// became read-only (a primary demoted by a failover), or a transaction manager left broken
/// by a failed rollback. The connection must not be used again.
pub(crate) fn is_connection_lost(error: &DieselError) -> bool {
    match error {
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::ReadOnlyTransaction,
            _,
        ) => true,
        // Also libpq refusing a malformed call (a bug): lost only with a loss's words.
        DieselError::DatabaseError(
            DatabaseErrorKind::Unknown | DatabaseErrorKind::UnableToSendCommand,
            info,
        ) => {
            let message = info.message();
            LOST_MESSAGES.iter().any(|lost| message.contains(lost))
        }
        DieselError::BrokenTransactionManager => true,
        _ => false,
    }
}

/// PostgreSQL's and libpq's words for a lost server that diesel gives no kind of its own
/// (SQLSTATE 57P01 to 57P03, 08xxx and the client's own messages).
const LOST_MESSAGES: [&str; 13] = [
    "terminating connection",
    "the database system is shutting down",
    "the database system is starting up",
    "the database system is in recovery mode",
    "the database system is not yet accepting connections",
    "server closed the connection",
    "no connection to the server",
    "could not receive data from server",
    "could not send data to server",
    "SSL SYSCALL error",
    "SSL connection has been closed unexpectedly",
    "SSL error",
    "connection to server",
];

/// Whether libpq sent nothing of the statement that failed with `error`: the connection was
/// known dead before it ("no connection to the server"), so nothing could have run.
fn nothing_sent(error: &DieselError) -> bool {
    matches!(
        error,
        DieselError::DatabaseError(DatabaseErrorKind::UnableToSendCommand, info)
            if info.message().contains("no connection to the server")
    )
}

/// Whether the server refused the statement as the session is read-only (a demoted primary):
/// it did not run.
fn refused_read_only(error: &DieselError) -> bool {
    matches!(
        error,
        DieselError::DatabaseError(DatabaseErrorKind::ReadOnlyTransaction, _)
    )
}

/// `error` of a step before COMMIT, or of a read: a lost connection there means nothing was
/// committed ([`TxError::Unsent`]), so it may run again on a fresh connection.
pub(crate) fn lost_is_unsent<E>(error: TxError<E>) -> TxError<E> {
    match error {
        TxError::Db(error) if is_connection_lost(&error) => TxError::Unsent(error),
        other => other,
    }
}

/// Why the database could not do a unit of work now; a later try may succeed.
#[derive(Debug, thiserror::Error)]
pub enum Unavailable {
    #[error("no database connection")]
    NoConnection(#[source] r2d2::Error),
    #[error("database connection lost")]
    ConnectionLost(#[source] DieselError),
    #[error("database busy, retries exhausted")]
    Busy(#[source] DieselError),
    #[error("conflict persisted: {0}")]
    Conflict(&'static str),
}

impl From<Unavailable> for StoreError {
    fn from(error: Unavailable) -> Self {
        StoreError::Unavailable(Box::new(error))
    }
}

/// The port error for a database error that ends a unit of work.
pub(crate) fn store_error(error: DieselError) -> StoreError {
    match &error {
        _ if is_connection_lost(&error) => Unavailable::ConnectionLost(error).into(),
        _ if is_transient(&error) => Unavailable::Busy(error).into(),
        _ => StoreError::Other(anyhow::Error::new(error)),
    }
}

fn backoff(attempt: u32) -> Duration {
    // 5, 10, 20, 40, 80 ms, plus up to 5 ms of jitter so racing retries spread out.
    let base = 5u64 << attempt.saturating_sub(1).min(5);
    let jitter = u64::from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_micros())
            .unwrap_or(0)
            % 5_000,
    );
    Duration::from_millis(base) + Duration::from_micros(jitter)
}

/// Runs `work` in one write transaction: `BEGIN IMMEDIATE` on SQLite (the write lock is taken
/// up front, so no read-then-upgrade deadlock), `BEGIN` (read committed) on PostgreSQL.
pub(crate) fn write_tx<T, E>(
    conn: &mut DbConn,
    work: impl FnOnce(&mut DbConn) -> Result<T, TxError<E>>,
) -> Result<T, TxError<E>> {
    let begun = match conn {
        DbConn::Sqlite(c) => AnsiTransactionManager::begin_transaction_sql(c, "BEGIN IMMEDIATE"),
        DbConn::Pg(c) => AnsiTransactionManager::begin_transaction(c),
    };
    begun.map_err(|e| lost_is_unsent(TxError::Db(e)))?;
    match work(conn).map_err(lost_is_unsent) {
        Ok(value) => {
            // A lost connection here leaves the outcome unknown: `Db`, never run again.
            <DbConn as TransactionManager<DbConn>>::commit_transaction(conn)?;
            Ok(value)
        }
        Err(error) => {
            // A failed rollback leaves the connection broken; the pool then drops it, which
            // ends the transaction on the server. The original error is the one to report.
            if let Err(rollback) =
                <DbConn as TransactionManager<DbConn>>::rollback_transaction(conn)
            {
                tracing::warn!(error = %rollback, "rollback failed; the connection is dropped");
            }
            Err(error)
        }
    }
}

/// Runs `work`, reads only, in one snapshot: a read-only repeatable-read transaction on
/// PostgreSQL, a deferred one on SQLite (WAL: its first read fixes what it sees).
pub(crate) fn snapshot_tx<T, E: From<StoreError>>(
    conn: &mut DbConn,
    work: impl FnOnce(&mut DbConn) -> Result<T, TxError<E>>,
) -> Result<T, TxError<E>> {
    let begun = match conn {
        DbConn::Sqlite(c) => AnsiTransactionManager::begin_transaction_sql(c, "BEGIN"),
        DbConn::Pg(c) => AnsiTransactionManager::begin_transaction_sql(
            c,
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        ),
    };
    begun.map_err(|e| lost_is_unsent(TxError::Db(e)))?;
    let result = work(conn);
    // Nothing was written: ending it either way keeps what was read, and a lost connection
    // lost nothing, so it may be read again.
    let result = match <DbConn as TransactionManager<DbConn>>::commit_transaction(conn) {
        Ok(()) => result,
        Err(error) => result.and(Err(error.into())),
    };
    result.map_err(|error| match error {
        // The snapshot is READ ONLY: a write refused in it is a bug, not a demoted server.
        TxError::Db(DieselError::DatabaseError(DatabaseErrorKind::ReadOnlyTransaction, info)) => {
            corrupt(anyhow::anyhow!(
                "a write in a read-only snapshot: {}",
                info.message()
            ))
        }
        other => lost_is_unsent(other),
    })
}

/// Runs `work`, one PostgreSQL statement atomic by itself, without BEGIN and COMMIT around it
/// (one round trip); on SQLite in a write transaction ([`write_tx`]).
pub(crate) fn statement_tx<T, E>(
    conn: &mut DbConn,
    work: impl FnOnce(&mut DbConn) -> Result<T, TxError<E>>,
) -> Result<T, TxError<E>> {
    match conn {
        // Autocommitted: a lost connection leaves it unknown, unless nothing was sent.
        DbConn::Pg(_) => work(conn).map_err(|error| match error {
            TxError::Db(error) if nothing_sent(&error) || refused_read_only(&error) => {
                TxError::Unsent(error)
            }
            other => other,
        }),
        DbConn::Sqlite(_) => write_tx(conn, work),
    }
}

/// Runs blocking storage work off the async executor.
pub(crate) async fn blocking<T, E>(
    work: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<StoreError> + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(join) => Err(E::from(StoreError::Other(anyhow::anyhow!(
            "storage task failed: {join}"
        )))),
    }
}

/// Runs `attempt` (one unit of work on its own connection), again after a short pause when it
/// fails transiently, within [`MAX_ATTEMPTS`] and [`RETRY_BUDGET`].
pub(crate) fn retry<T, E: From<StoreError>>(
    mut attempt: impl FnMut() -> Result<T, TxError<E>>,
) -> Result<T, E> {
    let started = std::time::Instant::now();
    let mut tries = 1;
    loop {
        let result = attempt();
        let may_retry = tries < MAX_ATTEMPTS && started.elapsed() < RETRY_BUDGET;
        let why = match result {
            Ok(value) => return Ok(value),
            Err(TxError::Fail(error)) => return Err(error),
            Err(TxError::Db(error)) if is_transient(&error) && may_retry => error.to_string(),
            Err(TxError::Retry(why)) if may_retry => why.to_string(),
            Err(TxError::Unsent(error)) if may_retry => format!("connection lost: {error}"),
            Err(TxError::Db(error) | TxError::Unsent(error)) => {
                return Err(E::from(store_error(error)))
            }
            Err(TxError::Retry(why)) => return Err(E::from(Unavailable::Conflict(why).into())),
        };
        tracing::debug!(attempt = tries, reason = %why, "retrying a unit of work");
        std::thread::sleep(backoff(tries));
        tries += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db_error(kind: DatabaseErrorKind, message: &str) -> DieselError {
        DieselError::DatabaseError(kind, Box::new(message.to_string()))
    }

    #[test]
    fn a_lost_server_is_unavailable_and_never_a_bug() {
        for lost in [
            db_error(
                DatabaseErrorKind::ClosedConnection,
                "server closed the connection unexpectedly",
            ),
            db_error(
                DatabaseErrorKind::UnableToSendCommand,
                "no connection to the server\n",
            ),
            db_error(
                DatabaseErrorKind::ReadOnlyTransaction,
                "cannot execute INSERT in a read-only transaction",
            ),
            db_error(
                DatabaseErrorKind::Unknown,
                "FATAL:  terminating connection due to administrator command",
            ),
            db_error(
                DatabaseErrorKind::Unknown,
                "FATAL:  the database system is shutting down",
            ),
            db_error(
                DatabaseErrorKind::Unknown,
                "SSL SYSCALL error: EOF detected",
            ),
            DieselError::BrokenTransactionManager,
        ] {
            assert!(is_connection_lost(&lost), "{lost}");
            assert!(
                matches!(store_error(lost), StoreError::Unavailable(_)),
                "a lost server is 503"
            );
        }
        for bug in [
            db_error(DatabaseErrorKind::UniqueViolation, "duplicate key"),
            db_error(DatabaseErrorKind::Unknown, "syntax error at or near"),
            DieselError::NotFound,
        ] {
            assert!(!is_connection_lost(&bug), "{bug}");
            assert!(matches!(store_error(bug), StoreError::Other(_)));
        }
    }

    #[test]
    fn only_a_loss_before_commit_or_with_nothing_sent_is_run_again() {
        let lost = || db_error(DatabaseErrorKind::ClosedConnection, "server closed");
        assert!(matches!(
            lost_is_unsent::<StoreError>(TxError::Db(lost())),
            TxError::Unsent(_)
        ));
        assert!(matches!(
            lost_is_unsent::<StoreError>(TxError::Db(DieselError::NotFound)),
            TxError::Db(_)
        ));
        assert!(nothing_sent(&db_error(
            DatabaseErrorKind::UnableToSendCommand,
            "no connection to the server\n"
        )));
        assert!(!nothing_sent(&lost()), "it may have run: unknown");

        // `retry` runs an unsent unit again, and never one whose outcome is unknown.
        let mut runs = 0;
        let unsent: Result<(), StoreError> = retry(|| {
            runs += 1;
            if runs == 1 {
                Err(TxError::Unsent(lost()))
            } else {
                Ok(())
            }
        });
        assert!(unsent.is_ok());
        assert_eq!(runs, 2);
        let mut runs = 0;
        let unknown: Result<(), StoreError> = retry(|| {
            runs += 1;
            Err(TxError::Db(lost()))
        });
        assert!(matches!(unknown, Err(StoreError::Unavailable(_))));
        assert_eq!(runs, 1, "an unknown outcome is never done again");
    }
}
