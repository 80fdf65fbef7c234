//! SQLite: group commit. Every write of this process joins a queue; one writer takes
//! everything queued (at most [`MAX_GROUP`] units of work) and runs it in one `BEGIN
//! IMMEDIATE` transaction, each unit inside a savepoint of its own, then commits once and
//! answers each unit.
//!
//! SQLite has one writer at a time anyway, so running units one after the other inside one
//! transaction changes nothing they can observe: each sees the writes of those before it,
//! exactly as if they had committed. What it saves is the per-transaction cost: the lock
//! hand-over between threads, and the WAL frames of the pages every unit touches (the
//! operations table and its indexes, the counters, the balances), which are now appended once
//! per group instead of once per unit.
//!
//! The rules:
//!
//! * **One answer per commit.** No unit is answered before the commit that holds its writes,
//!   failures included (a unit refused for a short balance read a balance written by units of
//!   the same group).
//! * **A unit fails alone.** A unit that returns an error is rolled back to its savepoint and
//!   answered with that error after the commit; the others keep their writes.
//! * **Transient conflicts are retried alone.** A unit that asks to be retried
//!   ([`TxError::Retry`], or a transient database error) is rolled back to its savepoint and run
//!   again after the commit as its own transaction, with the usual retries.
//! * **A failed group is run again unit by unit.** If the group's own statements fail (its
//!   `BEGIN IMMEDIATE` stays busy because another process writes, a savepoint cannot be
//!   released, the commit fails), the transaction is rolled back and every unit is run again
//!   as its own transaction, so each gets its exact answer.
//!
//! Nobody waits for a group to fill: the writer takes what is there, so under light load a
//! group is one unit.

use std::sync::atomic::Ordering;

use domain::ports::StoreError;
use tokio::sync::oneshot;

use crate::conn::DbConn;
use crate::database::Database;
use crate::sqlite_units::{Ran, Typed, Unit};
use crate::work::{write_tx, TxError};

/// Most units of work in one transaction: enough to amortise the commit, few enough that a
/// unit arriving just after a group started does not wait long for it.
pub(crate) const MAX_GROUP: usize = 128;

