//! Balance transactions and statements: the merchant's ledger, read for reconciling.

use std::sync::Arc;

use crate::ports::{LedgerReader, StoreError};
use crate::statement::{Day, Statement, Unbalanced, MAX_DAYS};
use crate::transactions::{TransactionPage, TransactionQuery};
use crate::{Currency, MerchantId};

/// Why a statement could not be made.
#[derive(Debug, thiserror::Error)]
pub enum StatementError {
    /// No day, more than [`MAX_DAYS`], or days that do not follow one another.
    #[error("a statement covers 1 to {MAX_DAYS} consecutive days")]
    Days,
    /// The ledger does not add up: a bug or damage, never an answer.
    #[error(transparent)]
    Unbalanced(#[from] Unbalanced),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What merchants and operators read of the ledger.
#[derive(Clone)]
pub struct Statements {
    pub(super) ledger: Arc<dyn LedgerReader>,
}

impl Statements {
    pub fn new(ledger: Arc<dyn LedgerReader>) -> Self {
        Self { ledger }
    }

    /// One page of the merchant's balance transactions, newest first.
    pub async fn transactions(
        &self,
        query: &TransactionQuery,
    ) -> Result<TransactionPage, StoreError> {
        let found = self.ledger.transactions(query).await?;
        Ok(TransactionPage::of(query, found))
    }

    /// How far behind the primary these reads are, in milliseconds; `None` when they read
    /// the primary (no `GATEWAY_DATABASE_READ_URL`).
    pub async fn read_lag(&self) -> Result<Option<i64>, StoreError> {
        self.ledger.read_lag().await
    }

    /// The merchant's statement in `currency` over `days`, which follow one another.
    pub async fn statement(
        &self,
        merchant: &MerchantId,
        currency: Currency,
        days: &[Day],
    ) -> Result<Statement, StatementError> {
        let consecutive = days.windows(2).all(|pair| pair[0].end == pair[1].start);
        if days.is_empty() || days.len() > MAX_DAYS || !consecutive {
            return Err(StatementError::Days);
        }
        let book = self.ledger.book(merchant, currency, days).await?;
        if book.days.len() != days.len() {
            return Err(StoreError::Other(anyhow::anyhow!(
                "the ledger answered {} days for {}",
                book.days.len(),
                days.len()
            ))
            .into());
        }
        Ok(Statement::build(merchant.clone(), currency, days, book)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::EntryKind;
    use crate::ports::MockLedgerReader;
    use crate::statement::{Book, Held, KindSum};
    use crate::testkit::day;
    use crate::transactions::BalanceTransaction;
    use crate::Timestamp;
    use futures::executor::block_on;

    fn merchant() -> MerchantId {
        MerchantId::parse("m-1").expect("valid")
    }

    fn query(limit: u32) -> TransactionQuery {
        TransactionQuery {
            merchant_id: merchant(),
            currency: Currency::RUB,
            from: None,
            to: None,
            after: None,
            limit,
        }
    }

    fn credit(id: i64) -> BalanceTransaction {
        BalanceTransaction {
            id,
            kind: EntryKind::ManualCredit,
            operation_id: None,
            refund_id: None,
            dispute_id: None,
            available_delta: 100,
            held_delta: 0,
            available_after: 100 * id,
            held_after: 0,
            created_at: Timestamp::from_millis(id),
        }
    }

    #[test]
    fn a_page_asks_one_more_than_it_shows_to_know_of_the_next() {
        let mut ledger = MockLedgerReader::new();
        ledger
            .expect_transactions()
            .withf(|q| q.limit == 2 && q.merchant_id.as_str() == "m-1")
            .times(1)
            .returning(|_| Ok(vec![credit(3), credit(2), credit(1)]));
        let statements = Statements::new(Arc::new(ledger));
        let page = block_on(statements.transactions(&query(2))).expect("a page");
        let ids: Vec<i64> = page.transactions.iter().map(|t| t.id).collect();
        assert_eq!(ids, vec![3, 2]);
        assert_eq!(page.next.map(|c| c.id), Some(2));
    }

    #[test]
    fn a_statement_of_consecutive_days_reads_the_book_once() {
        let mut ledger = MockLedgerReader::new();
        let closing = Held {
            available: 10_000,
            held: 0,
        };
        ledger
            .expect_book()
            .withf(|m, c, days| m.as_str() == "m-1" && *c == Currency::RUB && days.len() == 2)
            .times(1)
            .returning(move |_, _, _| {
                let deposit = KindSum {
                    kind: EntryKind::DepositApproved,
                    refund: false,
                    dispute: false,
                    from_held: false,
                    count: 1,
                    available: 10_000,
                    held: 0,
                };
                Ok(Book {
                    opening: Held::default(),
                    days: vec![(vec![deposit], closing), (Vec::new(), closing)],
                })
            });
        let statements = Statements::new(Arc::new(ledger));
        let days = [day("2026-12-01", 0), day("2026-12-02", 1)];
        let statement =
            block_on(statements.statement(&merchant(), Currency::RUB, &days)).expect("a statement");
        assert_eq!(statement.closing, closing);
        assert_eq!(statement.days[0].deposits.amount, 10_000);
    }

    #[test]
    fn days_with_a_gap_none_or_too_many_are_refused_before_any_read() {
        let ledger = MockLedgerReader::new();
        let statements = Statements::new(Arc::new(ledger));
        let gap = [day("2026-12-01", 0), day("2026-12-03", 2)];
        let many: Vec<Day> = (0..=366).map(|n| day("2026-01-01", n)).collect();
        for days in [&gap[..], &[], &many[..]] {
            let refused = block_on(statements.statement(&merchant(), Currency::RUB, days));
            assert!(matches!(refused, Err(StatementError::Days)), "{refused:?}");
        }
    }

    #[test]
    fn a_book_that_does_not_add_up_is_an_error_not_a_statement() {
        let mut ledger = MockLedgerReader::new();
        ledger.expect_book().returning(|_, _, _| {
            Ok(Book {
                opening: Held::default(),
                days: vec![(
                    Vec::new(),
                    Held {
                        available: 1,
                        held: 0,
                    },
                )],
            })
        });
        let statements = Statements::new(Arc::new(ledger));
        let refused =
            block_on(statements.statement(&merchant(), Currency::RUB, &[day("2026-12-01", 0)]));
        assert!(matches!(refused, Err(StatementError::Unbalanced(_))));
    }
}
