//! Units of work: one blocking task, one pooled connection, one transaction, retried a few
//! times on transient conflicts (SQLite busy, PostgreSQL serialization failure or deadlock).

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use diesel::connection::{AnsiTransactionManager, TransactionManager};
use diesel::r2d2::Pool;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use domain::ports::StoreError;

use crate::conn::{DbConn, Manager};

/// The connections units of work run on: the pool, and on SQLite this process's writer lock.
pub(crate) struct Connections {
    pub(crate) pool: Pool<Manager>,
    /// SQLite only: this process's writers take turns here.
    writer: Option<Mutex<()>>,
}

impl Connections {
    /// `pool`'s connections; with `one_writer` (SQLite), writers take turns in this process.
    pub(crate) fn new(pool: Pool<Manager>, one_writer: bool) -> Self {
        Self {
            pool,
            writer: one_writer.then(|| Mutex::new(())),
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
                .pool
                .get()
                .map_err(|e| TxError::Fail(E::from(Unavailable::NoConnection(e).into())))?;
            once(&mut conn)
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
        DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection, _) => {
            Unavailable::ConnectionLost(error).into()
        }
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
    match conn {
        DbConn::Sqlite(c) => AnsiTransactionManager::begin_transaction_sql(c, "BEGIN IMMEDIATE")?,
        DbConn::Pg(c) => AnsiTransactionManager::begin_transaction(c)?,
    }
    match work(conn) {
        Ok(value) => {
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
pub(crate) fn snapshot_tx<T, E>(
    conn: &mut DbConn,
    work: impl FnOnce(&mut DbConn) -> Result<T, TxError<E>>,
) -> Result<T, TxError<E>> {
    match conn {
        DbConn::Sqlite(c) => AnsiTransactionManager::begin_transaction_sql(c, "BEGIN")?,
        DbConn::Pg(c) => AnsiTransactionManager::begin_transaction_sql(
            c,
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        )?,
    }
    let result = work(conn);
    // Nothing was written: ending it either way keeps what was read.
    match <DbConn as TransactionManager<DbConn>>::commit_transaction(conn) {
        Ok(()) => result,
        Err(error) => result.and(Err(error.into())),
    }
}

/// Runs `work`, one PostgreSQL statement atomic by itself, without BEGIN and COMMIT around it
/// (one round trip); on SQLite in a write transaction ([`write_tx`]).
pub(crate) fn statement_tx<T, E>(
    conn: &mut DbConn,
    work: impl FnOnce(&mut DbConn) -> Result<T, TxError<E>>,
) -> Result<T, TxError<E>> {
    match conn {
        DbConn::Pg(_) => work(conn),
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
            Err(TxError::Db(error)) => return Err(E::from(store_error(error))),
            Err(TxError::Retry(why)) => return Err(E::from(Unavailable::Conflict(why).into())),
        };
        tracing::debug!(attempt = tries, reason = %why, "retrying a unit of work");
        std::thread::sleep(backoff(tries));
        tries += 1;
    }
}