impl Database {
    /// SQLite: runs `work` in the next group's transaction (see the module docs) and returns
    /// its result once that transaction has committed. `work` may run more than once.
    pub(crate) async fn write_grouped<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&mut DbConn) -> Result<T, TxError<E>> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let unit = Box::new(Typed {
            work,
            result: None,
            reply,
        });
        // One writer: SQLite has one anyway.
        if self.inner.groups.queue.push(unit, 1) {
            let db = self.clone();
            tokio::task::spawn_blocking(move || db.write_groups());
        }
        answer.await.unwrap_or_else(|_| {
            Err(E::from(StoreError::Other(anyhow::anyhow!(
                "the grouped write was dropped"
            ))))
        })
    }

    /// Writes groups until the queue is empty. If a unit panics, the writer stops; the units
    /// still queued are written by the writer the next write starts.
    fn write_groups(&self) {
        self.inner.groups.queue.drain(MAX_GROUP, |units| {
            self.write_sqlite_group(units);
            if self.inner.catch_up.take() {
                self.catch_up_wal();
            }
        });
    }

    /// Checkpoints the frames the checkpoint thread has not copied yet, between two groups and
    /// under the writer lock, so the next write starts the WAL over (see `crate::checkpoint`).
    fn catch_up_wal(&self) {
        let done = self.retrying(true, |conn| {
            crate::checkpoint::checkpoint(conn).map_err(TxError::<StoreError>::Db)
        });
        if let Err(error) = done {
            tracing::debug!(error = %domain::ports::Chain(&error), "WAL catch-up checkpoint failed");
        }
    }

    /// One group: one transaction, then the answers (see the module docs).
    fn write_sqlite_group(&self, mut units: Vec<Box<dyn Unit>>) {
        self.inner.groups.written.fetch_add(1, Ordering::Relaxed);
        let size = units.len();
        let ran = self.retrying(true, |conn| {
            write_tx(conn, |conn| {
                units
                    .iter_mut()
                    .map(|unit| unit.run(conn).map_err(TxError::<StoreError>::Db))
                    .collect::<Result<Vec<Ran>, _>>()
            })
        });
        match ran {
            Ok(ran) => {
                let mut alone = Vec::new();
                for (unit, ran) in units.into_iter().zip(ran) {
                    match ran {
                        Ran::Done => unit.answer(),
                        Ran::Alone => alone.push(unit),
                    }
                }
                if !alone.is_empty() {
                    tracing::debug!(units = alone.len(), "grouped writes retried alone");
                }
                for unit in alone {
                    unit.run_alone(&self.inner.conns);
                }
            }
            Err(error) => {
                tracing::debug!(error = %domain::ports::Chain(&error), units = size, "grouped write failed; units run one by one");
                for unit in units {
                    unit.run_alone(&self.inner.conns);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    use diesel::connection::SimpleConnection;
    use diesel::prelude::*;
    use diesel::sql_types::BigInt;

    use super::*;

    fn scratch_database() -> (Database, std::path::PathBuf) {
        let path = std::env::temp_dir().join(format!("group-{}.db", uuid::Uuid::new_v4()));
        let db = Database::connect(&format!("sqlite://{}", path.display())).expect("connect");
        (db, path)
    }

    async fn create_table(db: &Database) {
        db.write(|conn| {
            conn.batch_execute("CREATE TABLE scratch (k INTEGER PRIMARY KEY)")?;
            Ok::<_, TxError<StoreError>>(())
        })
        .await
        .expect("table");
    }

    fn insert(conn: &mut DbConn, k: i64) -> Result<(), TxError<StoreError>> {
        diesel::sql_query("INSERT INTO scratch (k) VALUES (?)")
            .bind::<BigInt, _>(k)
            .execute(conn)?;
        Ok(())
    }

    #[derive(QueryableByName)]
    struct Key {
        #[diesel(sql_type = BigInt)]
        k: i64,
    }

    async fn keys(db: &Database) -> Vec<i64> {
        db.read(|conn| {
            Ok::<_, TxError<StoreError>>(
                diesel::sql_query("SELECT k FROM scratch ORDER BY k").load::<Key>(conn)?,
            )
        })
        .await
        .expect("keys")
        .into_iter()
        .map(|key| key.k)
        .collect()
    }

    /// 300 writes at once: every 10th (from 3) fails after writing, every 10th (from 7) asks
    /// to be retried the first time it runs. Each gets its own answer, the failed ones leave
    /// nothing, the others all commit, and far fewer transactions than writes were used.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn units_of_one_group_fail_and_retry_alone() {
        let (db, path) = scratch_database();
        create_table(&db).await;
        let before = db.inner.groups.written();
        let tasks: Vec<_> = (0..300i64)
            .map(|k| {
                let db = db.clone();
                let first = Arc::new(AtomicBool::new(true));
                tokio::spawn(async move {
                    db.write(move |conn| {
                        insert(conn, k)?;
                        match k % 10 {
                            3 => Err(TxError::Fail(StoreError::Other(anyhow::anyhow!("no")))),
                            7 if first.swap(false, Ordering::SeqCst) => Err(TxError::Retry("once")),
                            _ => Ok(k),
                        }
                    })
                    .await
                })
            })
            .collect();
        for (k, task) in (0..300i64).zip(tasks) {
            let answer = task.await.expect("task");
            if k % 10 == 3 {
                assert!(answer.is_err(), "{k}: {answer:?}");
            } else {
                assert_eq!(answer.expect("written"), k);
            }
        }
        let expected: Vec<i64> = (0..300).filter(|k| k % 10 != 3).collect();
        assert_eq!(keys(&db).await, expected);
        let groups = db.inner.groups.written() - before;
        assert!(groups < 300, "{groups} groups for 300 writes");
        std::fs::remove_file(&path).ok();
    }

    /// A write that breaks its group's transaction (here by rolling it back itself) makes the
    /// group run again write by write: it alone fails, the others are written.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_broken_group_is_run_again_one_by_one() {
        let (db, path) = scratch_database();
        create_table(&db).await;
        let tasks: Vec<_> = (0..50i64)
            .map(|k| {
                let db = db.clone();
                tokio::spawn(async move {
                    db.write(move |conn| {
                        insert(conn, k)?;
                        if k == 25 {
                            conn.batch_execute("ROLLBACK")?;
                        }
                        Ok::<_, TxError<StoreError>>(k)
                    })
                    .await
                })
            })
            .collect();
        for (k, task) in (0..50i64).zip(tasks) {
            let answer = task.await.expect("task");
            if k == 25 {
                assert!(answer.is_err(), "{answer:?}");
            } else {
                assert_eq!(answer.expect("written"), k);
            }
        }
        let expected: Vec<i64> = (0..50).filter(|k| *k != 25).collect();
        assert_eq!(keys(&db).await, expected);
        std::fs::remove_file(&path).ok();
    }
}
