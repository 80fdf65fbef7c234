//! The operator console's rules: who may do what, sessions and their ends, the sign-in limit,
//! the audit trail, the operations search (filters and its keyset cursor), the CSV export's
//! cells and the overview's figures.
//!
//! Storage is the [`ConsoleStore`](crate::ports::ConsoleStore) port; rendering and cookies are
//! the HTTP adapter's. Password hashing (Argon2id) is the adapter's too: the domain only keeps
//! the hash as an opaque string.

use std::collections::BTreeMap;
use std::fmt;

use crate::names::names;
use crate::{Currency, Direction, MerchantId, OperationId, PaymentMethod, RefundId, Status};
use crate::{Timestamp, ValueError};

names! {
    /// What an operator may do. Each role may do everything the one before it may.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Role {
        /// Reads every page.
        Viewer = "viewer",
        /// Also retries callbacks, sends them now, cancels at a provider and completes sandbox
        /// operations.
        Operator = "operator",
        /// Also changes merchants, routes, providers and balances, and resolves discrepancies.
        Admin = "admin",
    }
    else "must be viewer, operator or admin"
}

impl Role {
    /// Whether this role may do what `need` asks.
    pub fn allows(self, need: Need) -> bool {
        let required = match need {
            Need::Read => Role::Viewer,
            Need::Act => Role::Operator,
            Need::Administer => Role::Admin,
        };
        self >= required
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a console page or action needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Read,
    /// Callbacks, cancel at a provider, the sandbox's complete.
    Act,
    /// Merchants, routes, providers, balances, discrepancies.
    Administer,
}

/// The longest operator name.
pub const MAX_OPERATOR_NAME: usize = 64;

/// An operator's sign-in name: 1 to 64 of `a-z 0-9 . _ @ -`, starting with a letter or digit.
/// Names are case-folded to lower case before they are checked, so `Alice` and `alice` are one.
pub fn operator_name(text: &str) -> Result<String, ValueError> {
    let name = text.trim().to_ascii_lowercase();
    let first_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let rest_ok = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || ".-_@".contains(c));
    if !first_ok || !rest_ok || name.len() > MAX_OPERATOR_NAME {
        return Err(ValueError::new(
            "must be 1 to 64 of a-z 0-9 . _ @ -, starting with a letter or digit",
        ));
    }
    Ok(name)
}

/// A console account as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleAccount {
    /// Lower case, see [`operator_name`].
    pub name: String,
    pub role: Role,
    /// The Argon2id hash in its PHC string form; never the password.
    pub password_hash: String,
    pub enabled: bool,
    pub created_at: Timestamp,
}

/// How long a session lives without a request.
pub const SESSION_IDLE_MS: i64 = 8 * 3600 * 1000;
/// How long a session lives in all.
pub const SESSION_ABSOLUTE_MS: i64 = 24 * 3600 * 1000;
/// A session's last-seen time is written again only when it is older than this, so a busy
/// operator does not write a row on every page.
pub const SESSION_TOUCH_MS: i64 = 60 * 1000;

/// A signed-in session as stored. The cookie holds a random token; only its SHA-256 is kept
/// (`id`), so a copy of the database signs no one in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// Hex SHA-256 of the cookie's token.
    pub id: String,
    pub operator: String,
    /// The operator's role now (read with the session, so a change applies at once).
    pub role: Role,
    /// The token every form of this session carries.
    pub csrf: String,
    pub created_at: Timestamp,
    pub last_seen_at: Timestamp,
}

impl Session {
    /// Whether the session still lets its operator in at `now`: less than 8 idle hours and
    /// less than 24 hours in all.
    pub fn is_live(&self, now: Timestamp) -> bool {
        now.millis() - self.last_seen_at.millis() < SESSION_IDLE_MS
            && now.millis() - self.created_at.millis() < SESSION_ABSOLUTE_MS
    }

    /// Whether a request at `now` should write the last-seen time again.
    pub fn needs_touch(&self, now: Timestamp) -> bool {
        now.millis() - self.last_seen_at.millis() >= SESSION_TOUCH_MS
    }
}

/// Failed sign-ins of one name within [`SIGNIN_WINDOW_MS`] from which every further attempt
/// for the name is refused (429) without hashing anything.
pub const SIGNIN_FAILURE_LIMIT: u32 = 5;
/// The window failed sign-ins are counted in.
pub const SIGNIN_WINDOW_MS: i64 = 60 * 1000;

