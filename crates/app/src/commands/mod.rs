//! The sub-commands. Each returns the process exit code: 0 success, 1 failure,
//! 2 bad usage (clap's own), 3 not found, 4 refused (name taken, insufficient balance).

mod admin;
pub mod audit;
mod discrepancies;
mod disputes;
mod ledger;
mod operations;
mod operators;
mod providers;
mod secrets;
mod statements;
mod tariffs;

use std::process::ExitCode;
use std::sync::Arc;

use audit::Audit;

use crate::application::{operator, tariffs_of, Application};
use crate::cli::{Command, ServeArgs};
use crate::config::{parse_database_url, ServeConfig};

/// Exit code for "no such merchant, route, callback or discrepancy".
pub const EXIT_NOT_FOUND: u8 = 3;
/// Exit code for a refused change (name taken, balance too low, a callback held, a
/// discrepancy already resolved).
pub const EXIT_REFUSED: u8 = 4;
/// Exit code for a bad flag or value.
pub const EXIT_USAGE: u8 = 2;

/// A bad flag or value (exit 2): the message names the flag and what it accepts.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

impl Usage {
    /// As an `anyhow::Error`, so commands can `?` it; `main` exits 2 for it.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(message: impl Into<String>) -> anyhow::Error {
        Usage(message.into()).into()
    }
}

/// `gateway serve [--demo]`.
pub async fn serve(
    database_url: &str,
    master_key: Option<&str>,
    args: &ServeArgs,
) -> anyhow::Result<ExitCode> {
    let mut config = ServeConfig::from_args(database_url, args)?;
    config.master_key = crate::config::master_key(master_key)?;
    let app = Application::build(config).await?;
    if app.config().demo {
        crate::demo::ensure_demo(&app).await?;
        let password = match app.console_url() {
            Some(_) => {
                let audit = Audit::cli(Arc::new(app.database().clone()));
                crate::demo::ensure_demo_operator(app.database(), &audit).await?
            }
            None => None,
        };
        crate::demo::print_banner(&app, password.as_deref());
    }
    tracing::info!(port = app.port(), "gateway listening");
    if let Some(console_port) = app.console_port() {
        tracing::info!(console_port, "operator console listening on its own port");
    }
    app.run_until_stopped().await?;
    Ok(ExitCode::SUCCESS)
}

/// Every command but `serve`.
pub async fn run(
    database_url: &str,
    master_key: Option<&str>,
    command: Command,
) -> anyhow::Result<ExitCode> {
    let url = parse_database_url(database_url)?;
    let key = crate::config::master_key(master_key)?;
    let keyed = key.is_some();
    let database = crate::application::open_database(&url, None, key).await?;
    let audit = Audit::cli(Arc::new(database.clone()));
    match command {
        Command::Serve(_) => unreachable!("serve is handled by commands::serve"),
        Command::Migrate => {
            println!("migrations applied");
            Ok(ExitCode::SUCCESS)
        }
        Command::Merchant(cmd) => admin::merchant(&operator(&database), &audit, cmd).await,
        Command::Balance(cmd) => admin::balance(&operator(&database), &audit, cmd).await,
        Command::Route(cmd) => admin::route(&operator(&database), &audit, cmd).await,
        Command::Tariff(cmd) => tariffs::tariff(&tariffs_of(&database), &audit, cmd).await,
        Command::Statement(args) => {
            statements::statement(&operator(&database), &database, &args).await
        }
        Command::Provider(cmd) => {
            providers::provider(&operator(&database), &database, &audit, cmd).await
        }
        Command::Operation(cmd) => operations::operation(&database, &audit, cmd).await,
        Command::Callbacks(cmd) => ledger::callbacks(&database, &audit, cmd).await,
        Command::Discrepancy(cmd) => {
            discrepancies::discrepancy(&operator(&database), &audit, cmd).await
        }
        Command::Dispute(cmd) => disputes::dispute(&database, &audit, cmd).await,
        Command::Ledger(cmd) => ledger::ledger(&operator(&database), &database, &audit, cmd).await,
        Command::Secrets(cmd) => secrets::secrets(&database, keyed, &audit, cmd).await,
        Command::Operator(cmd) => operators::operator(&database, &audit, cmd).await,
    }
}

/// The use cases over `database` for a command, with no provider to call: the sandbox only
/// for what it settles itself, and acquirers as configured (an operator's cancel asks them).
fn offline_gateway(database: &adapters_db::Database) -> domain::service::Gateway {
    use domain::service::AcquirerSettings;
    let sandbox = std::sync::Arc::new(adapters_sandbox::SandboxProvider::new(
        adapters_sandbox::SandboxConfig {
            public_url: AcquirerSettings::default().public_url,
            settle_after: adapters_sandbox::DEFAULT_SETTLE_AFTER,
        },
    ));
    let acquirer = std::sync::Arc::new(adapters_acquirer::AcquirerClient::new());
    crate::application::gateway_on(database, sandbox, acquirer, AcquirerSettings::default())
}

/// Prints `value` as pretty JSON.
/// Text from outside (an acquirer's codes, a callback's error) with control characters
/// replaced, so it cannot steer the terminal.
fn shown(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

fn print_json(value: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}
