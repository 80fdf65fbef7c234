//! PostgreSQL: the common creations are written together, many to a statement, by whichever
//! request finds no writer running. Two lanes:
//!
//! * [`Lane::Plain`], an operation row with no move and no callback (a deposit waiting for the
//!   user): `INSERT ... SELECT FROM unnest(...) ON CONFLICT DO NOTHING RETURNING id`; a row
//!   not returned had its id or merchantOperationId taken (`Duplicate`).
//! * [`Lane::Hold`], a payout with its hold and no callback: [`HoldMany`], which takes each
//!   merchant's holds with one conditional update and writes the rows of the merchants that
//!   had the money; the other rows are then written one by one, each as its own statement,
//!   which tells a short balance from a taken merchantOperationId exactly as the general path.
//!
//! A request queues its row and waits for the answer; up to the lane's writer count of
//! blocking tasks take everything queued (up to [`MAX_BATCH`] rows) and write it with one
//! statement, one round trip and one commit for the lot, then answer each request. No
//! request waits for a batch to fill: a writer takes what is there, so under light load a
//! batch is one row, and under heavy load the rows that arrived during the previous write.
//! Each request is still answered only after its row is committed.
//!
//! If the statement fails as a whole (a row that breaks a constraint, a taken
//! merchantOperationId among the holds), each row is written again on its own, so one bad row
//! answers for itself alone.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;

use diesel::prelude::*;
use domain::ports::{InsertError, NewOperation, StoreError};
use tokio::sync::oneshot;

use crate::conn::DbConn;
use crate::database::Database;
use crate::rows::{HoldMany, InsertMany, NewOperationRow};
use crate::store::{insert_one, Shape};
use crate::work::{corrupt, TxError};

/// Which statement writes a queued row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lane {
    Plain,
    Hold,
}

impl Lane {
    /// Most writers at once per queue. Plain rows: one writing while the next batch
    /// gathers, and one more. Holds: one per shard; merchants are split over
    /// [`HOLD_SHARDS`] queues, so two hold batches of this process never wait on each
    /// other's balance rows (and [`HoldMany`] locks its rows in key order, so batches of
    /// several processes cannot deadlock either).
    fn writers(self) -> usize {
        match self {
            Lane::Plain => 2,
            Lane::Hold => 1,
        }
    }
}

/// Queues (each with one writer) the payouts are split over, by merchant.
const HOLD_SHARDS: usize = 2;

/// Most rows in one statement.
const MAX_BATCH: usize = 256;

struct Job {
    new: NewOperation,
    reply: oneshot::Sender<Result<(), InsertError>>,
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    writers: usize,
}

/// The rows waiting to be written and how many writers run, per lane.
#[derive(Default)]
pub(crate) struct InsertQueue {
    plain: Mutex<Queue>,
    holds: [Mutex<Queue>; HOLD_SHARDS],
}

impl InsertQueue {
    fn lock(&self, lane: Lane, shard: usize) -> std::sync::MutexGuard<'_, Queue> {
        match lane {
            Lane::Plain => &self.plain,
            Lane::Hold => &self.holds[shard % HOLD_SHARDS],
        }
        .lock()
        .unwrap_or_else(|p| p.into_inner())
    }
}

/// The queue of `lane` that `new` goes to: holds by merchant, plain rows all to one.
fn shard_of(lane: Lane, new: &NewOperation) -> usize {
    match lane {
        Lane::Plain => 0,
        Lane::Hold => {
            let id = new.operation.merchant_id().as_str().as_bytes();
            id.iter().fold(0usize, |h, &b| {
                h.wrapping_mul(31).wrapping_add(usize::from(b))
            }) % HOLD_SHARDS
        }
    }
}

/// The lane that writes `new`, if one can: see the module docs.
pub(crate) fn lane_of(new: &NewOperation) -> Option<Lane> {
    if new.callback.is_some() {
        return None;
    }
    let op = &new.operation;
    match new.moves.as_slice() {
        [] => Some(Lane::Plain),
        [mv] if (mv.available < 0 || mv.held < 0)
            && mv.operation_id == Some(op.id())
            && mv.merchant_id == *op.merchant_id()
            && mv.currency == op.currency() =>
        {
            Some(Lane::Hold)
        }
        _ => None,
    }
}