/// Whether a sign-in for a name with `recent_failures` failures in the last minute is refused
/// before its password is looked at.
pub fn signin_limited(recent_failures: u32) -> bool {
    recent_failures >= SIGNIN_FAILURE_LIMIT
}

/// Who did something: `operator:NAME` for a console operator, `cli:OSUSER` for a command.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Actor(String);

impl Actor {
    pub fn operator(name: &str) -> Actor {
        Actor(format!("operator:{name}"))
    }

    pub fn cli(os_user: &str) -> Actor {
        let user = if os_user.trim().is_empty() {
            "unknown"
        } else {
            os_user.trim()
        };
        Actor(format!("cli:{user}"))
    }

    /// An actor as stored.
    pub fn from_stored(text: &str) -> Actor {
        Actor(text.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One change to record in the audit log. `before` and `after` are JSON texts of the changed
/// thing's relevant fields, never a secret, a password or a hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub actor: Actor,
    /// What was done, e.g. `merchant.disable`, `balance.credit`, `callback.retry`,
    /// `operations.export`.
    pub action: String,
    /// What it was done to, e.g. a merchant id, a route id, an operation id.
    pub target: String,
    pub before: Option<String>,
    pub after: Option<String>,
    pub at: Timestamp,
}

/// An audit entry as stored, with its number (later entries have larger ones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    pub id: i64,
    pub entry: AuditEntry,
}

/// What the operations page and the export look for. Every set field must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperationFilter {
    pub direction: Option<Direction>,
    pub method: Option<PaymentMethod>,
    pub status: Option<Status>,
    pub merchant: Option<MerchantId>,
    pub provider: Option<String>,
    /// `createdAt >= from`.
    pub created_from: Option<Timestamp>,
    /// `createdAt < to` (half-open).
    pub created_to: Option<Timestamp>,
    /// Exact search: an operation whose `operationId` or `merchantOperationId` is this text.
    pub search: Option<String>,
}

/// The default number of operations on a page, and the most one may ask for.
pub const PAGE_DEFAULT: u32 = 50;
pub const PAGE_MAX: u32 = 200;

/// Where a page of operations ends: the next page starts after this (`createdAt`, then
/// `operationId`, both descending). Shown to the browser only as an opaque token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub created_at: Timestamp,
    pub id: OperationId,
}

impl Cursor {
    /// The opaque token: hex of `{millis}.{uuid}`.
    pub fn encode(&self) -> String {
        hex::encode(format!("{}.{}", self.created_at.millis(), self.id))
    }

    pub fn decode(token: &str) -> Result<Cursor, ValueError> {
        let refused = || ValueError::new("is not a cursor this console made");
        let bytes = hex::decode(token).map_err(|_| refused())?;
        let text = String::from_utf8(bytes).map_err(|_| refused())?;
        let (millis, id) = text.split_once('.').ok_or_else(refused)?;
        let millis: i64 = millis.parse().map_err(|_| refused())?;
        let id = OperationId::parse(id).map_err(|_| refused())?;
        Ok(Cursor {
            created_at: Timestamp::from_millis(millis),
            id,
        })
    }
}

/// An operation as listed: the operation and how much of it is refunded (minor units; refunds
/// approved or still counting, as the API's `refundedAmount`).
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub operation: crate::operation::Operation,
    pub refunded: i64,
}

/// The CSV export's header row (without its CRLF).
pub const CSV_HEADER: &str = "operationId,merchantId,merchantOperationId,direction,paymentMethod,status,errorCode,amount,currency,refundedAmount,userId,provider,createdAt,updatedAt";

/// One CSV cell (RFC 4180): a text that starts with `=`, `+`, `-`, `@`, TAB or CR gets a
/// leading `'` so a spreadsheet does not run it as a formula; a text with a comma, a quote,
/// CR or LF is quoted, its quotes doubled.
pub fn csv_cell(text: &str) -> String {
    let neutral = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_string()
    };
    if neutral.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", neutral.replace('"', "\"\""))
    } else {
        neutral
    }
}

