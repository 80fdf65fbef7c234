//! `gateway provider ...`: acquirer records. Credentials come from the environment
//! variables named on the command line or from a JSON object on stdin; literal credentials
//! on the command line are refused, and credentials are never printed or logged.

use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use adapters_acquirer::AcquirerClient;
use domain::circuit::CircuitState;
use domain::operator::{NewProvider, Operator, ProviderChanges, ProviderError};
use domain::ports::{Clock, ProcessRegistry, ProcessReport};
use domain::provider::{AcquirerProvider, Credentials, ProtocolName, ProviderName, SANDBOX};
use serde_json::{json, Value};

use super::audit::Audit;
use super::{print_json, Usage, EXIT_NOT_FOUND, EXIT_REFUSED};
use crate::cli::{CredentialArgs, ProviderAddArgs, ProviderCommand, ProviderUpdateArgs};
use crate::config::parse_duration;
use crate::processes::LIVE_WITHIN_SECONDS;
use crate::protocols::Protocols;
use crate::system::SystemClock;

/// `gateway provider ...`; `processes` has the serving processes' circuits for `list`.
pub async fn provider(
    operator: &Operator,
    processes: &dyn ProcessRegistry,
    audit: &Audit,
    command: ProviderCommand,
) -> anyhow::Result<ExitCode> {
    match command {
        ProviderCommand::Add(args) => add(operator, audit, args).await,
        ProviderCommand::List { json } => list(operator, processes, json).await,
        ProviderCommand::Enable { name } => set_enabled(operator, audit, &name, true).await,
        ProviderCommand::Disable { name } => set_enabled(operator, audit, &name, false).await,
        ProviderCommand::Update(args) => update(operator, audit, args).await,
    }
}

/// The provider named `name` as the audit log records it (never its credentials).
async fn recorded(operator: &Operator, name: &str) -> anyhow::Result<Option<Value>> {
    Ok(operator.provider(name).await?.as_ref().map(provider_json))
}

/// Audits a change that was made (`result` is Ok); a refusal changed nothing.
async fn audit_change(
    audit: &Audit,
    action: &str,
    before: Option<Value>,
    result: &Result<AcquirerProvider, ProviderError>,
) -> anyhow::Result<()> {
    let Ok(provider) = result else {
        return Ok(());
    };
    let mut after = provider_json(provider);
    if action == "provider.update" {
        after["credentialsChanged"] = json!(true);
    }
    audit
        .record(action, provider.name.as_str(), before, Some(after))
        .await
}

async fn add(
    operator: &Operator,
    audit: &Audit,
    args: ProviderAddArgs,
) -> anyhow::Result<ExitCode> {
    let protocols = Protocols::new(Arc::new(AcquirerClient::new()));
    if !protocols.speaks(&args.kind) {
        return Err(Usage::new(format!(
            "--kind: {:?} is not a provider kind one can add ({})",
            args.kind,
            protocols.names().join(", ")
        )));
    }
    let protocol =
        ProtocolName::parse(&args.kind).map_err(|e| Usage::new(format!("--kind: {e}")))?;
    let timeout = timeout(&args.timeout)?;
    let Some(credentials) = credentials(&args.credentials)? else {
        return Err(Usage::new(
            "credentials are required: --api-key-env VAR and --webhook-secret-env VAR, or --credentials-stdin",
        ));
    };
    let new = NewProvider {
        name: args.name,
        protocol,
        url: args.url,
        allow_insecure: args.allow_insecure,
        timeout,
        credentials,
    };
    let added = operator.add_provider(new).await;
    audit_change(audit, "provider.add", None, &added).await?;
    answer(added, args.json, "added")
}

async fn update(
    operator: &Operator,
    audit: &Audit,
    args: ProviderUpdateArgs,
) -> anyhow::Result<ExitCode> {
    checked_name(&args.name)?;
    let before = recorded(operator, &args.name).await?;
    let changes = ProviderChanges {
        url: args.url,
        allow_insecure: args.allow_insecure.then_some(true),
        timeout: args.timeout.as_deref().map(timeout).transpose()?,
        credentials: credentials(&args.credentials)?,
        enabled: None,
    };
    let new_credentials = changes.credentials.is_some();
    let updated = operator.update_provider(&args.name, changes).await;
    let action = if new_credentials {
        "provider.update"
    } else {
        "provider.update_settings"
    };
    audit_change(audit, action, before, &updated).await?;
    answer(updated, args.json, "updated")
}

async fn set_enabled(
    operator: &Operator,
    audit: &Audit,
    name: &str,
    enabled: bool,
) -> anyhow::Result<ExitCode> {
    checked_name(name)?;
    let before = recorded(operator, name).await?;
    let changes = ProviderChanges {
        enabled: Some(enabled),
        ..ProviderChanges::default()
    };
    let verb = if enabled { "enabled" } else { "disabled" };
    let changed = operator.update_provider(name, changes).await;
    let action = if enabled {
        "provider.enable"
    } else {
        "provider.disable"
    };
    audit_change(audit, action, before, &changed).await?;
    answer(changed, false, verb)
}

