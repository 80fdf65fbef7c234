//! `gateway dispute list [--merchant M] [--status S] [--json]`, `gateway dispute accept ID
//! [--amount A] --reason TEXT` and `gateway dispute reject ID --reason TEXT`: the disputes of
//! deposits, and an operator's decision on an open appeal (audited). Accepting moves the
//! money through the ledger with the deposit's stored tariff; the deposit's status never
//! changes.

use std::process::ExitCode;

use adapters_db::Database;
use domain::dispute::{dispute_text, Dispute, DisputeFilter, DisputeStatus};
use domain::service::DecideError;
use domain::{format_minor, AmountText, DisputeId, MerchantId};
use serde_json::{json, Value};

use super::audit::Audit;
use super::{offline_gateway, print_json, shown, Usage, EXIT_NOT_FOUND, EXIT_REFUSED};
use crate::cli::DisputeCommand;

pub async fn dispute(
    database: &Database,
    audit: &Audit,
    command: DisputeCommand,
) -> anyhow::Result<ExitCode> {
    let gateway = offline_gateway(database);
    let disputes = gateway.disputes();
    match command {
        DisputeCommand::List {
            merchant,
            status,
            limit,
            json,
        } => {
            let filter = DisputeFilter {
                merchant_id: merchant
                    .map(|m| {
                        MerchantId::parse(&m).map_err(|e| Usage::new(format!("--merchant: {e}")))
                    })
                    .transpose()?,
                status: status
                    .map(|s| {
                        DisputeStatus::parse(&s).map_err(|e| Usage::new(format!("--status: {e}")))
                    })
                    .transpose()?,
                kind: None,
                limit,
            };
            let found = disputes.list(&filter).await?;
            if json {
                print_json(&Value::Array(found.iter().map(dispute_json).collect()));
            } else {
                print_table(&found);
            }
            Ok(ExitCode::SUCCESS)
        }
        DisputeCommand::Accept { id, amount, reason } => {
            let id = dispute_id(&id)?;
            let amount = amount
                .map(|a| AmountText::parse(&a).map_err(|e| Usage::new(format!("--amount: {e}"))))
                .transpose()?;
            let reason = reason_text(&reason)?;
            let decided = disputes.accept(id, amount, Some(reason)).await;
            finish(audit, id, "dispute.accept", decided).await
        }
        DisputeCommand::Reject { id, reason } => {
            let id = dispute_id(&id)?;
            let reason = reason_text(&reason)?;
            let decided = disputes.reject(id, Some(reason)).await;
            finish(audit, id, "dispute.reject", decided).await
        }
    }
}

/// The ID argument; a malformed one is a usage error (exit 2).
fn dispute_id(text: &str) -> anyhow::Result<DisputeId> {
    DisputeId::parse(text).map_err(|e| Usage::new(format!("ID: {e}")))
}

/// `--reason`: 1 to 2000 characters once trimmed.
fn reason_text(text: &str) -> anyhow::Result<String> {
    match dispute_text(text) {
        Ok(Some(reason)) => Ok(reason),
        Ok(None) => Err(Usage::new("--reason: must not be empty")),
        Err(e) => Err(Usage::new(format!("--reason: {e}"))),
    }
}

/// Audits and prints a decision, or says why there was none (3: unknown id; 4: not an open
/// appeal, or the money could not move; 2: a bad amount).
async fn finish(
    audit: &Audit,
    id: DisputeId,
    action: &str,
    decided: Result<Dispute, DecideError>,
) -> anyhow::Result<ExitCode> {
    match decided {
        Ok(done) => {
            let after = json!({
                "status": done.status.as_str(),
                "amount": format_minor(done.amount.minor(), done.currency),
                "resolution": done.resolution,
            });
            audit
                .record(action, id, Some(json!({"status": "open"})), Some(after))
                .await?;
            println!(
                "dispute {id} of operation {} {} at {} {}",
                done.operation_id,
                done.status.as_str(),
                done.amount.format(done.currency),
                done.currency.as_str()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(DecideError::NotFound) => {
            eprintln!("error: no dispute {id}");
            Ok(ExitCode::from(EXIT_NOT_FOUND))
        }
        Err(DecideError::NotOpenAppeal) => {
            eprintln!("error: dispute {id} is not an open appeal; nothing changed");
            Ok(ExitCode::from(EXIT_REFUSED))
        }
        Err(DecideError::Invalid(errors)) => {
            let why = errors.0.first().map_or("invalid", |e| e.message.as_str());
            Err(Usage::new(format!("--amount: {why}")))
        }
        Err(DecideError::AmountTooSmall) => {
            eprintln!("error: the deposit's fee on this amount would be at least the amount; nothing changed");
            Ok(ExitCode::from(EXIT_REFUSED))
        }
        Err(DecideError::InsufficientBalance) => {
            eprintln!("error: the merchant's available balance cannot cover the correction; nothing changed");
            Ok(ExitCode::from(EXIT_REFUSED))
        }
        Err(DecideError::Unavailable(e)) => {
            Err(anyhow::anyhow!("the database is unavailable: {e}"))
        }
        Err(DecideError::Unknown(e)) => Err(e),
    }
}

/// One dispute for `--json`: the API's `Dispute` with `merchantId`.
fn dispute_json(d: &Dispute) -> Value {
    let mut shape = adapters_http::dispute_shape(d);
    if let Value::Object(fields) = &mut shape {
        fields.insert("merchantId".into(), json!(d.merchant_id.as_str()));
    }
    shape
}

fn print_table(found: &[Dispute]) {
    println!(
        "{:<36} {:<10} {:<12} {:<18} {:>12} {:<3} {:<36} {:<24} DUE BY",
        "ID", "KIND", "STATUS", "REASON", "AMOUNT", "CUR", "OPERATION", "MERCHANT"
    );
    for d in found {
        println!(
            "{:<36} {:<10} {:<12} {:<18} {:>12} {:<3} {:<36} {:<24} {}",
            d.id,
            d.kind.as_str(),
            d.status.as_str(),
            shown(&d.reason),
            d.amount.format(d.currency),
            d.currency.as_str(),
            d.operation_id,
            d.merchant_id.as_str(),
            d.due_by
                .map(|t| t.to_rfc3339())
                .unwrap_or_else(|| "-".into())
        );
    }
}