/// One operation's CSV row, ending in CRLF: the columns of [`CSV_HEADER`], amounts as the API
/// shows them, times in RFC 3339 UTC, the status as the API's number.
pub fn csv_row(listed: &Listed) -> String {
    let op = &listed.operation;
    let cells = [
        op.id().to_string(),
        op.merchant_id().as_str().to_string(),
        op.merchant_operation_id()
            .map(|m| m.as_str().to_string())
            .unwrap_or_default(),
        op.direction().as_str().to_string(),
        op.method().as_str().to_string(),
        op.status().number().to_string(),
        op.decline()
            .map(|d| d.code.as_str().to_string())
            .unwrap_or_default(),
        op.amount().format(op.currency()),
        op.currency().as_str().to_string(),
        // Only deposits are refunded; the API shows no refundedAmount for a withdrawal.
        match op.direction() {
            Direction::Deposit => crate::format_minor(listed.refunded, op.currency()),
            Direction::Withdrawal => String::new(),
        },
        op.user_id().as_str().to_string(),
        op.provider().to_string(),
        op.created_at().to_rfc3339(),
        op.updated_at().to_rfc3339(),
    ];
    let mut row = cells
        .iter()
        .map(|c| csv_cell(c))
        .collect::<Vec<_>>()
        .join(",");
    row.push_str("\r\n");
    row
}

/// Something that happened to an operation, written in the same transaction as the change.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "kind", rename_all = "camelCase"))]
pub enum EventDetail {
    /// The operation was stored with this status (declined at creation included).
    Created { status: u8 },
    /// Its status or its waiting step changed.
    #[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
    Status {
        from: u8,
        to: u8,
        /// The decline's code, for a decline.
        error_code: Option<String>,
        /// The step it now waits for, while processing.
        action: Option<String>,
    },
    /// A provider attempt was recorded or changed state (section 11).
    Attempt {
        number: u32,
        provider: String,
        state: String,
    },
    /// A refund was created or settled.
    #[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
    Refund {
        refund_id: String,
        status: u8,
        amount: i64,
    },
    /// A dispute of the deposit (an appeal or a chargeback, section 18) was opened, changed
    /// status, or had evidence recorded: `evidence` is its evidence's state when that changed.
    #[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
    Dispute {
        dispute_id: String,
        dispute_kind: String,
        status: String,
        amount: i64,
        evidence: Option<String>,
    },
    /// The provider reported something that contradicts the gateway's record.
    Discrepancy { provider: String, note: String },
    /// An operator resolved discrepancy `discrepancy` (by hand, or with the manual ledger
    /// entry `ledger_entry`).
    #[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
    DiscrepancyResolved {
        discrepancy: i64,
        actor: String,
        note: String,
        ledger_entry: Option<i64>,
    },
    /// One callback delivery attempt.
    #[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
    Callback {
        refund_id: Option<String>,
        /// Set for a dispute's callback (events stored before disputes have none).
        #[cfg_attr(feature = "serde", serde(default))]
        dispute_id: Option<String>,
        attempt: u32,
        http_status: Option<u16>,
        latency_ms: i64,
        error: Option<String>,
    },
}

/// One line of an operation's timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationEvent {
    pub id: i64,
    pub operation_id: OperationId,
    pub refund_id: Option<RefundId>,
    pub at: Timestamp,
    pub detail: EventDetail,
}

/// Operations created in one minute that now have one direction, method, status and currency:
/// how many and their amounts' sum (minor units). The store keeps these counters in the same
/// transaction as each creation and status change, so the overview never scans operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinuteCount {
    /// Minutes since the epoch (UTC) of the operations' `createdAt`.
    pub minute: i64,
    pub direction: Direction,
    pub method: PaymentMethod,
    pub status: Status,
    pub currency: Currency,
    pub count: i64,
    pub amount: i64,
}

/// The figures of the overview that are not per-minute counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Health {
    pub callbacks_pending: i64,
    /// Held because their merchant is disabled.
    pub callbacks_held: i64,
    pub callbacks_failed: i64,
    /// Operations processing whose `createdAt` is more than 24 hours ago.
    pub stuck_processing: i64,
    /// Discrepancies not resolved yet.
    pub open_discrepancies: i64,
    pub last_check: Option<LedgerCheck>,
}

/// A run of the ledger check, by the CLI or the console's "Verify now".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerCheck {
    pub at: Timestamp,
    pub actor: Actor,
    /// Balances that differ from their ledger; 0: it holds.
    pub mismatches: i64,
}

/// Today's figures for one direction, method, status and currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FigureKey {
    pub direction: Direction,
    pub method: PaymentMethod,
    pub status: u8,
    pub currency: Currency,
}

