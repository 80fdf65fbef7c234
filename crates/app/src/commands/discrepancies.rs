//! `gateway discrepancy list [--open] [--json]` and `gateway discrepancy resolve ID --note TEXT`:
//! what providers reported against an operation's final status, and marking one settled.
//! Resolving changes no status and moves no money; `gateway balance credit|debit --operation ID`
//! corrects the money and resolves the operation's open discrepancies with the entry.

use std::process::ExitCode;

use domain::discrepancy::RecordedDiscrepancy;
use domain::operator::{Operator, ResolveError};
use serde_json::{json, Value};

use super::audit::Audit;
use super::{print_json, shown, Usage, EXIT_NOT_FOUND, EXIT_REFUSED};
use crate::cli::DiscrepancyCommand;

pub async fn discrepancy(
    operator: &Operator,
    audit: &Audit,
    command: DiscrepancyCommand,
) -> anyhow::Result<ExitCode> {
    match command {
        DiscrepancyCommand::List { open, limit, json } => {
            let found = operator.discrepancies(open, limit).await?;
            if json {
                print_json(&Value::Array(found.iter().map(discrepancy_json).collect()));
            } else {
                print_table(&found);
            }
            Ok(ExitCode::SUCCESS)
        }
        DiscrepancyCommand::Resolve { id, note } => {
            match operator.resolve_discrepancy(id, audit.actor(), &note).await {
                Ok(done) => {
                    let after = json!({
                        "resolved": true,
                        "operationId": done.operation_id.to_string(),
                        "note": done.resolution.as_ref().map(|r| r.note.as_str()),
                    });
                    audit
                        .record(
                            "discrepancy.resolve",
                            id,
                            Some(json!({"resolved": false})),
                            Some(after),
                        )
                        .await?;
                    println!(
                        "discrepancy {id} of operation {} resolved",
                        done.operation_id
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(ResolveError::Note(rule)) => Err(Usage::new(format!("--note: {rule}"))),
                Err(ResolveError::NotFound(_)) => {
                    eprintln!("error: no discrepancy {id}");
                    Ok(ExitCode::from(EXIT_NOT_FOUND))
                }
                Err(ResolveError::AlreadyResolved(found)) => {
                    let by = found
                        .resolution
                        .as_ref()
                        .map(|r| format!(" by {} at {}", r.actor, r.at.to_rfc3339()))
                        .unwrap_or_default();
                    eprintln!("error: discrepancy {id} is already resolved{by}; nothing changed");
                    Ok(ExitCode::from(EXIT_REFUSED))
                }
                Err(ResolveError::Store(error)) => Err(error.into()),
            }
        }
    }
}

/// One discrepancy for `--json`: every field always present, `null` while open.
pub(super) fn discrepancy_json(d: &RecordedDiscrepancy) -> Value {
    let resolution = d.resolution.as_ref();
    json!({
        "id": d.id, "operationId": d.operation_id.to_string(), "provider": d.provider,
        "reported": d.reported, "at": d.at.to_rfc3339(), "resolved": resolution.is_some(),
        "resolvedAt": resolution.map(|r| r.at.to_rfc3339()),
        "resolvedBy": resolution.map(|r| r.actor.as_str()),
        "note": resolution.map(|r| r.note.as_str()),
        "ledgerEntry": resolution.and_then(|r| r.ledger_entry),
    })
}

/// The discrepancies as a table; text from the provider with control characters replaced.
pub(super) fn print_table(found: &[RecordedDiscrepancy]) {
    println!(
        "{:<6} {:<36} {:<12} {:<10} {:<20} {:<8} RESOLVED / NOTE",
        "ID", "OPERATION", "PROVIDER", "REPORTED", "AT", "STATE"
    );
    for d in found {
        let (state, resolution) = match &d.resolution {
            None => ("open", String::new()),
            Some(r) => {
                let entry = r
                    .ledger_entry
                    .map(|n| format!(" (ledger entry {n})"))
                    .unwrap_or_default();
                let line = format!("{} {}{entry}: {}", r.at.to_rfc3339(), r.actor, r.note);
                ("resolved", line)
            }
        };
        println!(
            "{:<6} {:<36} {:<12} {:<10} {:<20} {:<8} {}",
            d.id,
            d.operation_id,
            shown(&d.provider),
            shown(&d.reported),
            d.at.to_rfc3339(),
            state,
            resolution
        );
    }
}
