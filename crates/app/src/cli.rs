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
    /// Create, list, update and disable merchants; rotate their secrets.
    #[command(subcommand)]
    Merchant(MerchantCommand),
    /// Credit or debit a merchant's balance by hand (a ledger entry).
    #[command(subcommand)]
    Balance(BalanceCommand),
    /// List, add, enable, disable and reprioritise processing routes.
    #[command(subcommand)]
    Route(RouteCommand),
    /// Set, list and remove merchants' tariffs (the fees they pay).
    #[command(subcommand)]
    Tariff(TariffCommand),
    /// A merchant's statement in one currency over whole days: opening and closing balance,
    /// and per day its approved movements, fees, manual entries and disputes.
    Statement(StatementArgs),
    /// Add, list, enable, disable and update payment providers (acquirers).
    #[command(subcommand)]
    Provider(ProviderCommand),
    /// Show or act on one operation.
    #[command(subcommand)]
    Operation(OperationCommand),
    /// Inspect and re-send callbacks.
    #[command(subcommand)]
    Callbacks(CallbacksCommand),
    /// List providers' discrepancies and mark them resolved.
    #[command(subcommand)]
    Discrepancy(DiscrepancyCommand),
    /// List disputes of deposits (appeals and chargebacks) and decide open appeals.
    #[command(subcommand)]
    Dispute(DisputeCommand),
    /// Check the ledger invariant.
    #[command(subcommand)]
    Ledger(LedgerCommand),
    /// Encrypt stored secrets with GATEWAY_MASTER_KEY.
    #[command(subcommand)]
    Secrets(SecretsCommand),
    /// Create, list and disable the operator console's accounts.
    #[command(subcommand)]
    Operator(OperatorCommand),
}

/// `gateway statement`: which merchant, currency and days, and how to print it.
#[derive(Debug, clap::Args)]
pub struct StatementArgs {
    #[arg(long)]
    pub merchant: String,
    /// An ISO 4217 code.
    #[arg(long)]
    pub currency: String,
    /// The first day, YYYY-MM-DD (a local day of --timezone).
    #[arg(long)]
    pub from: String,
    /// The last day, YYYY-MM-DD, included; at most 366 days after --from.
    #[arg(long)]
    pub to: String,
    /// CSV: a row a day.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    #[arg(long)]
    pub json: bool,
    /// The time zone the days are in (the console's).
    #[arg(long, env = "GATEWAY_CONSOLE_TIMEZONE", default_value = "UTC")]
    pub timezone: String,
}

