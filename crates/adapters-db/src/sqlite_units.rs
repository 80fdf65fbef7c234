//! SQLite: the units of work the group writer (`crate::sqlite_group`) queues, their types
//! erased so units of any result share one queue, and how each runs inside the group's
//! transaction or, retried, alone.

use std::sync::atomic::AtomicU64;
#[cfg(test)]
use std::sync::atomic::Ordering;

use diesel::connection::TransactionManager;
use domain::ports::StoreError;
use tokio::sync::oneshot;

use crate::conn::DbConn;
use crate::group::Group;
use crate::work::{is_transient, store_error, write_tx, Connections, TxError};

/// The units waiting for the writer, who writes them, and how many groups were written.
#[derive(Default)]
pub(crate) struct WriteGroups {
    pub(crate) queue: Group<Box<dyn Unit>>,
    /// Groups committed (or failed and run unit by unit) since the start.
    pub(crate) written: AtomicU64,
}

impl WriteGroups {
    /// Groups written since the start: fewer than the units when writes were grouped.
    #[cfg(test)]
    pub(crate) fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }
}

/// What running a unit inside the group's transaction came to.
pub(crate) enum Ran {
    /// Its writes stay (or it failed and was rolled back to its savepoint): answer it after
    /// the commit.
    Done,
    /// It asked to be retried: run it again, alone, after the commit.
    Alone,
}

/// A unit of work with its answer, its types erased so units of any result share one queue.
pub(crate) trait Unit: Send {
    /// Runs the work inside a savepoint of the open transaction and keeps its result. An
    /// error here is the group's: the savepoint could not be taken, released or rolled back.
    fn run(&mut self, conn: &mut DbConn) -> diesel::QueryResult<Ran>;

    /// Sends the result kept by [`Unit::run`] (after the group's commit).
    fn answer(self: Box<Self>);

    /// Runs the work as its own transaction, with the usual retries, and answers.
    fn run_alone(self: Box<Self>, conns: &Connections);
}

pub(crate) struct Typed<T, E, F> {
    pub(crate) work: F,
    pub(crate) result: Option<Result<T, E>>,
    pub(crate) reply: oneshot::Sender<Result<T, E>>,
}

impl<T, E, F> Unit for Typed<T, E, F>
where
    T: Send + 'static,
    E: From<StoreError> + Send + 'static,
    F: Fn(&mut DbConn) -> Result<T, TxError<E>> + Send + 'static,
{
    fn run(&mut self, conn: &mut DbConn) -> diesel::QueryResult<Ran> {
        self.result = None;
        <DbConn as TransactionManager<DbConn>>::begin_transaction(conn)?;
        let outcome = (self.work)(conn);
        let keep = outcome.is_ok();
        if keep {
            <DbConn as TransactionManager<DbConn>>::commit_transaction(conn)?;
        } else {
            <DbConn as TransactionManager<DbConn>>::rollback_transaction(conn)?;
        }
        self.result = match outcome {
            Ok(value) => Some(Ok(value)),
            Err(TxError::Fail(error)) => Some(Err(error)),
            Err(TxError::Db(error)) if !is_transient(&error) => {
                Some(Err(E::from(store_error(error))))
            }
            Err(TxError::Unsent(error)) => Some(Err(E::from(store_error(error)))),
            Err(TxError::Db(_) | TxError::Retry(_)) => return Ok(Ran::Alone),
        };
        Ok(Ran::Done)
    }

    fn answer(self: Box<Self>) {
        let answer = self.result.unwrap_or_else(|| {
            Err(E::from(StoreError::Other(anyhow::anyhow!(
                "a grouped write was answered before it ran"
            ))))
        });
        let _ = self.reply.send(answer);
    }

    fn run_alone(self: Box<Self>, conns: &Connections) {
        let work = &self.work;
        let answer = conns.retrying(true, |conn| write_tx(conn, work));
        let _ = self.reply.send(answer);
    }
}
