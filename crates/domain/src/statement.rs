//! Statements: a merchant's balance in one currency over a run of days, from its ledger.
//!
//! A statement is sums of ledger entries, never a second bookkeeping: per day the approved
//! deposits, withdrawals and refunds with their fees, the manual entries and the disputes,
//! and the balance the day closed with. Every entry records the balance it left, so the
//! opening and each closing are read from one entry, and the statement checks that each
//! day's closing is its opening plus its entries. A day is a local calendar day (the
//! console's time zone); the adapter that knows the zone gives its bounds.

mod csv;

pub use csv::CSV_HEADER;

use crate::ledger::EntryKind;
use crate::{Currency, MerchantId};

/// The most days one statement covers.
pub const MAX_DAYS: usize = 366;

/// How long after its end a day is final: a change computed before midnight may commit a
/// moment after it, dated before it.
pub const FINAL_AFTER_SECS: i64 = 60;

/// A local calendar day and the instants it runs between, `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Day {
    /// `YYYY-MM-DD`.
    pub date: String,
    pub start: crate::Timestamp,
    pub end: crate::Timestamp,
}

impl Day {
    /// Whether, at `now`, nothing can be dated into this day any more.
    pub fn is_final(&self, now: crate::Timestamp) -> bool {
        self.end.plus_seconds(FINAL_AFTER_SECS) <= now
    }
}

/// A balance at one instant, in minor units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    pub available: i64,
    pub held: i64,
}

/// The sums of one day's entries of one kind, split as the store groups them: whether they
/// name a refund and whether they moved the held balance (which tells a deposit's fee, out
/// of available, from a payout's, out of its hold).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindSum {
    pub kind: EntryKind,
    pub refund: bool,
    /// Whether the entries name a dispute (an appeal's fee does).
    pub dispute: bool,
    pub from_held: bool,
    pub count: i64,
    pub available: i64,
    pub held: i64,
}

/// What the store reads for a statement, in one snapshot: the balance before the first day,
/// and each day's sums and closing balance, in the days' order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Book {
    pub opening: Held,
    pub days: Vec<(Vec<KindSum>, Held)>,
}

/// Approved movements of one kind in a day: how many, their amounts and their fees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Movements {
    pub count: i64,
    pub amount: i64,
    pub fee: i64,
}

/// One day of a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementDay {
    pub date: String,
    pub opening: Held,
    pub deposits: Movements,
    pub withdrawals: Movements,
    pub refunds: Movements,
    /// The operators' credits less their debits.
    pub manual: i64,
    /// What disputes moved (none are opened by this version).
    pub disputes: i64,
    pub closing: Held,
}

/// A merchant's statement in one currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub merchant_id: MerchantId,
    pub currency: Currency,
    pub opening: Held,
    pub closing: Held,
    pub days: Vec<StatementDay>,
}

/// A day whose entries do not add up to its closing balance: the ledger is broken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the ledger of {merchant} in {currency} does not add up on {date}: {opening:?} + entries {moved:?} != closing {closing:?}")]
pub struct Unbalanced {
    pub merchant: MerchantId,
    pub currency: Currency,
    pub date: String,
    pub opening: Held,
    pub moved: Held,
    pub closing: Held,
}

impl StatementDay {
    /// The day `date` out of its sums, opened with `opening` and closed with `closing`.
    fn of(date: &str, opening: Held, sums: &[KindSum], closing: Held) -> (StatementDay, Held) {
        let mut day = StatementDay {
            date: date.to_string(),
            opening,
            deposits: Movements::default(),
            withdrawals: Movements::default(),
            refunds: Movements::default(),
            manual: 0,
            disputes: 0,
            closing,
        };
        let mut moved = Held::default();
        for sum in sums {
            moved.available += sum.available;
            moved.held += sum.held;
            // What left the merchant, as a positive amount.
            let out = -(sum.available + sum.held);
            match sum.kind {
                EntryKind::DepositApproved => {
                    day.deposits.count += sum.count;
                    day.deposits.amount += sum.available;
                }
                EntryKind::WithdrawalPaid => {
                    day.withdrawals.count += sum.count;
                    day.withdrawals.amount += out;
                }
                EntryKind::RefundPaid => {
                    day.refunds.count += sum.count;
                    day.refunds.amount += out;
                }
                EntryKind::Fee => match (sum.dispute, sum.refund, sum.from_held) {
                    (true, _, _) => day.disputes -= out,
                    (false, true, _) => day.refunds.fee += out,
                    (false, false, true) => day.withdrawals.fee += out,
                    (false, false, false) => day.deposits.fee += out,
                },
                EntryKind::Appeal | EntryKind::DisputeLost => day.disputes -= out,
                EntryKind::ManualCredit | EntryKind::ManualDebit => day.manual += sum.available,
                // Money moved within the balance, or the operator's.
                EntryKind::WithdrawalHold
                | EntryKind::WithdrawalReleased
                | EntryKind::RefundHold
                | EntryKind::RefundReleased
                | EntryKind::DisputeHold
                | EntryKind::DisputeReturned
                | EntryKind::FeeIncome => {}
            }
        }
        (day, moved)
    }

    /// The day's change of the whole balance, as its lines add up.
    pub fn net(&self) -> i64 {
        self.deposits.amount
            - self.deposits.fee
            - self.withdrawals.amount
            - self.withdrawals.fee
            - self.refunds.amount
            - self.refunds.fee
            + self.manual
            + self.disputes
    }
}

