//! The `gateway` command line (docs/operations.md).

use clap::{Args, Parser, Subcommand};

/// A payment gateway for deposits and payouts: signed JSON API, hosted pages, callbacks.
#[derive(Debug, Parser)]
#[command(name = "gateway", version, about)]
pub struct Cli {
    /// Database: sqlite://PATH (embedded) or postgres://USER@HOST:PORT/DB.
    #[arg(
        long,
        global = true,
        env = "GATEWAY_DATABASE_URL",
        default_value = "sqlite://gateway.db"
    )]
    pub database_url: String,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Migrate the database and serve the API, the hosted pages and the workers.
    Serve(ServeArgs),
    /// Apply database migrations only.
    Migrate,
    /// Create, list and disable merchants.
    #[command(subcommand)]
    Merchant(MerchantCommand),
    /// Credit or debit a merchant's balance by hand (a ledger entry).
    #[command(subcommand)]
    Balance(BalanceCommand),
    /// List, add and disable processing routes.
    #[command(subcommand)]
    Route(RouteCommand),
    /// Inspect and re-send callbacks.
    #[command(subcommand)]
    Callbacks(CallbacksCommand),
    /// Check the ledger invariant.
    #[command(subcommand)]
    Ledger(LedgerCommand),
}

/// Options of `gateway serve`; each falls back to its GATEWAY_* variable, then the default.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Create the demo merchant (once) and print a ready-to-paste signed request.
    #[arg(long)]
    pub demo: bool,
    /// Listen address, HOST:PORT.
    #[arg(long, env = "GATEWAY_BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,
    /// Base of redirectUrl and QR links; defaults to http://{bind}.
    #[arg(long, env = "GATEWAY_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Allow callbacks to loopback, private and link-local addresses (tests, local demos).
    #[arg(long, env = "GATEWAY_CALLBACK_ALLOW_PRIVATE", default_value = "false")]
    pub callback_allow_private: String,
    /// Delays between callback attempts, e.g. 10s,30s,1m,5m.
    #[arg(long, env = "GATEWAY_CALLBACK_SCHEDULE")]
    pub callback_schedule: Option<String>,
    /// How long one callback attempt may take, e.g. 10s.
    #[arg(long, env = "GATEWAY_CALLBACK_TIMEOUT", default_value = "10s")]
    pub callback_timeout: String,
    /// Requests per second allowed per merchant; 0 turns the limit off.
    #[arg(long, env = "GATEWAY_RATE_LIMIT", default_value = "0")]
    pub rate_limit: String,
    /// How long a sandbox payout takes to settle, in milliseconds.
    #[arg(long, env = "GATEWAY_SANDBOX_SETTLE_MS", default_value = "2000")]
    pub sandbox_settle_ms: String,
    /// Whether the built-in sandbox provider takes new operations and serves its pages and
    /// /sandbox paths; production sets false.
    #[arg(long, env = "GATEWAY_SANDBOX", default_value = "true")]
    pub sandbox: String,
}

#[derive(Debug, Subcommand)]
pub enum MerchantCommand {
    /// Create a merchant and print its id and both secrets (shown only this once).
    Create {
        /// Unique merchant name.
        #[arg(long)]
        name: String,
        /// Allowed methods, e.g. deposit:card,withdrawal:sbp; default: every method both ways.
        #[arg(long)]
        methods: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// List merchants (without secrets).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Disable a merchant: its requests are refused from then on.
    Disable { id: String },
}

#[derive(Debug, Subcommand)]
pub enum BalanceCommand {
    /// Add to the available balance.
    Credit(BalanceArgs),
    /// Take from the available balance (refused if it would go negative).
    Debit(BalanceArgs),
}

#[derive(Debug, Clone, Args)]
pub struct BalanceArgs {
    #[arg(long)]
    pub merchant: String,
    #[arg(long, default_value = "RUB")]
    pub currency: String,
    /// Amount with two fraction digits, e.g. 100.00.
    #[arg(long)]
    pub amount: String,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum RouteCommand {
    /// List routes.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Add a route.
    Add(RouteAddArgs),
    /// Disable a route.
    Disable { id: i64 },
}

#[derive(Debug, Clone, Args)]
pub struct RouteAddArgs {
    /// deposit or withdrawal.
    #[arg(long)]
    pub direction: String,
    /// Payment method, e.g. card.
    #[arg(long)]
    pub method: String,
    #[arg(long, default_value = "RUB")]
    pub currency: String,
    /// Smallest amount, inclusive.
    #[arg(long, default_value = "0.01")]
    pub min: String,
    /// Largest amount, inclusive.
    #[arg(long, default_value = "10000000.00")]
    pub max: String,
    /// Higher wins.
    #[arg(long, default_value_t = 100)]
    pub priority: i32,
    #[arg(long, default_value = "sandbox")]
    pub provider: String,
    /// redirect, qr, requisites, input_fields, instruction, confirmation or payout.
    #[arg(long)]
    pub flow: Option<String>,
    /// Seconds a waiting deposit lives (default 600).
    #[arg(long)]
    pub lifetime: Option<i64>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum CallbacksCommand {
    /// Send a failed callback again, with a fresh schedule.
    Retry { operation_id: String },
    /// List callbacks, newest first.
    List {
        /// Only failed callbacks.
        #[arg(long)]
        failed: bool,
        #[arg(long, default_value_t = 100)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// Check that every balance equals the sum of its ledger entries; exit 1 if not.
    Verify {
        #[arg(long)]
        json: bool,
    },
}
