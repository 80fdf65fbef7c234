//! Balance transactions: what a merchant sees of its ledger, one row per entry, newest first.
//!
//! Each entry of a merchant's balance (not the operator's fee account) is a transaction with
//! a type, the change it made and the balance it left. Its `amount` is the change of the
//! merchant's whole balance (`available + held`): a hold or a release moves money between the
//! two and its amount is zero, so the amounts of any run of transactions add up to how much
//! the balance changed over it, and `availableAfter` / `heldAfter` show where the money is.

use crate::ledger::EntryKind;
use crate::{Currency, DisputeId, MerchantId, OperationId, RefundId, Timestamp};

/// The type of a balance transaction, as the API names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionType {
    /// An approved deposit's amount, credited.
    Deposit,
    /// An approved payout's amount, paid out of its hold.
    Withdrawal,
    /// An approved refund's amount, paid out of its hold.
    Refund,
    /// The fee of an approved deposit, payout or refund.
    Fee,
    /// A payout's or refund's amount and fee, moved from available to held.
    Hold,
    /// A declined or canceled payout's or refund's hold, given back to available.
    Release,
    /// An operator's credit or debit.
    Manual,
    /// A chargeback's amount held, returned (won) or taken (lost).
    Dispute,
    /// What an accepted appeal corrected.
    Appeal,
}

impl TransactionType {
    /// The type of a merchant's entry of `kind`; `None` for the fee account's entries, which
    /// are not the merchant's.
    pub fn of(kind: EntryKind) -> Option<TransactionType> {
        Some(match kind {
            EntryKind::DepositApproved => TransactionType::Deposit,
            EntryKind::WithdrawalPaid => TransactionType::Withdrawal,
            EntryKind::RefundPaid => TransactionType::Refund,
            EntryKind::Fee => TransactionType::Fee,
            EntryKind::WithdrawalHold | EntryKind::RefundHold => TransactionType::Hold,
            EntryKind::WithdrawalReleased | EntryKind::RefundReleased => TransactionType::Release,
            EntryKind::ManualCredit | EntryKind::ManualDebit => TransactionType::Manual,
            EntryKind::DisputeHold | EntryKind::DisputeReturned | EntryKind::DisputeLost => {
                TransactionType::Dispute
            }
            EntryKind::Appeal => TransactionType::Appeal,
            EntryKind::FeeIncome => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TransactionType::Deposit => "deposit",
            TransactionType::Withdrawal => "withdrawal",
            TransactionType::Refund => "refund",
            TransactionType::Fee => "fee",
            TransactionType::Hold => "hold",
            TransactionType::Release => "release",
            TransactionType::Manual => "manual",
            TransactionType::Dispute => "dispute",
            TransactionType::Appeal => "appeal",
        }
    }
}

/// One entry of a merchant's balance, with the balance it left (minor units).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceTransaction {
    /// The entry's number in the ledger.
    pub id: i64,
    pub kind: EntryKind,
    pub operation_id: Option<OperationId>,
    pub refund_id: Option<RefundId>,
    pub dispute_id: Option<DisputeId>,
    /// Change of the available balance.
    pub available_delta: i64,
    /// Change of the held balance.
    pub held_delta: i64,
    pub available_after: i64,
    pub held_after: i64,
    pub created_at: Timestamp,
}

impl BalanceTransaction {
    /// The change of the merchant's whole balance: zero for a hold or a release.
    pub fn amount(&self) -> i64 {
        self.available_delta + self.held_delta
    }

    /// Where the next page starts: just past this transaction.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            created_at: self.created_at,
            id: self.id,
        }
    }
}

/// A position in a merchant's transactions, newest first: the page after it holds the
/// transactions older than the one it names. A merchant's entries are dated in the order
/// they were applied, so (time, id) orders them as the ledger does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub created_at: Timestamp,
    pub id: i64,
}

impl Cursor {
    /// Its text: 32 lower-case hex digits, safe in a URL and opaque to the merchant.
    pub fn encode(self) -> String {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.created_at.millis().to_be_bytes());
        bytes[8..].copy_from_slice(&self.id.to_be_bytes());
        hex::encode(bytes)
    }

    /// The cursor `text` encodes; `None` for anything [`Cursor::encode`] did not write.
    pub fn parse(text: &str) -> Option<Cursor> {
        if text.len() != 32 || text.bytes().any(|b| b.is_ascii_uppercase()) {
            return None;
        }
        let bytes: [u8; 16] = hex::decode(text).ok()?.try_into().ok()?;
        let (at, id) = bytes.split_at(8);
        Some(Cursor {
            created_at: Timestamp::from_millis(i64::from_be_bytes(at.try_into().ok()?)),
            id: i64::from_be_bytes(id.try_into().ok()?),
        })
    }
}

