//! A statement's days as a table: a row a day, amounts in the currency's form.

use domain::format_minor;
use domain::statement::{Movements, Statement};
use maud::{html, Markup};

use crate::i18n::Texts;
use crate::layout::rows_table;

/// Date; deposits, withdrawals and refunds (count, amount, fee each); manual; disputes; and
/// the balance the day closed with.
pub(super) fn days(t: &Texts, statement: &Statement) -> Markup {
    let money = |units: i64| format_minor(units, statement.currency);
    let groups = [t.deposits, t.withdrawals, t.refunds];
    let movements = |m: Movements| {
        html! { td.num { (m.count) } td.num { (money(m.amount)) } td.num { (money(m.fee)) } }
    };
    rows_table(
        statement.days.is_empty(),
        t.nothing_found,
        html! {
            th { (t.col_date) }
            @for group in groups {
                th.num { span.muted { (group) } " " (t.col_count) }
                th.num { span.muted { (group) } " " (t.col_amount) }
                th.num { span.muted { (group) } " " (t.col_fee) }
            }
            th.num { (t.manual) } th.num { (t.disputes) }
            th.num { (t.closing_available) } th.num { (t.closing_held) }
        },
        html! {
            @for day in &statement.days {
                tr {
                    td.nowrap { (day.date) }
                    (movements(day.deposits))
                    (movements(day.withdrawals))
                    (movements(day.refunds))
                    td.num { (money(day.manual)) }
                    td.num { (money(day.disputes)) }
                    td.num { (money(day.closing.available)) }
                    td.num { (money(day.closing.held)) }
                }
            }
        },
    )
}
