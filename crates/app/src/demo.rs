//! `gateway serve --demo`: a ready merchant and a request to paste.

use domain::merchant::{full_access, Secret};
use domain::operator::{CreateMerchantError, ManualMove, NewMerchant};
use domain::signature::sign;
use domain::{Amount, Currency, MerchantId};

use crate::application::Application;

/// The demo merchant's id (and name).
pub const DEMO_MERCHANT: &str = "demo";
/// Fixed demo secrets: public knowledge, for trying the API only.
pub const DEMO_DEPOSIT_SECRET: &str =
    "6465706f7369742d64656d6f2d7365637265742d6e6f742d666f722d70726f64";
pub const DEMO_WITHDRAWAL_SECRET: &str =
    "7769746864726177616c2d64656d6f2d7365637265742d6e6f742d666f722d70";
/// The demo merchant's starting balance, credited once when it is created.
const DEMO_BALANCE: &str = "1000000.00";

/// Creates the demo merchant and its balance, once.
pub async fn ensure_demo(app: &Application) -> anyhow::Result<()> {
    let new = NewMerchant {
        id: Some(MerchantId::parse(DEMO_MERCHANT).map_err(|e| anyhow::anyhow!(e))?),
        name: DEMO_MERCHANT.to_string(),
        access: full_access(),
        deposit_secret: Secret::new(DEMO_DEPOSIT_SECRET),
        withdrawal_secret: Secret::new(DEMO_WITHDRAWAL_SECRET),
        require_timestamp: false,
    };
    let operator = app.operator();
    match operator.create_merchant(new).await {
        Ok(merchant) => {
            let amount = Amount::parse(DEMO_BALANCE).map_err(|e| anyhow::anyhow!(e))?;
            operator
                .adjust_balance(&merchant.id, Currency::RUB, amount, ManualMove::Credit)
                .await?;
            tracing::info!("demo merchant created with {DEMO_BALANCE} RUB");
        }
        Err(CreateMerchantError::NameTaken) => tracing::info!("demo merchant already exists"),
        Err(error) => return Err(anyhow::anyhow!(error)),
    }
    Ok(())
}

/// The signed curl command that creates a card deposit for the demo merchant.
pub fn demo_curl(public_url: &str) -> String {
    let body = r#"{"amount":"100.00","currency":"RUB","paymentMethod":"card","userId":"user-1"}"#;
    let signature = sign(&Secret::new(DEMO_DEPOSIT_SECRET), body.as_bytes());
    format!(
        "curl -s {public_url}/api/v1/deposits \\\n  -H 'merchant-id: {DEMO_MERCHANT}' \\\n  -H 'x-signature: {signature}' \\\n  -H 'Content-Type: application/json' \\\n  -d '{body}'"
    )
}

/// Prints the demo merchant's credentials and a request to paste.
pub fn print_banner(app: &Application) {
    let url = &app.config().public_url;
    println!(
        "\nGateway demo on {url} (port {port})\n\n  merchant id:       {DEMO_MERCHANT}\n  deposit secret:    {DEMO_DEPOSIT_SECRET}\n  withdrawal secret: {DEMO_WITHDRAWAL_SECRET}\n  balance:           {DEMO_BALANCE} RUB (credited once)\n\nCreate a card deposit:\n\n{curl}\n\nThen open the redirectUrl it returns to pay with card 4242424242424242.\n",
        port = app.port(),
        curl = demo_curl(url)
    );
}
