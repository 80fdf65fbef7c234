//! A statement as CSV: one row a day, with that day's opening and closing balance, so each
//! row stands alone. UTF-8, CRLF line ends, amounts in the currency's form.

use super::{Held, Movements, Statement, StatementDay};
use crate::console::csv_cell;
use crate::format_minor;

/// The header row.
pub const CSV_HEADER: &str = "merchant_id,currency,date,opening_available,opening_held,\
deposits_count,deposits_amount,deposits_fee,withdrawals_count,withdrawals_amount,\
withdrawals_fee,refunds_count,refunds_amount,refunds_fee,manual,disputes,closing_available,\
closing_held";

impl Statement {
    /// The header row, then a row a day.
    pub fn csv(&self) -> String {
        let mut text = format!("{CSV_HEADER}\r\n");
        for day in &self.days {
            text.push_str(&self.csv_row(day));
        }
        text
    }

    fn csv_row(&self, day: &StatementDay) -> String {
        let c = self.currency;
        let money = |units: i64| format_minor(units, c);
        let held = |h: Held| [money(h.available), money(h.held)];
        let movements = |m: Movements| [m.count.to_string(), money(m.amount), money(m.fee)];
        let mut cells = vec![
            csv_cell(self.merchant_id.as_str()),
            c.as_str().to_string(),
            day.date.clone(),
        ];
        cells.extend(held(day.opening));
        cells.extend(movements(day.deposits));
        cells.extend(movements(day.withdrawals));
        cells.extend(movements(day.refunds));
        cells.extend([money(day.manual), money(day.disputes)]);
        cells.extend(held(day.closing));
        format!("{}\r\n", cells.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Book, Day, KindSum};
    use super::*;
    use crate::ledger::EntryKind;
    use crate::{Currency, MerchantId, Timestamp};

    #[test]
    fn a_row_a_day_with_its_balances_and_signed_amounts() {
        let days = [Day {
            date: "2026-12-01".into(),
            start: Timestamp::from_millis(0),
            end: Timestamp::from_millis(86_400_000),
        }];
        let debit = KindSum {
            kind: EntryKind::ManualDebit,
            refund: false,
            dispute: false,
            from_held: false,
            count: 1,
            available: -3_000,
            held: 0,
        };
        let book = Book {
            opening: Held {
                available: 10_000,
                held: 500,
            },
            days: vec![(
                vec![debit],
                Held {
                    available: 7_000,
                    held: 500,
                },
            )],
        };
        let merchant = MerchantId::parse("m-1").expect("valid");
        let statement = Statement::build(merchant, Currency::RUB, &days, book).expect("balanced");
        let text = statement.csv();
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(
            lines[1],
            "m-1,RUB,2026-12-01,100.00,5.00,0,0.00,0.00,0,0.00,0.00,0,0.00,0.00,-30.00,0.00,70.00,5.00"
        );
        assert_eq!(lines[2], "", "every row ends with CRLF");
        assert_eq!(lines.len(), 3);
        assert_eq!(
            CSV_HEADER.split(',').count(),
            lines[1].split(',').count(),
            "a cell for every column"
        );
    }
}
