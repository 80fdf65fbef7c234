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
//! An operation written with its first provider attempt (an acquirer's: the rare creation
//! whose time is spent on the network anyway) takes neither lane but the general path, which
//! writes the attempt in the operation's transaction.
//!
//! A request queues its row and waits for the answer; up to the lane's writer count of
//! blocking tasks take everything queued (up to [`MAX_BATCH`] rows) and write it with one
//! statement, one round trip and one commit for the lot, then answer each request (the
//! queueing is `crate::group`'s). No request waits for a batch to fill: a writer takes what
//! is there, so under light load a batch is one row, and under heavy load the rows that
//! arrived during the previous write. Each request is still answered only after its row is
//! committed.
//!
//! If the statement fails as a whole (a row that breaks a constraint, a taken
//! merchantOperationId among the holds), each row is written again on its own, so one bad row
//! answers for itself alone.
//!
//! This module holds the queues and decides the lane; the writers are in `store::batched`.

use domain::ports::{InsertError, NewOperation};
use tokio::sync::oneshot;

use crate::group::Group;

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
    pub(crate) fn writers(self) -> usize {
        match self {
            Lane::Plain => 2,
            Lane::Hold => 1,
        }
    }
}

/// Queues (each with one writer) the payouts are split over, by merchant.
const HOLD_SHARDS: usize = 2;

/// Most rows in one statement.
pub(crate) const MAX_BATCH: usize = 256;

pub(crate) struct Job {
    pub(crate) new: NewOperation,
    pub(crate) reply: oneshot::Sender<Result<(), InsertError>>,
}

/// The rows waiting to be written and how many writers run, per lane.
#[derive(Default)]
pub(crate) struct InsertQueue {
    plain: Group<Job>,
    holds: [Group<Job>; HOLD_SHARDS],
}

impl InsertQueue {
    /// The queue of `lane` and `shard` (see [`shard_of`]).
    pub(crate) fn group(&self, lane: Lane, shard: usize) -> &Group<Job> {
        match lane {
            Lane::Plain => &self.plain,
            Lane::Hold => &self.holds[shard % HOLD_SHARDS],
        }
    }
}

/// The queue of `lane` that `new` goes to: holds by merchant, plain rows all to one.
pub(crate) fn shard_of(lane: Lane, new: &NewOperation) -> usize {
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
    // An operation with its first attempt (an acquirer's) is written alone, right before
    // the call it records (`store::single`), not in a batch.
    if new.callback.is_some() || !new.attempts.is_empty() {
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
