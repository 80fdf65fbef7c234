//! The `OperationStore`, `RefundStore` and `DisputeStore` ports and the writes they are made of.

mod attempts;
mod batched;
mod disputes;
mod money;
mod operations;
mod page_reads;
mod refunds;
mod single;

pub(crate) use money::{apply_manual_entry, apply_move, ledger_sums, queue_callback};

use domain::ports::{InsertError, NewOperation};
use domain::Status;

use crate::conn::DbConn;
use crate::rows::NewOperationRow;
use crate::work::{corrupt, TxError};

pub(crate) use single::Shape;

/// The status code a final write is guarded by: only a processing operation or refund
/// changes.
const PROCESSING: i16 = Status::Processing.number() as i16;

/// PostgreSQL: writes a new operation of `shape` as one statement.
pub(crate) fn insert_one(
    conn: &mut DbConn,
    shape: &Shape,
    new: &NewOperation,
    row: &NewOperationRow<'_>,
) -> Result<(), TxError<InsertError>> {
    match conn {
        DbConn::Pg(pg) => single::insert(pg, shape, new, row),
        DbConn::Sqlite(_) => Err(corrupt(anyhow::anyhow!("a PostgreSQL statement on SQLite"))),
    }
}
