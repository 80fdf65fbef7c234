//! The `OperationStore` port and the writes it is made of.

mod money;
mod operations;

pub(crate) use money::{apply_move, ledger_sums, queue_callback};
