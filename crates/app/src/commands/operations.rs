//! `gateway operation show ID`: an operation as the API reads it, with its provider attempts,
//! ledger entries and callback deliveries. `gateway operation cancel ID`: asks the
//! operation's acquirer to cancel it and applies the answer. No operator command sets a
//! status directly.

use std::process::ExitCode;

use adapters_db::Database;
use domain::attempt::Attempt;
use domain::callback::CallbackAttempt;
use domain::operation::Operation;
use domain::ports::Clock;
use domain::service::CancelError;
use domain::story::{CallbackDelivery, LedgerEntry, OperationStory};
use domain::{format_minor, OperationId, Timestamp};
use serde_json::{json, Value};

use super::audit::Audit;
use super::ledger::state_name;
use super::{print_json, shown, Usage, EXIT_NOT_FOUND, EXIT_REFUSED};
use crate::application::operator;
use crate::cli::OperationCommand;
use crate::system::SystemClock;

pub async fn operation(
    database: &Database,
    audit: &Audit,
    command: OperationCommand,
) -> anyhow::Result<ExitCode> {
    match command {
        OperationCommand::Show { id, json } => show_story(database, &id, json).await,
        OperationCommand::Cancel { id, json } => cancel(database, audit, &id, json).await,
    }
}

/// The ID argument; a malformed one is a usage error (exit 2).
fn operation_id(text: &str) -> anyhow::Result<OperationId> {
    OperationId::parse(text).map_err(|e| Usage::new(format!("ID: {e}")))
}

async fn show_story(database: &Database, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    let id = operation_id(id)?;
    let Some(story) = operator(database).operation_story(id).await? else {
        eprintln!("error: no operation {id}");
        return Ok(ExitCode::from(EXIT_NOT_FOUND));
    };
    let refunds = domain::ports::RefundStore::refunds_of(database, id).await?;
    let disputes = domain::ports::DisputeStore::disputes_of(database, id).await?;
    if json {
        print_json(&story_json(&story, &refunds, &disputes, SystemClock.now())?);
    } else {
        print_story(&story);
    }
    Ok(ExitCode::SUCCESS)
}

/// The read shape of the API (the same code writes both) plus `attempts`, `ledger` and
/// `callbacks`. Unlike the read shape, their fields are always present (`null` when unknown).
fn story_json(
    story: &OperationStory,
    refunds: &[domain::refund::Refund],
    disputes: &[domain::dispute::Dispute],
    now: Timestamp,
) -> anyhow::Result<Value> {
    let mut out = adapters_http::read_shape(&story.operation, refunds, disputes, now)?;
    let Value::Object(fields) = &mut out else {
        anyhow::bail!(
            "the read shape of {} is not an object",
            story.operation.id()
        );
    };
    let attempts = story.attempts.iter().map(attempt_json).collect();
    let ledger = story.ledger.iter().map(entry_json).collect();
    let callbacks = story.callbacks.iter().map(callback_json).collect();
    let discrepancies = story
        .discrepancies
        .iter()
        .map(super::discrepancies::discrepancy_json)
        .collect();
    fields.insert("attempts".into(), Value::Array(attempts));
    fields.insert("ledger".into(), Value::Array(ledger));
    fields.insert("callbacks".into(), Value::Array(callbacks));
    fields.insert("discrepancies".into(), Value::Array(discrepancies));
    Ok(out)
}

fn attempt_json(a: &Attempt) -> Value {
    json!({
        "number": a.number, "routeId": a.route_id, "provider": a.provider,
        "state": a.state.as_str(), "acquirerId": a.acquirer_id, "failureCode": a.failure_code,
        "latencyMs": a.latency_ms, "createdAt": a.created_at.to_rfc3339(),
        "updatedAt": a.updated_at.to_rfc3339(),
        "nextCheckAt": a.next_check_at.map(Timestamp::to_rfc3339),
        "unknownSince": a.unknown_since.map(Timestamp::to_rfc3339), "reads": a.reads,
    })
}

