//! `gateway tariff set|list|remove`: the merchants' tariffs, audited.

use std::process::ExitCode;

use adapters_console::{tariff_json, tariff_target};
use domain::fee::{parse_fee_amount, FeeDirection, FeeTerms, Percent, Tariff};
use domain::ports::TariffKey;
use domain::tariffs::{TariffError, Tariffs};
use domain::{Currency, MerchantId, PaymentMethod};
use serde_json::json;

use super::audit::Audit;
use super::{print_json, Usage, EXIT_NOT_FOUND};
use crate::cli::{TariffCommand, TariffKeyArgs, TariffSetArgs};

pub async fn tariff(
    tariffs: &Tariffs,
    audit: &Audit,
    command: TariffCommand,
) -> anyhow::Result<ExitCode> {
    match command {
        TariffCommand::Set(args) => set(tariffs, audit, &args).await,
        TariffCommand::List { merchant, json } => {
            let merchant = merchant
                .as_deref()
                .map(MerchantId::parse)
                .transpose()
                .map_err(|e| Usage::new(format!("--merchant: {e}")))?;
            let all = tariffs.list(merchant.as_ref()).await?;
            if json {
                print_json(&json!(all.iter().map(tariff_json).collect::<Vec<_>>()));
            } else {
                println!("MERCHANT                              DIRECTION  METHOD      CUR  TERMS");
                for t in &all {
                    println!(
                        "{:<37} {:<10} {:<11} {:<4} {}",
                        t.merchant_id,
                        t.direction.as_str(),
                        t.method.as_str(),
                        t.currency.as_str(),
                        t.terms.describe(t.currency)
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        TariffCommand::Remove(args) => {
            let key = key_of(&args)?;
            let Some(removed) = tariffs.remove(&key).await? else {
                eprintln!("error: no such tariff");
                return Ok(ExitCode::from(EXIT_NOT_FOUND));
            };
            let before = Tariff {
                merchant_id: key.merchant_id.clone(),
                direction: key.direction,
                method: key.method,
                currency: key.currency,
                terms: removed,
            };
            audit
                .record(
                    "tariff.remove",
                    tariff_target(&key),
                    Some(tariff_json(&before)),
                    None,
                )
                .await?;
            println!("tariff removed");
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn set(tariffs: &Tariffs, audit: &Audit, args: &TariffSetArgs) -> anyhow::Result<ExitCode> {
    let key = key_of(&args.key)?;
    let currency = key.currency;
    let amount = |flag: &str, text: &Option<String>| {
        text.as_deref()
            .map(|t| parse_fee_amount(t, currency))
            .transpose()
            .map_err(|e| Usage::new(format!("--{flag}: {e}")))
    };
    let percent = match &args.percent {
        Some(text) => Percent::parse(text).map_err(|e| Usage::new(format!("--percent: {e}")))?,
        None => Percent::ZERO,
    };
    let terms = FeeTerms::new(
        percent,
        amount("fixed", &args.fixed)?.unwrap_or(0),
        amount("min", &args.min)?,
        amount("max", &args.max)?,
    )
    .map_err(|e| Usage::new(format!("--min/--max: {e}")))?;
    let tariff = Tariff {
        merchant_id: key.merchant_id.clone(),
        direction: key.direction,
        method: key.method,
        currency,
        terms,
    };
    let replaced = match tariffs.set(&tariff).await {
        Ok(replaced) => replaced,
        Err(TariffError::UnknownMerchant) => {
            eprintln!("error: --merchant: no such merchant");
            return Ok(ExitCode::from(EXIT_NOT_FOUND));
        }
        Err(refused @ TariffError::Method(..)) => {
            return Err(Usage::new(format!("--method: {refused}")))
        }
        Err(TariffError::Currency(rule)) => return Err(Usage::new(format!("--currency: {rule}"))),
        Err(TariffError::Store(error)) => return Err(error.into()),
    };
    let before = replaced.map(|terms| {
        tariff_json(&Tariff {
            terms,
            ..tariff.clone()
        })
    });
    audit
        .record(
            "tariff.set",
            tariff_target(&key),
            before,
            Some(tariff_json(&tariff)),
        )
        .await?;
    if args.json {
        print_json(&tariff_json(&tariff));
    } else {
        println!("tariff set: {}", tariff.terms.describe(currency));
    }
    Ok(ExitCode::SUCCESS)
}

/// The key the flags name; a bad value exits 2 naming its flag.
fn key_of(args: &TariffKeyArgs) -> anyhow::Result<TariffKey> {
    fn usage(flag: &'static str) -> impl Fn(domain::ValueError) -> anyhow::Error {
        move |e| Usage::new(format!("--{flag}: {e}"))
    }
    Ok(TariffKey {
        merchant_id: MerchantId::parse(&args.merchant).map_err(usage("merchant"))?,
        direction: FeeDirection::parse(&args.direction).map_err(usage("direction"))?,
        method: PaymentMethod::parse(&args.method).map_err(usage("method"))?,
        currency: Currency::parse_active(&args.currency).map_err(usage("currency"))?,
    })
}
