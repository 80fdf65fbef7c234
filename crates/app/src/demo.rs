//! `gateway serve --demo`: a ready merchant and a request to paste.

use domain::console::{hash_password, Actor, ConsoleAccount, Role};
use domain::ledger::ManualNote;
use domain::merchant::{full_access, Secret};
use domain::operator::{CreateMerchantError, ManualAdjustment, ManualMove, NewMerchant};
use domain::ports::{Clock, ConsoleStore};
use domain::provider::SANDBOX;
use domain::route::{default_route_bounds, Flow, NewRoute, Route};
use domain::{Amount, Currency, Direction, MerchantId, PaymentMethod};

use crate::application::Application;

/// The demo merchant's id (and name).
pub const DEMO_MERCHANT: &str = "demo";
/// Fixed demo secrets: public knowledge, for trying the API only.
pub const DEMO_DEPOSIT_SECRET: &str =
    "6465706f7369742d64656d6f2d7365637265742d6e6f742d666f722d70726f64";
pub const DEMO_WITHDRAWAL_SECRET: &str =
    "7769746864726177616c2d64656d6f2d7365637265742d6e6f742d666f722d70";
/// The demo merchant's starting balance in each demo currency, in major units, credited once
/// when it is created.
const DEMO_BALANCE: i64 = 1_000_000;
/// The currencies of the demo: RUB has every sandbox route already; the others get card
/// deposit and payout routes to the sandbox.
const DEMO_CURRENCIES: [&str; 5] = ["RUB", "USD", "EUR", "KZT", "JPY"];

/// Creates the demo merchant and its balance, once.
pub async fn ensure_demo(app: &Application) -> anyhow::Result<()> {
    let new = NewMerchant {
        id: Some(MerchantId::parse(DEMO_MERCHANT).map_err(|e| anyhow::anyhow!(e))?),
        name: DEMO_MERCHANT.to_string(),
        access: full_access(),
        deposit_secret: Secret::new(DEMO_DEPOSIT_SECRET),
        withdrawal_secret: Secret::new(DEMO_WITHDRAWAL_SECRET),
        require_timestamp: false,
        require_signature_v2: false,
    };
    let operator = app.operator();
    match operator.create_merchant(new).await {
        Ok(merchant) => {
            let routes = operator.routes().await?;
            for code in DEMO_CURRENCIES {
                let currency = Currency::parse_active(code).map_err(|e| anyhow::anyhow!(e))?;
                for direction in [Direction::Deposit, Direction::Withdrawal] {
                    let card = |r: &&Route| {
                        r.enabled
                            && r.direction == direction
                            && r.method == PaymentMethod::Card
                            && r.currency == currency
                    };
                    if !routes.iter().any(|r| card(&r)) {
                        operator.add_route(demo_route(direction, currency)).await?;
                    }
                }
                let amount = Amount::from_minor(DEMO_BALANCE * currency.minor_per_major())
                    .map_err(|e| anyhow::anyhow!(e))?;
                let note = ManualNote::new(Actor::cli("demo"), Some("demo starting balance"))?;
                operator
                    .adjust_balance(
                        &ManualAdjustment {
                            merchant: merchant.id.clone(),
                            currency,
                            amount,
                            kind: ManualMove::Credit,
                            operation: None,
                        },
                        &note,
                    )
                    .await?;
            }
            tracing::info!(
                "demo merchant created with {DEMO_BALANCE} in each of {}",
                DEMO_CURRENCIES.join(", ")
            );
        }
        Err(CreateMerchantError::NameTaken) => tracing::info!("demo merchant already exists"),
        Err(error) => return Err(anyhow::anyhow!(error)),
    }
    Ok(())
}

/// A card route of the demo to the sandbox, with the default bounds of `currency`.
fn demo_route(direction: Direction, currency: Currency) -> NewRoute {
    let (min_amount, max_amount) = default_route_bounds(currency);
    NewRoute {
        direction,
        method: PaymentMethod::Card,
        currency,
        min_amount,
        max_amount,
        priority: 100,
        provider: SANDBOX.to_owned(),
        flow: Flow::default_for(direction, PaymentMethod::Card),
        lifetime_secs: None,
    }
}

