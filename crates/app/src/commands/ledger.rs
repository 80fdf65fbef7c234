//! `gateway callbacks ...` and `gateway ledger verify`.

use std::process::ExitCode;

use adapters_db::Database;
use anyhow::anyhow;
use domain::callback::CallbackState;
use domain::console::LedgerCheck;
use domain::format_minor;
use domain::ledger::Flows;
use domain::operator::Operator;
use domain::ports::{CallbackOutbox, Clock, ConsoleStore, RetryOutcome};
use serde_json::json;

use super::audit::Audit;
use super::{print_json, EXIT_NOT_FOUND, EXIT_REFUSED};
use crate::cli::{CallbacksCommand, LedgerCommand};
use crate::system::SystemClock;

/// A callback state as the CLI writes it.
pub(super) fn state_name(state: CallbackState) -> &'static str {
    state.as_str()
}

pub async fn callbacks(
    db: &Database,
    audit: &Audit,
    command: CallbacksCommand,
) -> anyhow::Result<ExitCode> {
    match command {
        CallbacksCommand::Retry { id } => {
            let id = uuid::Uuid::parse_str(&id).map_err(|_| {
                anyhow!("id: must be an operationId, a refundId or a dispute's changeId (a UUID)")
            })?;
            match db.retry(id, SystemClock.now()).await? {
                RetryOutcome::Queued => {
                    audit
                        .record(
                            "callback.retry",
                            id.hyphenated(),
                            Some(json!({"state": "failed"})),
                            Some(json!({"state": "pending"})),
                        )
                        .await?;
                    println!("callback of {} queued again", id.hyphenated());
                    Ok(ExitCode::SUCCESS)
                }
                // Sending it would go against the disabled merchant; its enable sends it.
                RetryOutcome::Held => {
                    eprintln!(
                        "error: the callback of {} is held because its merchant is disabled; \
                         `gateway merchant enable ID` sends it",
                        id.hyphenated()
                    );
                    Ok(ExitCode::from(EXIT_REFUSED))
                }
                RetryOutcome::NotFailed => {
                    eprintln!("error: {} has no failed callback", id.hyphenated());
                    Ok(ExitCode::from(EXIT_NOT_FOUND))
                }
            }
        }
        CallbacksCommand::List {
            failed,
            held,
            limit,
            json,
        } => {
            let only = match (failed, held) {
                (true, _) => Some(CallbackState::Failed),
                (false, true) => Some(CallbackState::Held),
                (false, false) => None,
            };
            let rows = db.list(only, limit).await?;
            if json {
                let out: Vec<_> = rows
                    .iter()
                    .map(|c| {
                        json!({
                            "operationId": c.operation_id.to_string(),
                            "refundId": c.refund_id.map(|r| r.to_string()),
                            "disputeId": c.dispute.map(|d| d.dispute_id.to_string()),
                            "changeId": c.dispute.map(|d| d.change_id.to_string()),
                            "merchantId": c.merchant_id.as_str(),
                            "url": c.url, "state": state_name(c.state), "attempts": c.attempts,
                            "nextAttemptAt": c.next_attempt_at.map(|t| t.to_rfc3339()),
                            "lastError": c.last_error,
                        })
                    })
                    .collect();
                print_json(&json!(out));
            } else {
                println!(
                    "{:<36} {:<9} {:<8} {:<20} URL / LAST ERROR",
                    "OPERATION", "STATE", "ATTEMPTS", "NEXT"
                );
                for c in &rows {
                    let next = c
                        .next_attempt_at
                        .map(|t| t.to_rfc3339())
                        .unwrap_or_else(|| "-".into());
                    // A dispute's callback is retried by its change's id.
                    let refund = match (c.refund_id, c.dispute) {
                        (_, Some(d)) => format!("dispute {} change {} ", d.dispute_id, d.change_id),
                        (Some(r), None) => format!("refund {r} "),
                        (None, None) => String::new(),
                    };
                    println!(
                        "{:<36} {:<9} {:<8} {:<20} {refund}{} {}",
                        c.operation_id,
                        state_name(c.state),
                        c.attempts,
                        next,
                        c.url,
                        c.last_error.as_deref().unwrap_or("")
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

pub async fn ledger(
    operator: &Operator,
    store: &dyn ConsoleStore,
    audit: &Audit,
    command: LedgerCommand,
) -> anyhow::Result<ExitCode> {
    let LedgerCommand::Verify { json } = command;
    let report = operator.verify_ledger().await?;
    let problems = report.problems();
    // The console's overview shows the last check, whoever ran it.
    let check = LedgerCheck {
        at: SystemClock.now(),
        actor: audit.actor().clone(),
        mismatches: i64::try_from(problems).unwrap_or(i64::MAX),
    };
    store.record_ledger_check(&check).await?;
    let mismatches = &report.mismatches;
    if json {
        let out: Vec<_> = mismatches
            .iter()
            .map(|m| {
                json!({
                    "merchantId": m.merchant_id.as_str(), "currency": m.currency.as_str(),
                    "balance": {"available": format_minor(m.balance_available, m.currency),
                                "held": format_minor(m.balance_held, m.currency)},
                    "ledger": {"available": format_minor(m.ledger_available, m.currency),
                               "held": format_minor(m.ledger_held, m.currency)},
                })
            })
            .collect();
        let flows: Vec<_> = report.flows.iter().map(flows_json).collect();
        let broken: Vec<_> = report
            .broken
            .iter()
            .map(|b| {
                json!({"merchantId": b.merchant_id.as_str(), "currency": b.currency.as_str(),
                       "entryId": b.entry_id})
            })
            .collect();
        print_json(&json!({
            "ok": problems == 0, "mismatches": out, "brokenEntries": broken, "flows": flows,
        }));
    } else if problems == 0 {
        println!(
            "ledger verified: every balance equals the sum of its ledger entries, each entry \
             records the balance it left, and per currency the balances plus the fee account \
             equal what came in less what went out"
        );
    } else {
        for m in mismatches {
            println!(
                "MISMATCH {} {}: balance available {} held {}, ledger available {} held {}",
                m.merchant_id,
                m.currency,
                format_minor(m.balance_available, m.currency),
                format_minor(m.balance_held, m.currency),
                format_minor(m.ledger_available, m.currency),
                format_minor(m.ledger_held, m.currency)
            );
        }
        for b in &report.broken {
            println!(
                "BROKEN {} {}: ledger entry {} does not record the balance the entries before \
                 it and its own change leave",
                b.merchant_id, b.currency, b.entry_id
            );
        }
        for f in report.unbalanced() {
            let money = |units: i64| format_minor(units, f.currency);
            println!(
                "UNBALANCED {}: merchants {} + fee account {} != came in {} - went out {}",
                f.currency,
                money(f.merchants),
                money(f.fees),
                money(f.came_in),
                money(f.went_out)
            );
        }
    }
    Ok(if problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// One currency's flows as `ledger verify --json` writes them.
fn flows_json(f: &Flows) -> serde_json::Value {
    let money = |units: i64| format_minor(units, f.currency);
    json!({
        "currency": f.currency.as_str(), "balanced": f.balanced(),
        "merchants": money(f.merchants), "feeAccount": money(f.fees),
        "cameIn": money(f.came_in), "wentOut": money(f.went_out),
    })
}
