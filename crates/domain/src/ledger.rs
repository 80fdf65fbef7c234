//! Balances and the ledger: every balance change is one entry, written with the change.

use crate::operation::Operation;
use crate::{Currency, Direction, MerchantId, OperationId, Status, Timestamp};

/// A merchant's money in one currency, in minor units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balance {
    pub currency: Currency,
    pub available: i64,
    pub held: i64,
}

/// Why a balance changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// An approved deposit: available += amount.
    DepositApproved,
    /// A payout was created: available -= amount, held += amount (only if available suffices).
    WithdrawalHold,
    /// A payout was declined: held -= amount, available += amount.
    WithdrawalReleased,
    /// A payout was approved: held -= amount.
    WithdrawalPaid,
    /// An operator's credit: available += amount.
    ManualCredit,
    /// An operator's debit: available -= amount (only if available suffices).
    ManualDebit,
}

impl EntryKind {
    const ALL: [EntryKind; 6] = [
        EntryKind::DepositApproved,
        EntryKind::WithdrawalHold,
        EntryKind::WithdrawalReleased,
        EntryKind::WithdrawalPaid,
        EntryKind::ManualCredit,
        EntryKind::ManualDebit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::DepositApproved => "deposit_approved",
            EntryKind::WithdrawalHold => "withdrawal_hold",
            EntryKind::WithdrawalReleased => "withdrawal_released",
            EntryKind::WithdrawalPaid => "withdrawal_paid",
            EntryKind::ManualCredit => "manual_credit",
            EntryKind::ManualDebit => "manual_debit",
        }
    }

    /// The kind for a stored name; unknown names are an error, never a default.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// One balance change and its ledger entry; applied atomically with the status change that caused it.
///
/// A move with a negative `available` must only apply if the available balance covers it
/// (one conditional statement); otherwise the whole unit of work fails with insufficient balance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceMove {
    pub merchant_id: MerchantId,
    pub currency: Currency,
    pub kind: EntryKind,
    /// Change of the available balance, in minor units.
    pub available: i64,
    /// Change of the held balance, in minor units.
    pub held: i64,
    pub operation_id: Option<OperationId>,
    pub at: Timestamp,
}

fn move_for(
    op: &Operation,
    kind: EntryKind,
    available: i64,
    held: i64,
    at: Timestamp,
) -> BalanceMove {
    BalanceMove {
        merchant_id: op.merchant_id.clone(),
        currency: op.currency,
        kind,
        available,
        held,
        operation_id: Some(op.id),
        at,
    }
}

/// The hold a new payout places on the balance.
pub fn hold_for(payout: &Operation) -> BalanceMove {
    let a = payout.amount.minor();
    move_for(payout, EntryKind::WithdrawalHold, -a, a, payout.created_at)
}

/// The balance moves caused by `done` reaching its final status (contract section 6).
pub fn moves_on_finish(done: &Operation) -> Vec<BalanceMove> {
    let a = done.amount.minor();
    let at = done.updated_at;
    match (done.direction, done.status) {
        (Direction::Deposit, Status::Approved) => {
            vec![move_for(done, EntryKind::DepositApproved, a, 0, at)]
        }
        (Direction::Deposit, Status::Declined) | (_, Status::Processing) => Vec::new(),
        (Direction::Withdrawal, Status::Approved) => {
            vec![move_for(done, EntryKind::WithdrawalPaid, 0, -a, at)]
        }
        (Direction::Withdrawal, Status::Declined) => {
            vec![move_for(done, EntryKind::WithdrawalReleased, a, -a, at)]
        }
    }
}

/// An operator's manual credit (`positive`) or debit of a balance.
pub fn manual_move(
    merchant_id: MerchantId,
    currency: Currency,
    amount: crate::Amount,
    credit: bool,
    at: Timestamp,
) -> BalanceMove {
    let (kind, delta) = if credit {
        (EntryKind::ManualCredit, amount.minor())
    } else {
        (EntryKind::ManualDebit, -amount.minor())
    };
    BalanceMove {
        merchant_id,
        currency,
        kind,
        available: delta,
        held: 0,
        operation_id: None,
        at,
    }
}

/// A merchant and currency whose balance differs from the sum of its ledger entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerMismatch {
    pub merchant_id: MerchantId,
    pub currency: Currency,
    pub balance_available: i64,
    pub balance_held: i64,
    pub ledger_available: i64,
    pub ledger_held: i64,
}