/// Which transactions a page holds: one merchant's in one currency, created in
/// `[from, to)` when given, older than `after` when given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionQuery {
    pub merchant_id: MerchantId,
    pub currency: Currency,
    pub from: Option<Timestamp>,
    pub to: Option<Timestamp>,
    pub after: Option<Cursor>,
    /// At most this many, 1 to [`TransactionQuery::MAX_LIMIT`].
    pub limit: u32,
}

impl TransactionQuery {
    /// The most transactions a page holds.
    pub const MAX_LIMIT: u32 = 200;
    /// How many a page holds when the merchant does not say.
    pub const DEFAULT_LIMIT: u32 = 50;
}

/// One page of transactions, newest first, and where the next one starts (none: this was
/// the last).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionPage {
    pub transactions: Vec<BalanceTransaction>,
    pub next: Option<Cursor>,
}

impl TransactionPage {
    /// The page of `query` out of `found`, which holds up to one more transaction than the
    /// page does: that one's presence says there is a next page.
    pub fn of(query: &TransactionQuery, found: Vec<BalanceTransaction>) -> TransactionPage {
        let (transactions, next) =
            crate::keyset::page_of(query.limit, found, BalanceTransaction::cursor);
        TransactionPage { transactions, next }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_merchant_entry_has_a_type_and_the_fee_account_none() {
        for kind in EntryKind::ALL {
            assert_eq!(
                TransactionType::of(kind).is_none(),
                kind.is_fee_income(),
                "{kind:?}"
            );
        }
        assert_eq!(
            TransactionType::of(EntryKind::RefundHold),
            Some(TransactionType::Hold)
        );
        assert_eq!(
            TransactionType::of(EntryKind::ManualDebit).map(TransactionType::as_str),
            Some("manual")
        );
    }

    #[test]
    fn cursors_round_trip_and_refuse_anything_else() {
        for (at, id) in [
            (0, 1),
            (1_795_442_709_000, 42),
            (-5, i64::MAX),
            (i64::MIN, 0),
        ] {
            let cursor = Cursor {
                created_at: Timestamp::from_millis(at),
                id,
            };
            let text = cursor.encode();
            assert_eq!(text.len(), 32);
            assert!(text.bytes().all(|b| b.is_ascii_hexdigit()));
            assert_eq!(Cursor::parse(&text), Some(cursor));
            if text.bytes().any(|b| b.is_ascii_alphabetic()) {
                assert_eq!(
                    Cursor::parse(&text.to_uppercase()),
                    None,
                    "written lower-case"
                );
            }
        }
        for bad in [
            "",
            "00",
            &"0".repeat(31),
            &"0".repeat(33),
            &"g".repeat(32),
            "../etc",
        ] {
            assert_eq!(Cursor::parse(bad), None, "{bad:?}");
        }
    }

    fn entry(id: i64, kind: EntryKind, available: i64, held: i64) -> BalanceTransaction {
        BalanceTransaction {
            id,
            kind,
            operation_id: None,
            refund_id: None,
            dispute_id: None,
            available_delta: available,
            held_delta: held,
            available_after: 0,
            held_after: 0,
            created_at: Timestamp::from_millis(id * 10),
        }
    }

    #[test]
    fn a_hold_or_release_changes_the_whole_balance_by_nothing() {
        assert_eq!(entry(1, EntryKind::WithdrawalHold, -101, 101).amount(), 0);
        assert_eq!(entry(2, EntryKind::WithdrawalPaid, 0, -100).amount(), -100);
        assert_eq!(entry(3, EntryKind::Fee, 0, -1).amount(), -1);
        assert_eq!(entry(4, EntryKind::DepositApproved, 500, 0).amount(), 500);
    }

    #[test]
    fn a_page_says_where_the_next_starts_only_when_there_is_one() {
        let query = TransactionQuery {
            merchant_id: MerchantId::parse("m-1").expect("valid"),
            currency: Currency::RUB,
            from: None,
            to: None,
            after: None,
            limit: 2,
        };
        let found = |n: i64| -> Vec<BalanceTransaction> {
            (0..n)
                .map(|i| entry(10 - i, EntryKind::ManualCredit, 1, 0))
                .collect()
        };
        let full = TransactionPage::of(&query, found(3));
        assert_eq!(full.transactions.len(), 2);
        assert_eq!(full.next, Some(full.transactions[1].cursor()));
        assert_eq!(full.next.map(|c| c.id), Some(9));
        let last = TransactionPage::of(&query, found(2));
        assert_eq!((last.transactions.len(), last.next), (2, None));
        assert_eq!(TransactionPage::of(&query, Vec::new()).next, None);
    }
}