/// The overview: today's counts and sums, the approval rate and the charts' series.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overview {
    /// (count, amount in minor units) per key, for operations created since today's start.
    pub today: BTreeMap<FigureKey, (i64, i64)>,
    /// approved / (approved + declined) today; `None` with neither.
    pub approval_rate: Option<f64>,
    /// Per minute of the last hour (oldest first, 60 entries): counts by status
    /// (approved, declined, processing).
    pub per_minute: Vec<[i64; 3]>,
    /// Per direction and method (deposits by card and payouts by card are two lines):
    /// approval rate per hour over the last 24 hours (oldest first, 24 entries), `None` for
    /// an hour with no final operation.
    pub approval_by_method: BTreeMap<(Direction, PaymentMethod), Vec<Option<f64>>>,
    pub health: Health,
}

impl Overview {
    /// Builds the overview at `now` from counters that cover at least the last 24 hours and
    /// today (from `today_start`, midnight in the console's time zone).
    pub fn build(
        counts: &[MinuteCount],
        health: Health,
        today_start: Timestamp,
        now: Timestamp,
    ) -> Overview {
        let now_minute = now.millis().div_euclid(60_000);
        let today_minute = today_start.millis().div_euclid(60_000);
        let mut overview = Overview {
            per_minute: vec![[0; 3]; 60],
            health,
            ..Overview::default()
        };
        let (mut approved, mut declined) = (0i64, 0i64);
        let mut hourly: BTreeMap<(Direction, PaymentMethod), Vec<(i64, i64)>> = BTreeMap::new();
        for c in counts {
            if c.minute >= today_minute && c.minute <= now_minute {
                let key = FigureKey {
                    direction: c.direction,
                    method: c.method,
                    status: c.status.number(),
                    currency: c.currency,
                };
                let figure = overview.today.entry(key).or_insert((0, 0));
                figure.0 += c.count;
                figure.1 += c.amount;
                match c.status {
                    Status::Approved => approved += c.count,
                    Status::Declined => declined += c.count,
                    Status::Processing => {}
                }
            }
            let ago = now_minute - c.minute;
            if (0..60).contains(&ago) {
                let slot = &mut overview.per_minute[(59 - ago) as usize];
                slot[usize::from(c.status.number() - 1)] += c.count;
            }
            let hours_ago = ago.div_euclid(60);
            if (0..24).contains(&hours_ago) && c.status.is_final() {
                let hours = hourly
                    .entry((c.direction, c.method))
                    .or_insert_with(|| vec![(0, 0); 24]);
                let hour = &mut hours[(23 - hours_ago) as usize];
                if c.status == Status::Approved {
                    hour.0 += c.count;
                }
                hour.1 += c.count;
            }
        }
        overview.approval_rate = rate(approved, approved + declined);
        overview.approval_by_method = hourly
            .into_iter()
            .map(|(key, hours)| {
                let rates = hours.into_iter().map(|(a, all)| rate(a, all)).collect();
                (key, rates)
            })
            .collect();
        overview
    }
}

/// The shortest password an operator may set.
pub const MIN_PASSWORD_CHARS: usize = 12;

/// An Argon2id hash (PHC string, the `argon2` crate's default parameters, a fresh random
/// salt) of `password`. CPU-heavy on purpose (tens of milliseconds): callers bound how many
/// run at once and keep them off async threads.
pub fn hash_password(password: &str) -> String {
    use argon2::password_hash::{rand_core::OsRng, PasswordHasher, SaltString};
    let salt = SaltString::generate(&mut OsRng);
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        // Hashing a password of any length with default parameters does not fail.
        .unwrap_or_default()
}

/// Whether `password` matches the stored Argon2 `hash` (false for a malformed hash).
pub fn verify_password(hash: &str, password: &str) -> bool {
    use argon2::password_hash::{PasswordHash, PasswordVerifier};
    PasswordHash::new(hash).is_ok_and(|parsed| {
        argon2::Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

/// A password an operator chose: at least 12 characters, at most 1024 bytes.
pub fn check_password(password: &str) -> Result<(), ValueError> {
    if password.chars().count() < MIN_PASSWORD_CHARS || password.len() > 1024 {
        return Err(ValueError::new("must be 12 characters to 1024 bytes"));
    }
    Ok(())
}

fn rate(part: i64, whole: i64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

#[cfg(test)]
mod tests;