impl Database {
    /// Writes `new` in the next batch of `lane` (see [`lane_of`]).
    pub(crate) async fn insert_batched(
        &self,
        lane: Lane,
        new: NewOperation,
    ) -> Result<(), InsertError> {
        let (reply, answer) = oneshot::channel();
        let shard = shard_of(lane, &new);
        let start_writer = {
            let mut queue = self.inner.inserts.lock(lane, shard);
            queue.jobs.push_back(Job { new, reply });
            let start = queue.writers < lane.writers();
            if start {
                queue.writers += 1;
            }
            start
        };
        if start_writer {
            let db = self.clone();
            tokio::task::spawn_blocking(move || db.write_queued(lane, shard));
        }
        answer.await.unwrap_or_else(|_| {
            Err(InsertError::Store(StoreError::Other(anyhow::anyhow!(
                "the batched insert was dropped"
            ))))
        })
    }

    /// Writes batches until the queue is empty.
    fn write_queued(&self, lane: Lane, shard: usize) {
        loop {
            let jobs: Vec<Job> = {
                let mut queue = self.inner.inserts.lock(lane, shard);
                if queue.jobs.is_empty() {
                    queue.writers -= 1;
                    return;
                }
                let n = queue.jobs.len().min(MAX_BATCH);
                queue.jobs.drain(..n).collect()
            };
            self.write_batch(lane, jobs);
        }
    }

    fn write_batch(&self, lane: Lane, jobs: Vec<Job>) {
        let written = self.retrying(true, |conn| {
            let rows = jobs
                .iter()
                .map(|job| NewOperationRow::new(&job.new.operation, job.new.fingerprint.as_ref()))
                .collect::<anyhow::Result<Vec<_>>>()
                .map_err(corrupt::<StoreError>)?;
            let DbConn::Pg(pg) = conn else {
                return Err(corrupt(anyhow::anyhow!("a PostgreSQL statement on SQLite")));
            };
            let ids: Vec<Option<String>> = match lane {
                Lane::Plain => InsertMany::new(&rows)
                    .load::<String>(pg)?
                    .into_iter()
                    .map(Some)
                    .collect(),
                Lane::Hold => {
                    let moves: Vec<_> = jobs
                        .iter()
                        .filter_map(|job| job.new.moves.first())
                        .collect();
                    HoldMany::new(&rows, &moves).load::<Option<String>>(pg)?
                }
            };
            Ok(ids)
        });
        match written {
            Ok(ids) => {
                let ids: HashSet<String> = ids.into_iter().flatten().collect();
                for job in jobs {
                    let answer = if ids.contains(&job.new.operation.id().to_string()) {
                        Ok(())
                    } else if lane == Lane::Plain {
                        Err(InsertError::Duplicate)
                    } else {
                        // Its merchant was short for the whole batch: on its own, it may fit.
                        self.write_alone(lane, &job.new)
                    };
                    let _ = job.reply.send(answer);
                }
            }
            Err(error) => {
                tracing::debug!(%error, rows = jobs.len(), "batched insert failed; rows written one by one");
                for job in jobs {
                    let answer = self.write_alone(lane, &job.new);
                    let _ = job.reply.send(answer);
                }
            }
        }
    }

    /// One row as its own statement, with the exact answer for it.
    fn write_alone(&self, lane: Lane, new: &NewOperation) -> Result<(), InsertError> {
        let shape = match lane {
            Lane::Plain => Shape::Plain,
            Lane::Hold => Shape::Hold,
        };
        self.retrying(true, |conn| -> Result<(), TxError<InsertError>> {
            let row =
                NewOperationRow::new(&new.operation, new.fingerprint.as_ref()).map_err(corrupt)?;
            insert_one(conn, &shape, new, &row)
        })
    }
}
