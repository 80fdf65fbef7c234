//! `gateway merchant|balance|route ...`, through the operator use cases (`domain::operator`).

use std::process::ExitCode;

use anyhow::anyhow;
use domain::merchant::{full_access, parse_access, Secret};
use domain::operator::{
    route_amounts, route_lifetime, BalanceError, CreateMerchantError, ManualMove, NewMerchant,
    NewRoute, Operator,
};
use domain::route::{Flow, Route};
use domain::{format_minor, Amount, Currency, Direction, MerchantId, PaymentMethod};
use serde_json::json;

use super::{print_json, EXIT_NOT_FOUND, EXIT_REFUSED};
use crate::cli::{BalanceArgs, BalanceCommand, MerchantCommand, RouteAddArgs, RouteCommand};
use crate::system::new_secret;

pub async fn merchant(operator: &Operator, command: MerchantCommand) -> anyhow::Result<ExitCode> {
    match command {
        MerchantCommand::Create {
            name,
            methods,
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
            };
            match operator.create_merchant(new).await {
                Ok(merchant) => {
                    let out = json!({
                        "merchantId": merchant.id.as_str(),
                        "depositSecret": merchant.deposit_secret.expose(),
                        "withdrawalSecret": merchant.withdrawal_secret.expose(),
                    });
                    if json {
                        print_json(&out);
                    } else {
                        println!("merchant created: {name}");
                        println!("  merchant id:       {}", merchant.id);
                        println!("  deposit secret:    {}", merchant.deposit_secret.expose());
                        println!(
                            "  withdrawal secret: {}",
                            merchant.withdrawal_secret.expose()
                        );
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
            if json {
                let rows: Vec<_> = merchants
                    .iter()
                    .map(|m| {
                        json!({
                            "merchantId": m.id.as_str(), "name": m.name, "enabled": m.enabled,
                            "methods": access_list(m),
                        })
                    })
                    .collect();
                print_json(&json!(rows));
            } else {
                println!("{:<38} {:<20} {:<8} METHODS", "ID", "NAME", "ENABLED");
                for m in &merchants {
                    println!(
                        "{:<38} {:<20} {:<8} {}",
                        m.id,
                        m.name,
                        m.enabled,
                        access_list(m).join(",")
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        MerchantCommand::Disable { id } => {
            let id = MerchantId::parse(&id).map_err(|e| anyhow!("merchant id: {e}"))?;
            if operator.disable_merchant(&id).await? {
                println!("merchant {id} disabled");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("error: no merchant {id}");
                Ok(ExitCode::from(EXIT_NOT_FOUND))
            }
        }
    }
}

fn access_list(m: &domain::merchant::Merchant) -> Vec<String> {
    m.access.iter().map(|(d, p)| format!("{d}:{p}")).collect()
}

pub async fn balance(operator: &Operator, command: BalanceCommand) -> anyhow::Result<ExitCode> {
    let (args, kind): (BalanceArgs, ManualMove) = match command {
        BalanceCommand::Credit(args) => (args, ManualMove::Credit),
        BalanceCommand::Debit(args) => (args, ManualMove::Debit),
    };
    let id = MerchantId::parse(&args.merchant).map_err(|e| anyhow!("--merchant: {e}"))?;
    let currency = Currency::parse(&args.currency).map_err(|e| anyhow!("--currency: {e}"))?;
    let amount = Amount::parse(&args.amount).map_err(|e| anyhow!("--amount: {e}"))?;
    let (available, held) = match operator.adjust_balance(&id, currency, amount, kind).await {
        Ok(balance) => (balance.available, balance.held),
        Err(refused @ BalanceError::UnknownMerchant { .. }) => {
            eprintln!("error: {refused}");
            return Ok(ExitCode::from(EXIT_NOT_FOUND));
        }
        Err(refused @ BalanceError::InsufficientBalance { .. }) => {
            eprintln!("error: {refused}");
            return Ok(ExitCode::from(EXIT_REFUSED));
        }
        Err(error) => return Err(anyhow!(error)),
    };
    let credit = kind == ManualMove::Credit;
    if args.json {
        print_json(&json!({
            "merchantId": id.as_str(), "currency": currency.as_str(),
            "available": format_minor(available), "held": format_minor(held),
        }));
    } else {
        let verb = if credit { "credited" } else { "debited" };
        println!(
            "{verb} {amount} {currency}; available {} held {}",
            format_minor(available),
            format_minor(held)
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn route(operator: &Operator, command: RouteCommand) -> anyhow::Result<ExitCode> {
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
                        format_minor(r.min_amount),
                        format_minor(r.max_amount),
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
            let route = operator.add_route(new_route(&args)?).await?;
            if args.json {
                print_json(&route_json(&route));
            } else {
                println!("route {} added", route.id);
            }
            Ok(ExitCode::SUCCESS)
        }
        RouteCommand::Disable { id } => {
            if operator.disable_route(id).await? {
                println!("route {id} disabled");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("error: no route {id}");
                Ok(ExitCode::from(EXIT_NOT_FOUND))
            }
        }
    }
}

fn new_route(args: &RouteAddArgs) -> anyhow::Result<NewRoute> {
    let direction = Direction::parse(&args.direction).map_err(|e| anyhow!("--direction: {e}"))?;
    let method =
        PaymentMethod::parse_for(direction, &args.method).map_err(|e| anyhow!("--method: {e}"))?;
    let flow = match &args.flow {
        Some(text) => Flow::parse(text).map_err(|e| anyhow!("--flow: {e}"))?,
        None => Flow::default_for(direction, method),
    };
    let min = Amount::parse(&args.min).map_err(|e| anyhow!("--min: {e}"))?;
    let max = Amount::parse(&args.max).map_err(|e| anyhow!("--max: {e}"))?;
    // The domain's route rules, checked here too so each refusal names its flag (in the order
    // the flags are read); `Operator::add_route` checks them all again.
    route_amounts(min.minor(), max.minor())
        .map_err(|_| anyhow!("--min must not be greater than --max"))?;
    if args.provider != "sandbox" {
        return Err(anyhow!("--provider: this build has one provider, sandbox"));
    }
    route_lifetime(args.lifetime)
        .map_err(|_| anyhow!("--lifetime: must be a positive number of seconds"))?;
    Ok(NewRoute {
        direction,
        method,
        currency: Currency::parse(&args.currency).map_err(|e| anyhow!("--currency: {e}"))?,
        min_amount: min.minor(),
        max_amount: max.minor(),
        priority: args.priority,
        provider: args.provider.clone(),
        flow,
        lifetime_secs: args.lifetime,
    })
}

fn route_json(r: &Route) -> serde_json::Value {
    json!({
        "id": r.id, "direction": r.direction.as_str(), "method": r.method.as_str(),
        "currency": r.currency.as_str(), "min": format_minor(r.min_amount), "max": format_minor(r.max_amount),
        "priority": r.priority, "provider": r.provider, "flow": r.flow.as_str(),
        "lifetime": r.lifetime(), "enabled": r.enabled,
    })
}