/// Amounts as the API writes them, in the currency's form, signed like the change they are. A
/// manual entry that names the operation has who made it and why.
fn entry_json(e: &LedgerEntry) -> Value {
    json!({
        "id": e.id, "kind": e.kind.as_str(), "currency": e.currency.as_str(),
        "available": format_minor(e.available, e.currency),
        "held": format_minor(e.held, e.currency),
        "createdAt": e.at.to_rfc3339(),
        "actor": e.note.as_ref().map(|n| n.actor.as_str()),
        "reason": e.note.as_ref().map(|n| n.reason.as_str()),
    })
}

fn callback_json(c: &CallbackDelivery) -> Value {
    let deliveries: Vec<Value> = c.deliveries.iter().map(delivery_json).collect();
    json!({
        "url": c.url, "state": state_name(c.state), "attempts": c.attempts,
        "nextAttemptAt": c.next_attempt_at.map(Timestamp::to_rfc3339),
        "lastError": c.last_error, "queuedAt": c.queued_at.to_rfc3339(),
        "updatedAt": c.updated_at.to_rfc3339(), "deliveries": deliveries,
    })
}

fn delivery_json(d: &CallbackAttempt) -> Value {
    json!({
        "attempt": d.attempt, "at": d.at.to_rfc3339(), "durationMs": d.duration_ms,
        "httpStatus": d.http_status, "error": d.error,
    })
}

/// The text form: a summary of the operation, then one table per part.
fn print_story(story: &OperationStory) {
    print_summary(&story.operation);
    println!();
    print_attempts(&story.attempts);
    println!();
    print_ledger(&story.ledger);
    println!();
    print_callbacks(&story.callbacks);
    if !story.discrepancies.is_empty() {
        println!();
        println!("Discrepancies");
        super::discrepancies::print_table(&story.discrepancies);
    }
}

fn print_summary(op: &Operation) {
    println!("operation {}", op.id());
    let decline = op
        .decline()
        .map(|d| format!(" ({}: {})", d.code.as_str(), d.message))
        .unwrap_or_default();
    println!("  status:    {}{decline}", op.status().name());
    println!(
        "  amount:    {} {}",
        op.amount().format(op.currency()),
        op.currency()
    );
    println!(
        "  kind:      {} {}, merchant {}, user {}",
        op.direction(),
        op.method(),
        op.merchant_id(),
        op.user_id().as_str()
    );
    if let Some(moid) = op.merchant_operation_id() {
        println!("  merchantOperationId: {}", moid.as_str());
    }
    println!("  provider:  {} (route {})", op.provider(), op.route_id());
    println!("  created:   {}", op.created_at().to_rfc3339());
    println!("  updated:   {}", op.updated_at().to_rfc3339());
}

fn print_attempts(attempts: &[Attempt]) {
    if !heading("Attempts", attempts.is_empty()) {
        return;
    }
    println!(
        "{:<3} {:<6} {:<12} {:<12} {:<36} {:<20} {:<9} {:<20} UPDATED",
        "#", "ROUTE", "PROVIDER", "STATE", "ACQUIRER ID", "FAILURE", "LATENCY", "CREATED"
    );
    for a in attempts {
        println!(
            "{:<3} {:<6} {:<12} {:<12} {:<36} {:<20} {:<9} {:<20} {}",
            a.number,
            a.route_id,
            shown(&a.provider),
            a.state.as_str(),
            a.acquirer_id.as_deref().map_or_else(|| "-".into(), shown),
            a.failure_code.as_deref().map_or_else(|| "-".into(), shown),
            a.latency_ms
                .map_or_else(|| "-".into(), |ms| format!("{ms} ms")),
            a.created_at.to_rfc3339(),
            a.updated_at.to_rfc3339()
        );
    }
}