/// Prints the provider (never its credentials) or the refusal, and the exit code.
fn answer(
    result: Result<AcquirerProvider, ProviderError>,
    json: bool,
    verb: &str,
) -> anyhow::Result<ExitCode> {
    match result {
        Ok(provider) => {
            if json {
                print_json(&provider_json(&provider));
            } else {
                println!("provider {} {verb}", provider.name);
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(ProviderError::Invalid { field, rule }) => Err(Usage::new(format!("{field}: {rule}"))),
        Err(refused @ ProviderError::NameTaken(_)) => {
            eprintln!("error: {refused}");
            Ok(ExitCode::from(EXIT_REFUSED))
        }
        Err(unknown @ ProviderError::Unknown(_)) => {
            eprintln!("error: {unknown}");
            Ok(ExitCode::from(EXIT_NOT_FOUND))
        }
        Err(ProviderError::Store(error)) => Err(error.into()),
    }
}

/// The providers, then each live process's circuits (see [`Circuits`]).
async fn list(
    operator: &Operator,
    processes: &dyn ProcessRegistry,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let providers = operator.providers().await?;
    let since = SystemClock.now().plus_seconds(-LIVE_WITHIN_SECONDS);
    let circuits = Circuits::new(&providers, processes.processes(since).await?);
    if json {
        let mut sandbox = json!({"name": SANDBOX, "kind": "sandbox", "enabled": true});
        sandbox["circuits"] = circuits.json_of(SANDBOX);
        let mut rows = vec![sandbox];
        rows.extend(providers.iter().map(|p| {
            let mut row = provider_json(p);
            row["circuits"] = circuits.json_of(p.name.as_str());
            row
        }));
        print_json(&json!(rows));
    } else {
        print_providers(&providers);
        println!();
        circuits.print();
    }
    Ok(ExitCode::SUCCESS)
}

fn print_providers(providers: &[AcquirerProvider]) {
    println!(
        "{:<33} {:<9} {:<8} {:<8} URL",
        "NAME", "KIND", "TIMEOUT", "ENABLED"
    );
    println!(
        "{:<33} {:<9} {:<8} {:<8} (built in)",
        SANDBOX, "sandbox", "-", true
    );
    for p in providers {
        println!(
            "{:<33} {:<9} {:<8} {:<8} {}",
            // As a `str`: the name's own Display ignores the width.
            p.name.as_str(),
            p.protocol.as_str(),
            format!("{}s", p.timeout.as_secs()),
            p.enabled,
            p.url.as_str()
        );
    }
}

/// The circuit breakers of the live processes (reported in the last
/// [`LIVE_WITHIN_SECONDS`]): every acquirer, and any other provider a process reports a
/// circuit for, in every live process. A process that has not called a provider has no
/// circuit for it, which is shown as closed with no failures.
struct Circuits {
    providers: Vec<String>,
    live: Vec<ProcessReport>,
}

impl Circuits {
    fn new(acquirers: &[AcquirerProvider], live: Vec<ProcessReport>) -> Self {
        let mut providers: Vec<String> = acquirers
            .iter()
            .map(|p| p.name.as_str().to_string())
            .chain(
                live.iter()
                    .flat_map(|p| p.circuits.iter().map(|c| c.provider.clone())),
            )
            .collect();
        providers.sort();
        providers.dedup();
        Self { providers, live }
    }

    /// `provider`'s circuit in `process`.
    fn state(process: &ProcessReport, provider: &str) -> CircuitState {
        process
            .circuits
            .iter()
            .find(|c| c.provider == provider)
            .map_or(CircuitState::Closed { failures: 0 }, |c| c.state)
    }

    /// `provider`'s circuit in each live process; `[]` for a provider with no circuit
    /// breaker (the sandbox).
    fn json_of(&self, provider: &str) -> Value {
        if !self.providers.iter().any(|p| p == provider) {
            return json!([]);
        }
        let circuits: Vec<Value> = self
            .live
            .iter()
            .map(|process| {
                let state = Self::state(process, provider);
                let (failures, open_until) = state_details(state);
                json!({
                    "process": process.id, "version": process.version,
                    "seenAt": process.seen_at.to_rfc3339(), "state": state.name(),
                    "failures": failures, "openUntil": open_until.map(|t| t.to_rfc3339()),
                })
            })
            .collect();
        json!(circuits)
    }

    /// The "Circuits" table: one row per live process and provider (a process with no
    /// provider to show gets one row of its own).
    fn print(&self) {
        if self.live.is_empty() {
            println!("Circuits: no serving process seen in the last {LIVE_WITHIN_SECONDS} s");
            return;
        }
        println!("Circuits (serving processes seen in the last {LIVE_WITHIN_SECONDS} s):");
        let width = self
            .live
            .iter()
            .map(|p| p.id.len())
            .chain([7])
            .max()
            .unwrap_or(7);
        println!(
            "{:<width$} {:<9} {:<20} {:<33} {:<9} {:<8} OPEN UNTIL",
            "PROCESS", "VERSION", "SEEN", "PROVIDER", "STATE", "FAILURES"
        );
        for process in &self.live {
            let row = |provider: &str, state: &str, failures: &str, open_until: &str| {
                println!(
                    "{:<width$} {:<9} {:<20} {:<33} {:<9} {:<8} {}",
                    process.id,
                    process.version,
                    process.seen_at,
                    provider,
                    state,
                    failures,
                    open_until
                );
            };
            if self.providers.is_empty() {
                row("-", "-", "-", "-");
            }
            for provider in &self.providers {
                let state = Self::state(process, provider);
                let (failures, open_until) = state_details(state);
                let failures = failures.map_or("-".to_string(), |n| n.to_string());
                let open_until = open_until.map_or("-".to_string(), |t| t.to_rfc3339());
                row(provider, state.name(), &failures, &open_until);
            }
        }
    }
}

/// A circuit's failures in a row (closed only) and until when it is open (open only).
fn state_details(state: CircuitState) -> (Option<u32>, Option<domain::Timestamp>) {
    match state {
        CircuitState::Closed { failures } => (Some(failures), None),
        CircuitState::Open { until } => (None, Some(until)),
        CircuitState::HalfOpen { .. } => (None, None),
    }
}

fn provider_json(p: &AcquirerProvider) -> serde_json::Value {
    json!({
        "name": p.name.as_str(), "kind": p.protocol.as_str(), "url": p.url.as_str(),
        "timeoutSeconds": p.timeout.as_secs(), "allowInsecure": p.allow_insecure,
        "enabled": p.enabled,
    })
}

/// A malformed provider name is a bad value (exit 2), not an unknown provider (exit 3).
fn checked_name(name: &str) -> anyhow::Result<()> {
    ProviderName::parse(name)
        .map(|_| ())
        .map_err(|rule| Usage::new(format!("NAME: {rule}")))
}

fn timeout(text: &str) -> anyhow::Result<Duration> {
    parse_duration(text)
        .ok_or_else(|| Usage::new(format!("--timeout: {text:?} is not a duration such as 5s")))
}

/// The credentials the flags name: both variables, or stdin; `None` when none is given.
fn credentials(args: &CredentialArgs) -> anyhow::Result<Option<Credentials>> {
    if args.api_key.is_some() || args.webhook_secret.is_some() {
        return Err(Usage::new(
            "literal credentials are refused on the command line; use --api-key-env VAR and --webhook-secret-env VAR, or --credentials-stdin",
        ));
    }
    let (api_key, webhook_secret) = match (&args.api_key_env, &args.webhook_secret_env) {
        (Some(_), _) | (_, Some(_)) if args.credentials_stdin => {
            return Err(Usage::new(
                "use either --credentials-stdin or the --*-env flags, not both",
            ))
        }
        (Some(key_var), Some(secret_var)) => (env_value(key_var)?, env_value(secret_var)?),
        (None, None) if args.credentials_stdin => from_stdin()?,
        (None, None) => return Ok(None),
        _ => {
            return Err(Usage::new(
                "give both --api-key-env and --webhook-secret-env",
            ))
        }
    };
    Credentials::new(&api_key, &webhook_secret)
        .map(Some)
        .map_err(|rule| Usage::new(format!("credentials: {rule}")))
}

fn env_value(variable: &str) -> anyhow::Result<String> {
    std::env::var(variable).map_err(|_| {
        Usage::new(format!(
            "the environment variable {variable} is not set (or not UTF-8)"
        ))
    })
}

/// `{"apiKey": "...", "webhookSecret": "..."}` from stdin (no other key).
fn from_stdin() -> anyhow::Result<(String, String)> {
    let mut text = String::new();
    std::io::stdin()
        .take(64 * 1024)
        .read_to_string(&mut text)
        .map_err(|_| Usage::new("stdin: cannot be read as UTF-8 text"))?;
    let shape = || Usage::new(r#"stdin: must be {"apiKey": "...", "webhookSecret": "..."}"#);
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|_| shape())?;
    let object = value
        .as_object()
        .filter(|o| o.len() == 2)
        .ok_or_else(shape)?;
    let field = |key: &str| object.get(key).and_then(|v| v.as_str()).map(str::to_string);
    match (field("apiKey"), field("webhookSecret")) {
        (Some(key), Some(secret)) => Ok((key, secret)),
        _ => Err(shape()),
    }
}
