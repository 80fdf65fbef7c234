//! PostgreSQL: the writers of the batched insert queues (see `crate::queue` for the lanes).

use std::collections::HashSet;

use diesel::prelude::*;
use domain::ports::{InsertError, NewOperation, StoreError};

use super::{insert_one, Shape};
use crate::conn::DbConn;
use crate::database::Database;
use crate::queue::{shard_of, Job, Lane, MAX_BATCH};
use crate::rows::{HoldMany, InsertMany, NewOperationRow};
use crate::work::{corrupt, TxError};

impl Database {
    /// Writes `new` in the next batch of `lane` (see [`lane_of`]).
    pub(crate) async fn insert_batched(
        &self,
        lane: Lane,
        new: NewOperation,
    ) -> Result<(), InsertError> {
        let shard = shard_of(lane, &new);
        self.enqueue_and_wait(
            move |db| db.inner.inserts.group(lane, shard),
            |reply| Job { new, reply },
            lane.writers(),
            MAX_BATCH,
            move |db, jobs| db.write_batch(lane, jobs),
            "the batched insert",
        )
        .await
    }

    fn write_batch(&self, lane: Lane, jobs: Vec<Job>) {
        let started = std::time::Instant::now();
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
                    .map_err(corrupt::<StoreError>)?
                    .load::<String>(pg)?
                    .into_iter()
                    .map(Some)
                    .collect(),
                Lane::Hold => {
                    let moves: Vec<_> = jobs
                        .iter()
                        .filter_map(|job| job.new.moves.first())
                        .collect();
                    HoldMany::new(&rows, &moves)
                        .map_err(corrupt::<StoreError>)?
                        .load::<Option<String>>(pg)?
                }
            };
            Ok(ids)
        });
        tracing::debug!(
            ?lane,
            rows = jobs.len(),
            ok = written.is_ok(),
            elapsed_us = started.elapsed().as_micros() as u64,
            "batch written"
        );
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
            // The database is away, or the statement's outcome is unknown (its connection was
            // lost): writing the rows again now could only repeat or fail; each request
            // answers 503 and the merchant's retry finds its operation or creates it once.
            Err(StoreError::Unavailable(error)) => {
                tracing::warn!(%error, rows = jobs.len(), "batched insert not known to be written");
                for job in jobs {
                    let away = StoreError::Unavailable(error.to_string().into());
                    let _ = job.reply.send(Err(InsertError::Store(away)));
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