fn print_ledger(entries: &[LedgerEntry]) {
    if !heading("Ledger", entries.is_empty()) {
        return;
    }
    println!(
        "{:<8} {:<20} {:<4} {:<14} {:<14} AT",
        "ID", "KIND", "CUR", "AVAILABLE", "HELD"
    );
    for e in entries {
        let note = e
            .note
            .as_ref()
            .map(|n| format!(" {}: {}", n.actor, shown(&n.reason)))
            .unwrap_or_default();
        println!(
            "{:<8} {:<20} {:<4} {:<14} {:<14} {}{note}",
            e.id,
            e.kind.as_str(),
            e.currency,
            format_minor(e.available, e.currency),
            format_minor(e.held, e.currency),
            e.at.to_rfc3339()
        );
    }
}

fn print_callbacks(callbacks: &[CallbackDelivery]) {
    if !heading("Callbacks", callbacks.is_empty()) {
        return;
    }
    println!(
        "{:<9} {:<8} {:<20} {:<20} URL / LAST ERROR",
        "STATE", "ATTEMPTS", "QUEUED", "NEXT"
    );
    for c in callbacks {
        println!(
            "{:<9} {:<8} {:<20} {:<20} {} {}",
            state_name(c.state),
            c.attempts,
            c.queued_at.to_rfc3339(),
            c.next_attempt_at
                .map_or_else(|| "-".into(), Timestamp::to_rfc3339),
            shown(&c.url),
            c.last_error.as_deref().map(shown).unwrap_or_default()
        );
        for d in &c.deliveries {
            let answer = match (d.http_status, d.error.as_deref()) {
                (Some(status), Some(error)) => format!("HTTP {status}: {}", shown(error)),
                (None, Some(error)) => shown(error),
                (Some(status), None) => format!("HTTP {status}"),
                (None, None) => "-".into(),
            };
            println!(
                "  attempt {:<3} {:<20} {:>6} ms  {answer}",
                d.attempt,
                d.at.to_rfc3339(),
                d.duration_ms
            );
        }
    }
}

/// Prints a table's `title`, and `  (none)` under it when it is `empty`; whether its rows
/// follow.
fn heading(title: &str, empty: bool) -> bool {
    println!("{title}");
    if empty {
        println!("  (none)");
    }
    !empty
}

async fn cancel(
    database: &Database,
    audit: &Audit,
    id: &str,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let id = operation_id(id)?;
    // The sandbox is not asked here (its operations are not canceled at a provider).
    let gateway = super::offline_gateway(database);
    match gateway.refunds().cancel_at_provider(id).await {
        Ok(done) => {
            let after = json!({
                "status": done.status().name(),
                "errorCode": done.decline().map(|d| d.code.as_str()),
            });
            audit
                .record(
                    "operation.cancel",
                    id,
                    Some(json!({"status": "processing"})),
                    Some(after),
                )
                .await?;
            show(&done, json, "canceled");
            Ok(ExitCode::SUCCESS)
        }
        Err(CancelError::NotFound) => {
            eprintln!("error: no operation {id}");
            Ok(ExitCode::from(EXIT_NOT_FOUND))
        }
        Err(CancelError::Final(current)) => {
            show(&current, json, "already final");
            eprintln!("error: operation {id} is final; nothing was canceled");
            Ok(ExitCode::from(EXIT_REFUSED))
        }
        Err(refused @ CancelError::NotAtAcquirer) => {
            eprintln!("error: {refused}");
            Ok(ExitCode::from(EXIT_REFUSED))
        }
        Err(CancelError::Unavailable(reason)) => Err(anyhow::anyhow!(
            "the acquirer's answer is not known ({reason}); nothing changed, try again"
        )),
        Err(CancelError::Complete(error)) => Err(error.into()),
    }
}

fn show(op: &Operation, json: bool, what: &str) {
    let code = op.decline().map(|d| d.code.as_str());
    if json {
        print_json(&json!({
            "operationId": op.id().to_string(), "status": op.status().name(),
            "errorCode": code,
        }));
    } else {
        println!(
            "operation {} {what}: status {}{}",
            op.id(),
            op.status().name(),
            code.map(|c| format!(" ({c})")).unwrap_or_default()
        );
    }
}