#[derive(Debug, Subcommand)]
pub enum OperatorCommand {
    /// Create a console account; prints a generated password once (or reads one from stdin).
    Create {
        /// Sign-in name: 1 to 64 of a-z 0-9 . _ @ - (folded to lower case).
        #[arg(long)]
        name: String,
        /// viewer (reads), operator (also retries callbacks and cancels) or admin (also
        /// changes merchants, routes, providers and balances).
        #[arg(long, default_value = "viewer")]
        role: String,
        /// Read the password (12 characters or more) from stdin instead of generating one.
        #[arg(long)]
        password_stdin: bool,
        #[arg(long)]
        json: bool,
    },
    /// Disable an account: its sessions end at once.
    Disable { name: String },
    /// Set a new password (read from stdin): every session of the account ends at once.
    SetPassword {
        name: String,
        /// Read the new password (12 characters or more) from stdin; required.
        #[arg(long, required = true)]
        password_stdin: bool,
    },
    /// List accounts (never their passwords or hashes).
    List {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum SecretsCommand {
    /// Encrypt every merchant secret and provider credential still stored in clear, in place,
    /// and leave no clear copy in the database's files. Needs GATEWAY_MASTER_KEY; run it with
    /// the gateway stopped. Running it again changes nothing.
    Encrypt {
        #[arg(long)]
        json: bool,
    },
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
    /// A PostgreSQL replica for the console's lists and CSV export, statements and
    /// `GET /balance/transactions` (postgres://...); their pages show how far behind it is.
    #[arg(long, env = "GATEWAY_DATABASE_READ_URL")]
    pub database_read_url: Option<String>,
    /// The operator console at /admin: off, on (on the main listener) or HOST:PORT (a
    /// listener of its own). --demo turns it on.
    #[arg(long, env = "GATEWAY_ADMIN", default_value = "off")]
    pub admin: String,
    /// The time zone the console shows times in and starts "today" at, e.g. Europe/Moscow.
    #[arg(long, env = "GATEWAY_CONSOLE_TIMEZONE", default_value = "UTC")]
    pub console_timezone: String,
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
    /// How long a processing acquirer operation may stay quiet before it is read from the
    /// acquirer (then at doubling gaps up to 5m).
    #[arg(long, env = "GATEWAY_RECONCILE_AFTER", default_value = "60s")]
    pub reconcile_after: String,
    /// How long, from a creation request's arrival, the gateway may go on to further
    /// providers after definite failures; a provider is tried only if its timeout still fits.
    #[arg(long, env = "GATEWAY_ROUTING_BUDGET", default_value = "15s")]
    pub routing_budget: String,
    /// The API's HTTP worker threads; default: one per core.
    #[arg(long, env = "GATEWAY_HTTP_WORKERS")]
    pub http_workers: Option<String>,
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
        /// Every request must carry x-timestamp (GETs included).
        #[arg(long)]
        require_timestamp: bool,
        /// Every request must be signed with version 2 (x-signature-version: 2), bound to
        /// its method and path.
        #[arg(long, conflicts_with = "no_require_signature_v2")]
        require_signature_v2: bool,
        /// Version-1 signatures are accepted where the path allows them (the default).
        #[arg(long)]
        no_require_signature_v2: bool,
        #[arg(long)]
        json: bool,
    },
    /// List merchants with their live secrets per direction (never the secrets themselves).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Change a merchant's signing rules (running gateways apply them within 5 s).
    #[command(group(
        clap::ArgGroup::new("rule")
            .required(true)
            .multiple(true)
            .args([
                "require_timestamp",
                "no_require_timestamp",
                "require_signature_v2",
                "no_require_signature_v2",
            ])
    ))]
    Update {
        id: String,
        /// Every request must carry x-timestamp.
        #[arg(long, conflicts_with = "no_require_timestamp")]
        require_timestamp: bool,
        /// x-timestamp becomes optional again.
        #[arg(long)]
        no_require_timestamp: bool,
        /// Every request must be signed with version 2 (x-signature-version: 2).
        #[arg(long, conflicts_with = "no_require_signature_v2")]
        require_signature_v2: bool,
        /// Version-1 signatures are accepted again where the path allows them.
        #[arg(long)]
        no_require_signature_v2: bool,
    },
    /// Give a direction a new secret, printed once; the old one keeps working for --overlap.
    RotateSecret {
        id: String,
        /// deposit or withdrawal.
        #[arg(long)]
        direction: String,
        /// How long older secrets keep working: Ns, Nm, Nh or Nd from 0s (revoked at once)
        /// to 720h.
        #[arg(long, default_value = "24h", allow_hyphen_values = true)]
        overlap: String,
        #[arg(long)]
        json: bool,
    },
    /// Disable a merchant: its requests are refused and its callbacks held from then on.
    Disable { id: String },
    /// Enable a merchant again: its requests are taken and its held callbacks go out on their
    /// schedule.
    Enable { id: String },
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
    /// Why, recorded on the ledger entry and in the audit log (`manual` when left out).
    #[arg(long)]
    pub reason: Option<String>,
    /// The operation the entry is about (an operationId of this merchant, in --currency): the
    /// entry is linked to it and resolves its open discrepancies.
    #[arg(long, value_name = "ID")]
    pub operation: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum TariffCommand {
    /// Set a merchant's whole tariff for one direction, method and currency (replacing the
    /// one there): what is left out is percent 0, fixed 0, no min, no max.
    Set(TariffSetArgs),
    /// List tariffs, of every merchant or of one.
    List {
        #[arg(long)]
        merchant: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Remove a merchant's tariff: its operations pay no fee from then on.
    Remove(TariffKeyArgs),
}

/// Which tariff: a merchant's, for one direction, method and currency.
#[derive(Debug, Clone, Args)]
pub struct TariffKeyArgs {
    #[arg(long)]
    pub merchant: String,
    /// deposit, withdrawal or refund.
    #[arg(long)]
    pub direction: String,
    /// The payment method (a refund's is its deposit's).
    #[arg(long)]
    pub method: String,
    #[arg(long)]
    pub currency: String,
}

#[derive(Debug, Clone, Args)]
pub struct TariffSetArgs {
    #[command(flatten)]
    pub key: TariffKeyArgs,
    /// A percentage of the amount, 0 to 100, at most two fraction digits (2.50).
    #[arg(long)]
    pub percent: Option<String>,
    /// A fixed part, in the currency's form (10.00).
    #[arg(long)]
    pub fixed: Option<String>,
    /// The least fee, in the currency's form.
    #[arg(long)]
    pub min: Option<String>,
    /// The most fee, in the currency's form.
    #[arg(long)]
    pub max: Option<String>,
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
    /// Add a route; prints the enabled routes that compete with it.
    Add(RouteAddArgs),
    /// Disable a route: it takes no new operations (its operations still finish).
    Disable { id: i64 },
    /// Enable a route.
    Enable { id: i64 },
    /// Set a route's priority (higher wins).
    SetPriority {
        id: i64,
        #[arg(allow_negative_numbers = true)]
        priority: i32,
    },
}

#[derive(Debug, Subcommand)]
pub enum OperationCommand {
    /// Show an operation as the API reads it, with its provider attempts, ledger entries
    /// and callback deliveries.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Ask the acquirer to cancel a processing operation and apply its answer.
    Cancel {
        id: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ProviderCommand {
    /// Add an acquirer; its credentials come from environment variables or stdin, never
    /// from the command line.
    Add(ProviderAddArgs),
    /// List providers (never their credentials).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Take a provider into routing again.
    Enable { name: String },
    /// Take a provider out of routing for new operations; notifications, reads and cancels go on.
    Disable { name: String },
    /// Change a provider's URL, timeout or credentials.
    Update(ProviderUpdateArgs),
}

/// Where a provider's credentials come from.
#[derive(Debug, Clone, Args)]
pub struct CredentialArgs {
    /// The environment variable holding the API key.
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// The environment variable holding the webhook secret.
    #[arg(long, value_name = "VAR")]
    pub webhook_secret_env: Option<String>,
    /// Read {"apiKey": "...", "webhookSecret": "..."} from stdin.
    #[arg(long)]
    pub credentials_stdin: bool,
    /// Refused: credentials on the command line end up in shell history and process lists.
    #[arg(long, hide = true, value_name = "KEY")]
    pub api_key: Option<String>,
    /// Refused, like --api-key.
    #[arg(long, hide = true, value_name = "SECRET")]
    pub webhook_secret: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct ProviderAddArgs {
    /// ^[a-z][a-z0-9_-]{0,31}$; `sandbox` is the built-in one's.
    #[arg(long)]
    pub name: String,
    /// The protocol it speaks: acquirer (the Acquirer API), the only one built in.
    #[arg(long, default_value = "acquirer")]
    pub kind: String,
    /// The Acquirer API's base URL (https; plain http only to loopback unless --allow-insecure).
    #[arg(long)]
    pub url: String,
    #[command(flatten)]
    pub credentials: CredentialArgs,
    /// How long one call may take, 1s to 55s.
    #[arg(long, default_value = "5s")]
    pub timeout: String,
    /// Allow plain http to a host that is not loopback.
    #[arg(long)]
    pub allow_insecure: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ProviderUpdateArgs {
    pub name: String,
    #[arg(long)]
    pub url: Option<String>,
    #[command(flatten)]
    pub credentials: CredentialArgs,
    #[arg(long)]
    pub timeout: Option<String>,
    #[arg(long)]
    pub allow_insecure: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct RouteAddArgs {
    /// deposit or withdrawal.
    #[arg(long)]
    pub direction: String,
    /// Payment method, e.g. card.
    #[arg(long)]
    pub method: String,
    /// An active ISO 4217 code; only card takes another than RUB.
    #[arg(long, default_value = "RUB")]
    pub currency: String,
    /// Smallest amount, inclusive, in the currency's form (default: one minor unit).
    #[arg(long)]
    pub min: Option<String>,
    /// Largest amount, inclusive, in the currency's form (default: 10,000,000 major units).
    #[arg(long)]
    pub max: Option<String>,
    /// Higher wins; on a tie the older route wins.
    #[arg(long, default_value_t = 100, allow_negative_numbers = true)]
    pub priority: i32,
    /// `sandbox` (built in) or an acquirer added with `provider add`.
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
    /// Send a failed callback again, with a fresh schedule: an operation's own (by its
    /// operationId) or a refund's (by its refundId).
    Retry { id: String },
    /// List callbacks, newest first.
    List {
        /// Only failed callbacks.
        #[arg(long, conflicts_with = "held")]
        failed: bool,
        /// Only held callbacks (their merchant is disabled).
        #[arg(long)]
        held: bool,
        #[arg(long, default_value_t = 100)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum DiscrepancyCommand {
    /// List discrepancies, newest first, with their resolution.
    List {
        /// Only open (unresolved) ones.
        #[arg(long)]
        open: bool,
        #[arg(long, default_value_t = 100)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// Mark a discrepancy resolved, with why (it changes no status and moves no money).
    Resolve {
        id: i64,
        /// Why it is settled: 1 to 500 characters.
        #[arg(long)]
        note: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum DisputeCommand {
    /// List disputes, newest first, with their deadlines.
    List {
        /// Only this merchant's.
        #[arg(long)]
        merchant: Option<String>,
        /// Only those in this status (open, under_review, won, lost, accepted, rejected).
        #[arg(long)]
        status: Option<String>,
        #[arg(long, default_value_t = 100)]
        limit: u32,
        /// An array of Dispute (as the API answers it) with merchantId.
        #[arg(long)]
        json: bool,
    },
    /// Accept an open appeal: credit AMOUNT (default: its paidAmount) less the deposit's fee.
    Accept {
        id: String,
        /// The amount accepted, in the deposit's currency.
        #[arg(long)]
        amount: Option<String>,
        /// Why: 1 to 2000 characters, kept as the dispute's resolution.
        #[arg(long)]
        reason: String,
    },
    /// Reject an open appeal: nothing moves.
    Reject {
        id: String,
        /// Why: 1 to 2000 characters, kept as the dispute's resolution.
        #[arg(long)]
        reason: String,
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