/// The demo console operator's name.
pub const DEMO_OPERATOR: &str = "demo";

/// Creates the console operator `demo` (admin) once and gives it a fresh generated password
/// on every demo start, returned to be printed (only a hash is stored). A `demo` account an
/// operator disabled stays disabled: `None` then.
pub async fn ensure_demo_operator(
    store: &dyn ConsoleStore,
    audit: &crate::commands::audit::Audit,
) -> anyhow::Result<Option<String>> {
    let existing = store.account(DEMO_OPERATOR).await?;
    if existing.as_ref().is_some_and(|account| !account.enabled) {
        tracing::warn!("the demo console operator is disabled; it stays so");
        return Ok(None);
    }
    let password = crate::system::new_password();
    let hashed = password.clone();
    let hash = tokio::task::spawn_blocking(move || hash_password(&hashed)).await?;
    let account = ConsoleAccount {
        name: DEMO_OPERATOR.to_string(),
        role: Role::Admin,
        password_hash: hash.clone(),
        enabled: true,
        created_at: crate::system::SystemClock.now(),
    };
    if existing.is_none() && store.insert_account(&account).await? {
        let after = serde_json::json!({"name": DEMO_OPERATOR, "role": "admin", "enabled": true});
        audit
            .record("operator.create", DEMO_OPERATOR, None, Some(after))
            .await?;
    } else {
        store.set_password(DEMO_OPERATOR, &hash).await?;
        audit
            .record("operator.password", DEMO_OPERATOR, None, None)
            .await?;
    }
    Ok(Some(password))
}

/// A shell snippet that signs (version 2: the timestamp, method, path and body) and sends a
/// card deposit for the demo merchant with `openssl` and `curl`. Version 2 binds the
/// signature to its path and time, so a captured signature cannot act elsewhere or later;
/// the snippet signs at the moment it runs, as the timestamp must be within 300 s.
pub fn demo_curl(public_url: &str) -> String {
    let body = r#"{"amount":"100.00","currency":"RUB","paymentMethod":"card","userId":"user-1"}"#;
    format!(
        "body='{body}'\nts=$(date +%s)\nsig=$(printf '%s\\nPOST\\n/api/v1/deposits\\n%s' \"$ts\" \"$body\" \\\n  | openssl dgst -sha256 -hmac '{DEMO_DEPOSIT_SECRET}' | sed 's/^.* //')\ncurl -s {public_url}/api/v1/deposits \\\n  -H 'merchant-id: {DEMO_MERCHANT}' \\\n  -H 'x-signature-version: 2' \\\n  -H \"x-timestamp: $ts\" \\\n  -H \"x-signature: $sig\" \\\n  -H 'Content-Type: application/json' \\\n  -d \"$body\""
    )
}

/// Prints the demo merchant's credentials, a request to paste and, with the console on, where
/// it is and the demo operator's password.
pub fn print_banner(app: &Application, console_password: Option<&str>) {
    let url = &app.config().public_url;
    if let (Some(console), Some(password)) = (app.console_url(), console_password) {
        println!(
            "\nOperator console: {console}/admin\n  name:     {DEMO_OPERATOR}\n  password: {password} (new at every demo start)"
        );
    }
    println!(
        "\nGateway demo on {url} (port {port})\n\n  merchant id:       {DEMO_MERCHANT}\n  deposit secret:    {DEMO_DEPOSIT_SECRET}\n  withdrawal secret: {DEMO_WITHDRAWAL_SECRET}\n  balances:          {DEMO_BALANCE} each of {currencies} (credited once)\n\nCreate a card deposit (paste into a shell; needs openssl and curl):\n\n{curl}\n\nThen open the redirectUrl it returns to pay with card 4242424242424242.\n",
        port = app.port(),
        currencies = DEMO_CURRENCIES.join(", "),
        curl = demo_curl(url)
    );
}
