//! `gateway operator create|disable|set-password|list`: the operator console's accounts.
//! Passwords are generated (printed once) or read from stdin, and stored only as Argon2id
//! hashes.

use std::io::Read;
use std::process::ExitCode;

use domain::console::{check_password, hash_password, operator_name, ConsoleAccount, Role};
use domain::ports::{Clock, ConsoleStore};
use serde_json::json;

use super::audit::Audit;
use super::{print_json, Usage, EXIT_NOT_FOUND, EXIT_REFUSED};
use crate::cli::OperatorCommand;
use crate::system::{new_password, SystemClock};

pub async fn operator(
    store: &dyn ConsoleStore,
    audit: &Audit,
    command: OperatorCommand,
) -> anyhow::Result<ExitCode> {
    match command {
        OperatorCommand::Create {
            name,
            role,
            password_stdin,
            json,
        } => {
            let name = operator_name(&name).map_err(|e| Usage::new(format!("--name: {e}")))?;
            let role = Role::parse(&role).map_err(|e| Usage::new(format!("--role: {e}")))?;
            let (password, generated) = if password_stdin {
                (read_password()?, false)
            } else {
                (new_password(), true)
            };
            let shown = generated.then(|| password.clone());
            let hash = tokio::task::spawn_blocking(move || hash_password(&password)).await?;
            let account = ConsoleAccount {
                name: name.clone(),
                role,
                password_hash: hash,
                enabled: true,
                created_at: SystemClock.now(),
            };
            if !store.insert_account(&account).await? {
                eprintln!("error: an operator named {name:?} already exists");
                return Ok(ExitCode::from(EXIT_REFUSED));
            }
            // Printed before the audit entry is written: the account exists now, and its
            // generated password is shown only this once.
            print_created(&name, role, shown.as_deref(), json);
            let after = json!({"name": name, "role": role.as_str(), "enabled": true});
            audit
                .record("operator.create", &name, None, Some(after))
                .await?;
            Ok(ExitCode::SUCCESS)
        }
        OperatorCommand::Disable { name } => {
            let name = operator_name(&name).map_err(|e| Usage::new(format!("name: {e}")))?;
            let Some(before) = store.account(&name).await? else {
                eprintln!("error: no operator {name}");
                return Ok(ExitCode::from(EXIT_NOT_FOUND));
            };
            store.disable_account(&name).await?;
            audit
                .record(
                    "operator.disable",
                    &name,
                    Some(json!({"enabled": before.enabled})),
                    Some(json!({"enabled": false})),
                )
                .await?;
            println!("operator {name} disabled; their sessions ended");
            Ok(ExitCode::SUCCESS)
        }
        OperatorCommand::SetPassword {
            name,
            password_stdin: _,
        } => set_password(store, audit, &name).await,
        OperatorCommand::List { json } => {
            let accounts = store.accounts().await?;
            if json {
                let rows: Vec<_> = accounts
                    .iter()
                    .map(|a| {
                        json!({"name": a.name, "role": a.role.as_str(), "enabled": a.enabled,
                               "createdAt": a.created_at.to_rfc3339()})
                    })
                    .collect();
                print_json(&json!(rows));
            } else {
                println!("{:<32} {:<9} {:<8} CREATED", "NAME", "ROLE", "ENABLED");
                for a in &accounts {
                    println!(
                        "{:<32} {:<9} {:<8} {}",
                        a.name,
                        a.role,
                        a.enabled,
                        a.created_at.to_rfc3339()
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `operator set-password NAME --password-stdin`: the new hash and the end of every session
/// of the account, in one transaction.
async fn set_password(
    store: &dyn ConsoleStore,
    audit: &Audit,
    name: &str,
) -> anyhow::Result<ExitCode> {
    let name = operator_name(name).map_err(|e| Usage::new(format!("name: {e}")))?;
    let password = read_password()?;
    if store.account(&name).await?.is_none() {
        eprintln!("error: no operator {name}");
        return Ok(ExitCode::from(EXIT_NOT_FOUND));
    }
    let hash = tokio::task::spawn_blocking(move || hash_password(&password)).await?;
    if !store.set_password(&name, &hash).await? {
        eprintln!("error: no operator {name}");
        return Ok(ExitCode::from(EXIT_NOT_FOUND));
    }
    audit.record("operator.password", &name, None, None).await?;
    println!("operator {name}: password changed; their sessions ended");
    Ok(ExitCode::SUCCESS)
}

/// Prints the new account with its generated password (shown only now); a password read
/// from stdin is never printed.
fn print_created(name: &str, role: Role, password: Option<&str>, json: bool) {
    if json {
        let mut out = json!({"name": name, "role": role.as_str()});
        if let Some(password) = password {
            out["password"] = json!(password);
        }
        print_json(&out);
        return;
    }
    println!("operator created: {name} ({role})");
    if let Some(password) = password {
        println!("  password: {password}");
        println!("The password is shown only now; hand it over safely.");
    }
}

/// The password on stdin (one line; the trailing newline is dropped), checked.
fn read_password() -> anyhow::Result<String> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text)?;
    let password = text.strip_suffix('\n').unwrap_or(&text);
    let password = password.strip_suffix('\r').unwrap_or(password).to_string();
    check_password(&password)
        .map_err(|e| Usage::new(format!("--password-stdin: the password {e}")))?;
    Ok(password)
}
