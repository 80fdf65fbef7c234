//! The [`LedgerReader`] port.

use async_trait::async_trait;

use crate::statement::{Book, Day};
use crate::transactions::{BalanceTransaction, TransactionQuery};
use crate::{Currency, MerchantId};

use super::StoreError;

/// Reads of the merchants' ledger: their balance transactions and statements. A reader may
/// be a replica a little behind the primary; what it answers MUST come from one snapshot.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait LedgerReader: Send + Sync {
    /// The merchant's entries that `query` selects (not the fee account's), newest first:
    /// created in `[from, to)`, older than its cursor, at most `limit + 1` of them (the one
    /// more tells the caller a next page exists). Each MUST carry the balance it left.
    async fn transactions(
        &self,
        query: &TransactionQuery,
    ) -> Result<Vec<BalanceTransaction>, StoreError>;

    /// The merchant's balance in `currency` at the start of the first of `days` (zero
    /// before its first entry), and for each day, in order, the sums of its entries by kind
    /// and the balance at its end, all read in one snapshot.
    async fn book(
        &self,
        merchant: &MerchantId,
        currency: Currency,
        days: &[Day],
    ) -> Result<Book, StoreError>;

    /// How far behind the primary the reader is, in milliseconds (0: caught up); `None`
    /// when it reads the primary itself. Pages drawn from a replica show it.
    async fn read_lag(&self) -> Result<Option<i64>, StoreError>;
}