impl Statement {
    /// The statement of `days` out of `book`, which holds as many days; refused when a day's
    /// entries do not lead from its opening to its closing.
    pub fn build(
        merchant_id: MerchantId,
        currency: Currency,
        days: &[Day],
        book: Book,
    ) -> Result<Statement, Unbalanced> {
        let mut opening = book.opening;
        let mut out = Vec::with_capacity(days.len());
        for (day, (sums, closing)) in days.iter().zip(book.days) {
            let (line, moved) = StatementDay::of(&day.date, opening, &sums, closing);
            if opening.available + moved.available != closing.available
                || opening.held + moved.held != closing.held
            {
                return Err(Unbalanced {
                    merchant: merchant_id,
                    currency,
                    date: day.date.clone(),
                    opening,
                    moved,
                    closing,
                });
            }
            out.push(line);
            opening = closing;
        }
        Ok(Statement {
            merchant_id,
            currency,
            opening: book.opening,
            closing: opening,
            days: out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::day;

    fn sum(kind: EntryKind, refund: bool, available: i64, held: i64) -> KindSum {
        KindSum {
            kind,
            refund,
            dispute: false,
            from_held: held != 0,
            count: 1,
            available,
            held,
        }
    }

    fn merchant() -> MerchantId {
        MerchantId::parse("m-1").expect("valid")
    }

    /// A day with a 100.00 deposit paying 15.00, a 1,000.00 payout paying 10.00, a 30.00
    /// refund paying 0.50, a held payout, a released one and a manual credit of 5.00.
    fn busy() -> Vec<KindSum> {
        vec![
            sum(EntryKind::DepositApproved, false, 10_000, 0),
            sum(EntryKind::Fee, false, -1_500, 0),
            sum(EntryKind::WithdrawalHold, false, -303_000, 303_000),
            sum(EntryKind::WithdrawalPaid, false, 0, -100_000),
            sum(EntryKind::Fee, false, 0, -1_000),
            sum(EntryKind::WithdrawalReleased, false, 101_000, -101_000),
            sum(EntryKind::RefundHold, true, -3_050, 3_050),
            sum(EntryKind::RefundPaid, true, 0, -3_000),
            sum(EntryKind::Fee, true, 0, -50),
            sum(EntryKind::ManualCredit, false, 500, 0),
        ]
    }

    #[test]
    fn a_day_sorts_its_entries_into_the_statement_lines() {
        let opening = Held {
            available: 500_000,
            held: 0,
        };
        let closing = Held {
            available: 500_000 + 10_000 - 1_500 - 303_000 + 101_000 - 3_050 + 500,
            held: 303_000 - 100_000 - 1_000 - 101_000 + 3_050 - 3_000 - 50,
        };
        let book = Book {
            opening,
            days: vec![(busy(), closing)],
        };
        let statement = Statement::build(merchant(), Currency::RUB, &[day("2026-12-01", 0)], book)
            .expect("balanced");
        let line = &statement.days[0];
        let movements = |count, amount, fee| Movements { count, amount, fee };
        assert_eq!(line.deposits, movements(1, 10_000, 1_500));
        assert_eq!(line.withdrawals, movements(1, 100_000, 1_000));
        assert_eq!(line.refunds, movements(1, 3_000, 50));
        assert_eq!((line.manual, line.disputes), (500, 0));
        assert_eq!((line.opening, line.closing), (opening, closing));
        assert_eq!(
            opening.available + opening.held + line.net(),
            closing.available + closing.held,
            "the lines add up to the whole balance's change"
        );
        assert_eq!((statement.opening, statement.closing), (opening, closing));
    }

    #[test]
    fn each_day_opens_with_the_closing_of_the_day_before() {
        let first = Held {
            available: 10_000,
            held: 0,
        };
        let second = Held {
            available: 18_500,
            held: 0,
        };
        let book = Book {
            opening: Held::default(),
            days: vec![
                (
                    vec![sum(EntryKind::DepositApproved, false, 10_000, 0)],
                    first,
                ),
                (Vec::new(), first),
                (
                    vec![
                        sum(EntryKind::DepositApproved, false, 10_000, 0),
                        sum(EntryKind::Fee, false, -1_500, 0),
                    ],
                    second,
                ),
            ],
        };
        let days = [
            day("2026-12-01", 0),
            day("2026-12-02", 1),
            day("2026-12-03", 2),
        ];
        let statement = Statement::build(merchant(), Currency::RUB, &days, book).expect("balanced");
        let openings: Vec<Held> = statement.days.iter().map(|d| d.opening).collect();
        assert_eq!(openings, vec![Held::default(), first, first]);
        assert_eq!(statement.closing, second);
        assert_eq!(statement.days[1].deposits, Movements::default());
        assert_eq!(statement.days[2].date, "2026-12-03");
    }

    #[test]
    fn a_day_is_final_a_minute_after_it_ends() {
        let first = day("2026-12-01", 0);
        assert!(!first.is_final(first.start));
        assert!(!first.is_final(first.end.plus_seconds(59)));
        assert!(first.is_final(first.end.plus_seconds(60)));
    }

    #[test]
    fn a_day_that_does_not_add_up_is_refused() {
        let book = Book {
            opening: Held::default(),
            days: vec![(
                vec![sum(EntryKind::DepositApproved, false, 10_000, 0)],
                Held {
                    available: 9_999,
                    held: 0,
                },
            )],
        };
        let refused = Statement::build(merchant(), Currency::RUB, &[day("2026-12-01", 0)], book)
            .expect_err("unbalanced");
        assert_eq!(refused.date, "2026-12-01");
        assert_eq!(refused.moved.available, 10_000);
    }
}
