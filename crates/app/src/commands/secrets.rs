//! `gateway secrets encrypt`: stored secrets converted in place to GATEWAY_MASTER_KEY.

use std::process::ExitCode;

use adapters_db::Database;
use domain::ports::{Clock, ProcessRegistry};
use serde_json::json;

use super::audit::Audit;
use super::{print_json, Usage, EXIT_REFUSED};
use crate::cli::SecretsCommand;
use crate::system::SystemClock;

/// How recently a serving process must have reported to count as running: three of its
/// report intervals.
const SERVING_WITHIN_SECS: i64 = 3 * crate::processes::REPORT_EVERY.as_secs() as i64;

pub async fn secrets(
    database: &Database,
    keyed: bool,
    audit: &Audit,
    command: SecretsCommand,
) -> anyhow::Result<ExitCode> {
    let SecretsCommand::Encrypt { json } = command;
    if !keyed {
        return Err(Usage::new(
            "gateway secrets encrypt needs GATEWAY_MASTER_KEY (64 hex characters) in the environment",
        ));
    }
    let since = SystemClock.now().plus_seconds(-SERVING_WITHIN_SECS);
    let serving = database.processes(since).await?;
    if let Some(process) = serving.first() {
        eprintln!(
            "error: a gateway is serving this database (process {} reported at {}); stop every gateway process first",
            process.id,
            process.seen_at.to_rfc3339()
        );
        return Ok(ExitCode::from(EXIT_REFUSED));
    }
    let store = database.clone();
    let converted = tokio::task::spawn_blocking(move || store.encrypt_secrets()).await??;
    if converted > 0 {
        audit
            .record(
                "secrets.encrypt",
                "stored secrets",
                None,
                Some(json!({ "encrypted": converted })),
            )
            .await?;
    }
    if json {
        print_json(&json!({ "encrypted": converted }));
    } else if converted == 0 {
        println!("every stored secret was already encrypted; nothing changed");
    } else if database.backend() == adapters_db::Backend::Sqlite {
        println!(
            "{converted} stored secrets encrypted; no clear copy is left in the database files"
        );
    } else {
        println!("{converted} stored secrets encrypted and the tables rewritten (VACUUM FULL); PostgreSQL's write-ahead log, replicas and backups may still hold the old values: rotate the merchants' secrets if they may have been read");
    }
    Ok(ExitCode::SUCCESS)
}
