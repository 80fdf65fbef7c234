//! `gateway statement`: a merchant's statement in one currency, as text, CSV or JSON.

use std::process::ExitCode;
use std::sync::Arc;

use adapters_console::Zone;
use adapters_db::Database;
use domain::operator::Operator;
use domain::ports::Clock;
use domain::service::Statements;
use domain::statement::{Held, Movements, Statement, MAX_DAYS};
use domain::{format_minor, Currency, MerchantId};
use serde_json::{json, Value};

use super::{print_json, Usage, EXIT_NOT_FOUND};
use crate::cli::StatementArgs;
use crate::system::SystemClock;

pub async fn statement(
    operator: &Operator,
    database: &Database,
    args: &StatementArgs,
) -> anyhow::Result<ExitCode> {
    let merchant =
        MerchantId::parse(&args.merchant).map_err(|e| Usage::new(format!("--merchant: {e}")))?;
    let currency = Currency::parse_active(&args.currency)
        .map_err(|e| Usage::new(format!("--currency: {e}")))?;
    let zone = Zone::parse(&args.timezone)
        .map_err(|e| Usage::new(format!("--timezone (GATEWAY_CONSOLE_TIMEZONE): {e}")))?;
    let days = zone
        .days_between(&args.from, &args.to, MAX_DAYS)
        .map_err(|(flag, e)| Usage::new(format!("--{flag}: {e}")))?;
    if operator.merchant(&merchant).await?.is_none() {
        eprintln!("error: no merchant {merchant}");
        return Ok(ExitCode::from(EXIT_NOT_FOUND));
    }
    let statements = Statements::new(Arc::new(database.clone()));
    let statement = statements.statement(&merchant, currency, &days).await?;
    if args.csv {
        print!("{}", statement.csv());
    } else if args.json {
        print_json(&statement_json(&statement, &args.from, &args.to));
    } else {
        print_text(&statement, &args.from, &args.to, zone.name());
        if days
            .last()
            .is_some_and(|last| !last.is_final(SystemClock.now()))
        {
            println!(
                "(the last day is not final yet: entries may still be dated into it until a \
                 minute after it ends)"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The contract's JSON shape: amounts as strings in the currency's form.
fn statement_json(statement: &Statement, from: &str, to: &str) -> Value {
    let c = statement.currency;
    let money = |units: i64| format_minor(units, c);
    let held = |h: Held| json!({"available": money(h.available), "held": money(h.held)});
    let movements =
        |m: Movements| json!({"count": m.count, "amount": money(m.amount), "fee": money(m.fee)});
    let days: Vec<Value> = statement
        .days
        .iter()
        .map(|d| {
            json!({
                "date": d.date,
                "deposits": movements(d.deposits),
                "withdrawals": movements(d.withdrawals),
                "refunds": movements(d.refunds),
                "manual": money(d.manual),
                "disputes": money(d.disputes),
                "closing": held(d.closing),
            })
        })
        .collect();
    json!({
        "merchantId": statement.merchant_id.as_str(),
        "currency": c.as_str(),
        "from": from,
        "to": to,
        "opening": held(statement.opening),
        "closing": held(statement.closing),
        "days": days,
    })
}

fn print_text(statement: &Statement, from: &str, to: &str, zone: &str) {
    let c = statement.currency;
    let money = |units: i64| format_minor(units, c);
    let balance = |h: Held| format!("available {}  held {}", money(h.available), money(h.held));
    println!(
        "statement of {} in {}, {from} to {to} (days in {zone})",
        statement.merchant_id,
        c.as_str()
    );
    println!("opening     {}", balance(statement.opening));
    println!(
        "{:<10}  {:>26}  {:>26}  {:>26}  {:>14}  {:>14}  {:>14}  {:>14}",
        "DATE",
        "DEPOSITS (N AMOUNT FEE)",
        "WITHDRAWALS (N AMOUNT FEE)",
        "REFUNDS (N AMOUNT FEE)",
        "MANUAL",
        "DISPUTES",
        "AVAILABLE",
        "HELD"
    );
    let movements = |m: Movements| format!("{} {} {}", m.count, money(m.amount), money(m.fee));
    for d in &statement.days {
        println!(
            "{:<10}  {:>26}  {:>26}  {:>26}  {:>14}  {:>14}  {:>14}  {:>14}",
            d.date,
            movements(d.deposits),
            movements(d.withdrawals),
            movements(d.refunds),
            money(d.manual),
            money(d.disputes),
            money(d.closing.available),
            money(d.closing.held)
        );
    }
    println!("closing     {}", balance(statement.closing));
}
