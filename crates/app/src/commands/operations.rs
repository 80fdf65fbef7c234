//! `gateway operation cancel ID`: asks the operation's acquirer to cancel it and applies the
//! answer. No operator command sets a status directly.

use std::process::ExitCode;
use std::sync::Arc;

use adapters_acquirer::AcquirerClient;
use adapters_db::Database;
use adapters_sandbox::{SandboxConfig, SandboxProvider};
use domain::operation::Operation;
use domain::service::{AcquirerSettings, CancelError};
use domain::OperationId;
use serde_json::json;

use super::{print_json, Usage, EXIT_NOT_FOUND, EXIT_REFUSED};
use crate::application::gateway_on;
use crate::cli::OperationCommand;

pub async fn operation(database: &Database, command: OperationCommand) -> anyhow::Result<ExitCode> {
    match command {
        OperationCommand::Cancel { id, json } => cancel(database, &id, json).await,
    }
}

async fn cancel(database: &Database, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    let id = OperationId::parse(id).map_err(|e| Usage::new(format!("ID: {e}")))?;
    // The sandbox is not asked here (its operations are not canceled at a provider).
    let sandbox = Arc::new(SandboxProvider::new(SandboxConfig {
        public_url: AcquirerSettings::default().public_url,
        settle_after: adapters_sandbox::DEFAULT_SETTLE_AFTER,
    }));
    let acquirer = Arc::new(AcquirerClient::new());
    let gateway = gateway_on(database, sandbox, acquirer, AcquirerSettings::default());
    match gateway.cancel_at_provider(id).await {
        Ok(done) => {
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
