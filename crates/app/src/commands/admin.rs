//! `gateway merchant|balance|route ...`, through the operator use cases (`domain::operator`).

use std::process::ExitCode;

use anyhow::anyhow;
use domain::ledger::ManualNote;
use domain::merchant::{full_access, parse_access, KeyRing, Secret, SigningRulesChange};
use domain::operator::{
    parse_overlap, AddRouteError, BalanceError, CreateMerchantError, ManualAdjustment, ManualMove,
    NewMerchant, Operator,
};
use domain::provider::{ProviderName, SANDBOX};
use domain::route::{
    acquirer_flow, default_route_bounds, route_amounts, route_currency, route_lifetime, NewRoute,
};
use domain::route::{Flow, Route};
use domain::{
    format_minor, Amount, Currency, Direction, MerchantId, OperationId, PaymentMethod, Timestamp,
};
use serde_json::json;

use super::audit::Audit;
use super::{print_json, Usage, EXIT_NOT_FOUND, EXIT_REFUSED};
use crate::cli::{BalanceArgs, BalanceCommand, MerchantCommand, RouteAddArgs, RouteCommand};
use crate::system::new_secret;

pub async fn merchant(
    operator: &Operator,
    audit: &Audit,
    command: MerchantCommand,
) -> anyhow::Result<ExitCode> {
    match command {
        MerchantCommand::Create {
            name,
            methods,
            require_timestamp,
            require_signature_v2,
            no_require_signature_v2: _,
            json,
        } => {
            let access = match methods {
                Some(list) => parse_access(&list).map_err(|e| anyhow!("--methods: {e}"))?,
                None => full_access(),
            };
            let new = NewMerchant {
                id: None,
                name: name.clone(),
                access,
                deposit_secret: Secret::new(new_secret()),
                withdrawal_secret: Secret::new(new_secret()),
                require_timestamp,
                require_signature_v2,
            };
            match operator.create_merchant(new).await {
                Ok(merchant) => {
                    audit
                        .record(
                            "merchant.create",
                            &merchant.id,
                            None,
                            Some(merchant_json(&merchant)),
                        )
                        .await?;
                    let deposit = merchant.signing_secret(Direction::Deposit).expose();
                    let withdrawal = merchant.signing_secret(Direction::Withdrawal).expose();
                    if json {
                        print_json(&json!({
                            "merchantId": merchant.id.as_str(),
                            "depositSecret": deposit,
                            "withdrawalSecret": withdrawal,
                        }));
                    } else {
                        println!("merchant created: {name}");
                        println!("  merchant id:       {}", merchant.id);
                        println!("  deposit secret:    {deposit}");
                        println!("  withdrawal secret: {withdrawal}");
                        if merchant.require_timestamp {
                            println!("  every request must carry x-timestamp");
                        }
                        if merchant.require_signature_v2 {
                            println!("  every request must be signed with version 2");
                        }
                        println!("The secrets are shown only now; store them safely.");
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Err(CreateMerchantError::NameTaken) => {
                    eprintln!("error: a merchant named {name:?} already exists");
                    Ok(ExitCode::from(EXIT_REFUSED))
                }
                Err(error) => Err(anyhow!(error)),
            }
        }
        MerchantCommand::List { json } => {
            let merchants = operator.merchants().await?;
            let now = operator.now();
            if json {
                let rows: Vec<_> = merchants
                    .iter()
                    .map(|m| {
                        json!({
                            "merchantId": m.id.as_str(), "name": m.name, "enabled": m.enabled,
                            "methods": access_list(m),
                            "requireTimestamp": m.require_timestamp,
                            "requireSignatureV2": m.require_signature_v2,
                            "secrets": {
                                "deposit": live_secrets(m.keys(Direction::Deposit), now),
                                "withdrawal": live_secrets(m.keys(Direction::Withdrawal), now),
                            },
                        })
                    })
                    .collect();
                print_json(&json!(rows));
            } else {
                println!(
                    "{:<38} {:<20} {:<8} {:<9} {:<9} {:<30} {:<30} METHODS",
                    "ID",
                    "NAME",
                    "ENABLED",
                    "TIMESTAMP",
                    "SIGNATURE",
                    "DEPOSIT SECRETS",
                    "WITHDRAWAL SECRETS"
                );
                for m in &merchants {
                    println!(
                        "{:<38} {:<20} {:<8} {:<9} {:<9} {:<30} {:<30} {}",
                        m.id,
                        m.name,
                        m.enabled,
                        if m.require_timestamp {
                            "required"
                        } else {
                            "optional"
                        },
                        if m.require_signature_v2 {
                            "v2"
                        } else {
                            "v1 or v2"
                        },
                        live_secrets_text(m.keys(Direction::Deposit), now),
                        live_secrets_text(m.keys(Direction::Withdrawal), now),
                        access_list(m).join(",")
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        MerchantCommand::Update {
            id,
            require_timestamp,
            no_require_timestamp,
            require_signature_v2,
            no_require_signature_v2,
        } => {
            let id = MerchantId::parse(&id).map_err(|e| Usage::new(format!("merchant id: {e}")))?;
            let flag = |on: bool, off: bool| (on || off).then_some(on);
            let change = SigningRulesChange {
                require_timestamp: flag(require_timestamp, no_require_timestamp),
                require_signature_v2: flag(require_signature_v2, no_require_signature_v2),
            };
            let before = operator.merchant(&id).await?;
            if operator.change_signing_rules(&id, change).await? {
                let after = operator.merchant(&id).await?;
                audit
                    .record(
                        "merchant.update",
                        &id,
                        before.as_ref().map(signing_rules_json),
                        after.as_ref().map(signing_rules_json),
                    )
                    .await?;
                if let Some(m) = after {
                    let required = |on: bool| if on { "required" } else { "optional" };
                    println!(
                        "merchant {id}: x-timestamp {}, signature version 2 {}",
                        required(m.require_timestamp),
                        required(m.require_signature_v2)
                    );
                }
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("error: no merchant {id}");
                Ok(ExitCode::from(EXIT_NOT_FOUND))
            }
        }
        MerchantCommand::RotateSecret {
            id,
            direction,
            overlap,
            json,
        } => {
            let id = MerchantId::parse(&id).map_err(|e| Usage::new(format!("merchant id: {e}")))?;
            let direction = Direction::parse(&direction)
                .map_err(|e| Usage::new(format!("--direction: {e}")))?;
            let overlap =
                parse_overlap(&overlap).map_err(|e| Usage::new(format!("--overlap: {e}")))?;
            let secret = Secret::new(new_secret());
            let Some(rotated) = operator
                .rotate_secret(&id, direction, secret, overlap)
                .await?
            else {
                eprintln!("error: no merchant {id}");
                return Ok(ExitCode::from(EXIT_NOT_FOUND));
            };
            let secret = rotated.keys.newest().secret.expose();
            let ends = rotated.old_secret_expires_at.to_rfc3339();
            let after = json!({
                "direction": direction.as_str(),
                "version": rotated.keys.newest().version,
                "oldSecretExpiresAt": ends,
            });
            audit
                .record("merchant.rotate_secret", &id, None, Some(after))
                .await?;
            if json {
                print_json(&json!({
                    "merchantId": rotated.merchant_id.as_str(),
                    "direction": direction.as_str(),
                    "secret": secret,
                    "oldSecretExpiresAt": ends,
                }));
            } else {
                println!("new {direction} secret of merchant {id}: {secret}");
                println!("The older {direction} secret works until {ends}.");
                println!("The secret is shown only now; store it safely.");
            }
            Ok(ExitCode::SUCCESS)
        }
        MerchantCommand::Enable { id } => {
            let id = MerchantId::parse(&id).map_err(|e| Usage::new(format!("merchant id: {e}")))?;
            let before = operator.merchant(&id).await?;
            let Some(released) = operator.enable_merchant(&id).await? else {
                eprintln!("error: no merchant {id}");
                return Ok(ExitCode::from(EXIT_NOT_FOUND));
            };
            audit
                .record(
                    "merchant.enable",
                    &id,
                    before.map(|m| json!({"enabled": m.enabled})),
                    Some(json!({"enabled": true, "heldCallbacksReleased": released})),
                )
                .await?;
            println!("merchant {id} enabled; {released} held callback(s) released");
            Ok(ExitCode::SUCCESS)
        }
        MerchantCommand::Disable { id } => {
            let id = MerchantId::parse(&id).map_err(|e| anyhow!("merchant id: {e}"))?;
            let before = operator.merchant(&id).await?;
            if operator.disable_merchant(&id).await? {
                audit
                    .record(
                        "merchant.disable",
                        &id,
                        before.map(|m| json!({"enabled": m.enabled})),
                        Some(json!({"enabled": false})),
                    )
                    .await?;
                println!("merchant {id} disabled");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("error: no merchant {id}");
                Ok(ExitCode::from(EXIT_NOT_FOUND))
            }
        }
    }
}

/// A merchant as the audit log records it (never its secrets).
fn merchant_json(m: &domain::merchant::Merchant) -> serde_json::Value {
    json!({
        "name": m.name, "enabled": m.enabled, "methods": access_list(m),
        "requireTimestamp": m.require_timestamp,
        "requireSignatureV2": m.require_signature_v2,
    })
}

/// A merchant's signing rules as the audit log records a change of them.
fn signing_rules_json(m: &domain::merchant::Merchant) -> serde_json::Value {
    json!({
        "requireTimestamp": m.require_timestamp,
        "requireSignatureV2": m.require_signature_v2,
    })
}

/// A direction's live secrets for `merchant list --json`: how many, and when the older ones
/// stop working (left out when only the newest is live).
fn live_secrets(keys: &KeyRing, now: Timestamp) -> serde_json::Value {
    let mut out = json!({ "live": keys.live(now).count() });
    if let Some(end) = keys.old_secret_expires_at(now) {
        out["oldSecretExpiresAt"] = json!(end.to_rfc3339());
    }
    out
}

/// The same for the table: `1 live` or `2 live, old until 2026-11-24T10:00:00Z`.
fn live_secrets_text(keys: &KeyRing, now: Timestamp) -> String {
    let live = keys.live(now).count();
    match keys.old_secret_expires_at(now) {
        Some(end) => format!("{live} live, old until {}", end.to_rfc3339()),
        None => format!("{live} live"),
    }
}

fn access_list(m: &domain::merchant::Merchant) -> Vec<String> {
    m.access.iter().map(|(d, p)| format!("{d}:{p}")).collect()
}

pub async fn balance(
    operator: &Operator,
    audit: &Audit,
    command: BalanceCommand,
) -> anyhow::Result<ExitCode> {
    let (args, kind): (BalanceArgs, ManualMove) = match command {
        BalanceCommand::Credit(args) => (args, ManualMove::Credit),
        BalanceCommand::Debit(args) => (args, ManualMove::Debit),
    };
    let id = MerchantId::parse(&args.merchant).map_err(|e| anyhow!("--merchant: {e}"))?;
    let currency =
        Currency::parse_active(&args.currency).map_err(|e| anyhow!("--currency: {e}"))?;
    let amount = Amount::parse(&args.amount, currency).map_err(|e| anyhow!("--amount: {e}"))?;
    let note = ManualNote::new(audit.actor().clone(), args.reason.as_deref())
        .map_err(|e| Usage::new(format!("--reason: {e}")))?;
    let operation = args
        .operation
        .as_deref()
        .map(OperationId::parse)
        .transpose()
        .map_err(|e| Usage::new(format!("--operation: {e}")))?;
    let adjustment = ManualAdjustment {
        merchant: id.clone(),
        currency,
        amount,
        kind,
        operation,
    };
    let adjusted = operator.adjust_balance(&adjustment, &note).await;
    let written = match adjusted {
        Ok(written) => written,
        Err(refused @ BalanceError::UnknownMerchant { .. })
        | Err(refused @ BalanceError::UnknownOperation { .. }) => {
            eprintln!("error: {refused}");
            return Ok(ExitCode::from(EXIT_NOT_FOUND));
        }
        Err(refused @ BalanceError::NotTheOperations { .. }) => {
            return Err(Usage::new(format!(
                "--operation: {refused}; name an operation of --merchant in --currency"
            )))
        }
        Err(refused @ BalanceError::InsufficientBalance { .. }) => {
            eprintln!("error: {refused}");
            return Ok(ExitCode::from(EXIT_REFUSED));
        }
        Err(error) => return Err(anyhow!(error)),
    };
    let (available, held) = (written.balance.available, written.balance.held);
    let credit = kind == ManualMove::Credit;
    let delta = if credit {
        amount.minor()
    } else {
        -amount.minor()
    };
    let figures = |available: i64| {
        json!({"currency": currency.as_str(), "available": format_minor(available, currency),
               "held": format_minor(held, currency)})
    };
    let mut after = figures(available);
    after["amount"] = json!(amount.format(currency));
    after["reason"] = json!(note.reason);
    after["ledgerEntry"] = json!(written.entry_id);
    if let Some(operation) = operation {
        after["operationId"] = json!(operation.to_string());
        after["resolvedDiscrepancies"] = json!(written.resolved);
    }
    let action = if credit {
        "balance.credit"
    } else {
        "balance.debit"
    };
    audit
        .record(action, &id, Some(figures(available - delta)), Some(after))
        .await?;
    if args.json {
        let mut out = json!({
            "merchantId": id.as_str(), "currency": currency.as_str(),
            "available": format_minor(available, currency),
            "held": format_minor(held, currency),
            "ledgerEntry": written.entry_id,
        });
        if let Some(operation) = operation {
            out["operationId"] = json!(operation.to_string());
            out["resolvedDiscrepancies"] = json!(written.resolved);
        }
        print_json(&out);
    } else {
        let verb = if credit { "credited" } else { "debited" };
        println!(
            "{verb} {} {currency}; available {} held {}; ledger entry {}",
            amount.format(currency),
            format_minor(available, currency),
            format_minor(held, currency),
            written.entry_id
        );
        if let Some(operation) = operation {
            let resolved: Vec<String> = written.resolved.iter().map(i64::to_string).collect();
            match resolved.is_empty() {
                true => println!("linked to operation {operation}; no open discrepancy"),
                false => println!(
                    "linked to operation {operation}; resolved discrepancies {}",
                    resolved.join(", ")
                ),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn route(
    operator: &Operator,
    audit: &Audit,
    command: RouteCommand,
) -> anyhow::Result<ExitCode> {
    match command {
        RouteCommand::List { json } => {
            let routes = operator.routes().await?;
            if json {
                print_json(&json!(routes.iter().map(route_json).collect::<Vec<_>>()));
            } else {
                println!("ID   DIRECTION  METHOD      CUR  MIN          MAX            PRIO  PROVIDER  FLOW          LIFETIME ENABLED");
                for r in &routes {
                    println!(
                        "{:<4} {:<10} {:<11} {:<4} {:<12} {:<14} {:<5} {:<9} {:<13} {:<8} {}",
                        r.id,
                        r.direction,
                        r.method,
                        r.currency,
                        format_minor(r.min_amount, r.currency),
                        format_minor(r.max_amount, r.currency),
                        r.priority,
                        r.provider,
                        r.flow.as_str(),
                        r.lifetime(),
                        r.enabled
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        RouteCommand::Add(args) => {
            let route = match operator.add_route(new_route(&args)?).await {
                Ok(route) => route,
                Err(AddRouteError::Invalid(rule)) => return Err(Usage::new(format!("{rule}"))),
                Err(unknown @ AddRouteError::UnknownProvider(_)) => {
                    eprintln!("error: --provider: {unknown}");
                    return Ok(ExitCode::from(EXIT_NOT_FOUND));
                }
                Err(AddRouteError::Store(error)) => return Err(error.into()),
            };
            audit
                .record("route.add", route.id, None, Some(route_json(&route)))
                .await?;
            if args.json {
                print_json(&route_json(&route));
            } else {
                println!("route {} added", route.id);
                print_competitors(operator, &route).await?;
            }
            Ok(ExitCode::SUCCESS)
        }
        RouteCommand::Disable { id } => {
            let before = operator.route(id).await?;
            let done = operator.disable_route(id).await?;
            audit_route(operator, audit, "route.disable", id, before).await?;
            route_changed(done, id, "disabled")
        }
        RouteCommand::Enable { id } => {
            let before = operator.route(id).await?;
            let done = operator.enable_route(id).await?;
            audit_route(operator, audit, "route.enable", id, before).await?;
            route_changed(done, id, "enabled")
        }
        RouteCommand::SetPriority { id, priority } => {
            let before = operator.route(id).await?;
            let done = operator.set_route_priority(id, priority).await?;
            audit_route(operator, audit, "route.set_priority", id, before).await?;
            route_changed(done, id, &format!("set to priority {priority}"))
        }
    }
}

/// Audits a change of route `id` (nothing when there was no such route).
async fn audit_route(
    operator: &Operator,
    audit: &Audit,
    action: &str,
    id: i64,
    before: Option<Route>,
) -> anyhow::Result<()> {
    let Some(before) = before else {
        return Ok(());
    };
    let after = operator.route(id).await?;
    audit
        .record(
            action,
            id,
            Some(route_json(&before)),
            after.as_ref().map(route_json),
        )
        .await
}

/// Exit 0 when the route was changed, 3 when there is no such route.
fn route_changed(done: bool, id: i64, what: &str) -> anyhow::Result<ExitCode> {
    if done {
        println!("route {id} {what}");
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("error: no route {id}");
        Ok(ExitCode::from(EXIT_NOT_FOUND))
    }
}

/// The enabled routes a new route competes with (same direction, method and currency),
/// the one chosen first at the top: a new route with the default priority loses a tie to an
/// older one.
async fn print_competitors(operator: &Operator, new: &Route) -> anyhow::Result<()> {
    let mut competing: Vec<Route> = operator
        .routes()
        .await?
        .into_iter()
        .filter(|r| {
            r.enabled
                && r.direction == new.direction
                && r.method == new.method
                && r.currency == new.currency
        })
        .collect();
    competing.sort_by_key(|r| (std::cmp::Reverse(r.priority), r.id));
    println!(
        "enabled routes for {} {} {}, first chosen first:",
        new.direction, new.method, new.currency
    );
    for r in &competing {
        println!(
            "  route {:<5} priority {:<6} provider {:<12} {} to {}",
            r.id,
            r.priority,
            r.provider,
            format_minor(r.min_amount, r.currency),
            format_minor(r.max_amount, r.currency)
        );
    }
    Ok(())
}

/// The route the flags describe; a bad value is a usage error (exit 2) naming its flag.
fn new_route(args: &RouteAddArgs) -> anyhow::Result<NewRoute> {
    let bad = |flag: &str, e: &dyn std::fmt::Display| Usage::new(format!("{flag}: {e}"));
    let direction = Direction::parse(&args.direction).map_err(|e| bad("--direction", &e))?;
    let method =
        PaymentMethod::parse_for(direction, &args.method).map_err(|e| bad("--method", &e))?;
    let flow = match &args.flow {
        Some(text) => Flow::parse(text).map_err(|e| bad("--flow", &e))?,
        None => Flow::default_for(direction, method),
    };
    // The domain's route rules, checked here too so each refusal names its flag (in the order
    // the flags are read); `Operator::add_route` checks them all again.
    let currency = Currency::parse(&args.currency).map_err(|e| bad("--currency", &e))?;
    route_currency(method, currency).map_err(|e| bad("--currency", &e))?;
    let (default_min, default_max) = default_route_bounds(currency);
    let bound = |flag: &str, text: &Option<String>, default: i64| match text {
        Some(text) => Amount::parse(text, currency)
            .map(Amount::minor)
            .map_err(|e| bad(flag, &e)),
        None => Ok(default),
    };
    let min = bound("--min", &args.min, default_min)?;
    let max = bound("--max", &args.max, default_max)?;
    route_amounts(min, max).map_err(|_| Usage::new("--min must not be greater than --max"))?;
    if args.provider != SANDBOX {
        ProviderName::parse(&args.provider).map_err(|e| bad("--provider", &e))?;
        let expected = acquirer_flow(direction, method);
        if flow != expected {
            return Err(Usage::new(format!(
                "--flow: an acquirer route's flow must be {}",
                expected.as_str()
            )));
        }
    }
    route_lifetime(args.lifetime)
        .map_err(|_| Usage::new("--lifetime: must be a positive number of seconds"))?;
    Ok(NewRoute {
        direction,
        method,
        currency,
        min_amount: min,
        max_amount: max,
        priority: args.priority,
        provider: args.provider.clone(),
        flow,
        lifetime_secs: args.lifetime,
    })
}

fn route_json(r: &Route) -> serde_json::Value {
    json!({
        "id": r.id, "direction": r.direction.as_str(), "method": r.method.as_str(),
        "currency": r.currency.as_str(), "min": format_minor(r.min_amount, r.currency),
        "max": format_minor(r.max_amount, r.currency),
        "priority": r.priority, "provider": r.provider, "flow": r.flow.as_str(),
        "lifetime": r.lifetime(), "enabled": r.enabled,
    })
}
