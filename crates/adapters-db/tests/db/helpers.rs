//! A fresh database per test on each backend, test doubles for the gateway's other ports, and
//! raw SQL for what the public API does not show.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use adapters_db::{Backend, Database, DbOptions, NewMerchant};
use async_trait::async_trait;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use domain::ledger::manual_move;
use domain::merchant::{full_access, Merchant, Secret};
use domain::operation::{Action, Decline, DeclineCode, Operation, OperationUrls};
use domain::ports::{
    Clock, DepositStart, IdGenerator, OperationStore, PaymentProvider, PayoutStart, ProviderError,
    ProviderVerdict,
};
use domain::request::{Common, NewDeposit, NewWithdrawal};
use domain::route::Route;
use domain::service::{Gateway, Ports};
use domain::{
    Amount, Currency, MerchantOperationId, OperationId, PaymentMethod, Timestamp, UserData, UserId,
    WithdrawalRequisites,
};

/// The variable naming the PostgreSQL server to test against.
const PG_VAR: &str = "GATEWAY_TEST_DATABASE_URL";

/// One test's database: a temp SQLite file, or a fresh PostgreSQL database dropped afterwards.
pub struct TestDb {
    pub db: Database,
    pub url: String,
    _place: Place,
}

/// Keeps a test's closure from capturing `db` alone (edition 2021 captures disjoint fields),
/// which would drop the database while the test still runs. Fields then drop in order: the
/// pool first, then the place.
impl Drop for TestDb {
    fn drop(&mut self) {}
}

enum Place {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl Drop for Place {
    fn drop(&mut self) {
        if let Place::Postgres { admin_url, name } = self {
            if let Ok(mut admin) = PgConnection::establish(admin_url) {
                let _ =
                    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            }
        }
    }
}

fn options() -> DbOptions {
    DbOptions {
        max_connections: Some(8),
        ..DbOptions::default()
    }
}

impl TestDb {
    fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("gateway.db").display());
        let db = Database::connect_with(&url, options()).expect("open SQLite");
        db.migrate().expect("migrate SQLite");
        TestDb {
            db,
            url,
            _place: Place::Sqlite(dir),
        }
    }

    fn postgres(admin_url: &str) -> TestDb {
        let mut admin = PgConnection::establish(admin_url)
            .unwrap_or_else(|e| panic!("{PG_VAR} is set but PostgreSQL cannot be reached: {e}"));
        let name = format!("test_{}", uuid::Uuid::new_v4().simple());
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create the test database");
        let mut url = url::Url::parse(admin_url).expect("a valid PostgreSQL URL");
        url.set_path(&name);
        let place = Place::Postgres {
            admin_url: admin_url.to_string(),
            name,
        };
        let url = url.to_string();
        let db = Database::connect_with(&url, options()).expect("open PostgreSQL");
        db.migrate().expect("migrate PostgreSQL");
        TestDb {
            db,
            url,
            _place: place,
        }
    }

    pub fn backend(&self) -> Backend {
        self.db.backend()
    }

    fn raw(&self) -> RawConn {
        match self.backend() {
            Backend::Sqlite => RawConn::Sqlite(
                SqliteConnection::establish(self.url.trim_start_matches("sqlite://"))
                    .expect("raw SQLite connection"),
            ),
            Backend::Postgres => {
                RawConn::Pg(PgConnection::establish(&self.url).expect("raw PostgreSQL connection"))
            }
        }
    }

    /// Runs raw SQL (to tamper with data the way a bug or an operator might).
    pub fn exec(&self, sql: &str) {
        match self.raw() {
            RawConn::Sqlite(mut c) => c.batch_execute(sql),
            RawConn::Pg(mut c) => c.batch_execute(sql),
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// The single BIGINT a query returns as `n`.
    pub fn count(&self, sql: &str) -> i64 {
        #[derive(QueryableByName)]
        struct N {
            #[diesel(sql_type = BigInt)]
            n: i64,
        }
        let query = diesel::sql_query(sql);
        let row: N = match self.raw() {
            RawConn::Sqlite(mut c) => query.get_result(&mut c),
            RawConn::Pg(mut c) => query.get_result(&mut c),
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
        row.n
    }
}

enum RawConn {
    Sqlite(SqliteConnection),
    Pg(PgConnection),
}

/// Runs `test` on a fresh SQLite database, then (when `GATEWAY_TEST_DATABASE_URL` is set) on a
/// fresh PostgreSQL database. An unreachable PostgreSQL fails the test.
pub async fn each_backend<F, Fut>(test: F)
where
    F: Fn(TestDb) -> Fut,
    Fut: Future<Output = ()>,
{
    eprintln!("-- on SQLite");
    let sqlite = tokio::task::spawn_blocking(TestDb::sqlite)
        .await
        .expect("SQLite setup");
    test(sqlite).await;
    match std::env::var(PG_VAR) {
        Ok(admin_url) if !admin_url.is_empty() => {
            eprintln!("-- on PostgreSQL");
            let pg = tokio::task::spawn_blocking(move || TestDb::postgres(&admin_url))
                .await
                .expect("PostgreSQL setup");
            test(pg).await;
        }
        _ => eprintln!("-- PostgreSQL skipped: {PG_VAR} is not set"),
    }
}

/// 64 hex characters, like the CLI makes.
pub fn secret(seed: char) -> Secret {
    Secret::new(seed.to_string().repeat(64))
}

/// A new enabled merchant with every method.
pub async fn merchant(db: &Database) -> Merchant {
    db.create_merchant(NewMerchant {
        id: None,
        name: format!("shop-{}", uuid::Uuid::new_v4().simple()),
        access: full_access(),
        deposit_secret: secret('d'),
        withdrawal_secret: secret('w'),
    })
    .await
    .expect("create merchant")
}

pub fn now() -> Timestamp {
    SystemClock.now()
}

pub fn rub(minor: i64) -> Amount {
    Amount::from_minor(minor).expect("positive amount")
}

/// Credits `minor` units of RUB by hand.
pub async fn credit(db: &Database, merchant: &Merchant, minor: i64) {
    let mv = manual_move(merchant.id.clone(), Currency::RUB, rub(minor), true, now());
    db.adjust_balance(&mv).await.expect("credit");
}

/// (available, held) in RUB, zeros if there is no balance yet.
pub async fn balance(db: &Database, merchant: &Merchant) -> (i64, i64) {
    let all = db.balances(&merchant.id).await.expect("balances");
    all.iter()
        .find(|b| b.currency == Currency::RUB)
        .map_or((0, 0), |b| (b.available, b.held))
}

fn common(method: PaymentMethod, minor: i64, moid: Option<&str>, callback: bool) -> Common {
    Common {
        amount: rub(minor),
        currency: Currency::RUB,
        method,
        user_id: UserId::parse("user-1").expect("user id"),
        merchant_operation_id: moid.map(|m| MerchantOperationId::parse(m).expect("moid")),
        urls: OperationUrls {
            callback: callback
                .then(|| domain::HttpUrl::parse("https://shop.example/cb").expect("url")),
            ..OperationUrls::default()
        },
        user_data: UserData::default(),
    }
}

pub fn withdrawal(minor: i64, moid: Option<&str>) -> NewWithdrawal {
    NewWithdrawal {
        common: common(PaymentMethod::Card, minor, moid, true),
        requisites: WithdrawalRequisites::card(Some("4242424242424242"), Some("IVAN PETROV"))
            .expect("card requisites"),
    }
}

pub fn deposit(minor: i64, moid: Option<&str>) -> NewDeposit {
    NewDeposit {
        common: common(PaymentMethod::Card, minor, moid, true),
        requisites: None,
    }
}

/// A gateway over `db` with the test provider, the system clock and UUID v4 ids.
pub fn gateway(db: &Database) -> Gateway {
    let db = Arc::new(db.clone());
    Gateway::new(Ports {
        store: db.clone(),
        merchants: db.clone(),
        routes: db,
        provider: Arc::new(TestProvider),
        clock: Arc::new(SystemClock),
        ids: Arc::new(UuidIds),
    })
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_millis();
        Timestamp::from_millis(i64::try_from(millis).expect("fits"))
    }
}

pub struct UuidIds;

impl IdGenerator for UuidIds {
    fn operation_id(&self) -> OperationId {
        OperationId::from_uuid(uuid::Uuid::new_v4())
    }
}

/// Accepts everything (waiting deposits, payouts due in an hour), except amounts ending in 05,
/// which it declines, like the sandbox.
pub struct TestProvider;

fn declines(op: &Operation) -> bool {
    op.amount.minor() % 100 == 5
}

#[async_trait]
impl PaymentProvider for TestProvider {
    async fn start_deposit(
        &self,
        deposit: &Operation,
        _: &Route,
    ) -> Result<DepositStart, ProviderError> {
        // A little latency, so concurrent requests overlap in the store.
        tokio::time::sleep(Duration::from_millis(2)).await;
        if declines(deposit) {
            return Ok(DepositStart::Declined(Decline::new(
                DeclineCode::ProviderDeclined,
            )));
        }
        Ok(DepositStart::Wait(Action::Redirect {
            url: format!("https://gateway.example/pay/{}", deposit.id),
        }))
    }

    async fn start_payout(
        &self,
        payout: &Operation,
        _: &WithdrawalRequisites,
        _: &Route,
    ) -> Result<PayoutStart, ProviderError> {
        tokio::time::sleep(Duration::from_millis(2)).await;
        if declines(payout) {
            return Ok(PayoutStart::Declined(Decline::new(
                DeclineCode::ProviderDeclined,
            )));
        }
        Ok(PayoutStart::Accepted {
            state: Some(serde_json::json!({"plan": "approve"})),
            due_at: payout.created_at.plus_seconds(3_600),
        })
    }

    async fn poll_payout(
        &self,
        _: &Operation,
        now: Timestamp,
    ) -> Result<ProviderVerdict, ProviderError> {
        Ok(ProviderVerdict::Pending(now.plus_seconds(60)))
    }

    async fn submit_input(
        &self,
        _: &Operation,
        _: &std::collections::BTreeMap<String, String>,
    ) -> Result<ProviderVerdict, ProviderError> {
        Ok(ProviderVerdict::Approve)
    }

    async fn check_code(&self, _: &Operation, code: &str) -> Result<bool, ProviderError> {
        Ok(code == "0000")
    }
}

/// A processing operation of the merchant, on route 1 (deposits) or 7 (withdrawals), with a
/// callback URL; direct store tests build on it.
pub fn operation(merchant: &Merchant, direction: domain::Direction, minor: i64) -> Operation {
    let at = now();
    let (method, route_id) = match direction {
        domain::Direction::Deposit => (PaymentMethod::Card, 1),
        domain::Direction::Withdrawal => (PaymentMethod::Card, 7),
    };
    Operation {
        id: OperationId::from_uuid(uuid::Uuid::new_v4()),
        merchant_id: merchant.id.clone(),
        direction,
        method,
        status: domain::Status::Processing,
        amount: rub(minor),
        currency: Currency::RUB,
        user_id: UserId::parse("user-1").expect("user id"),
        merchant_operation_id: None,
        urls: OperationUrls {
            callback: Some(domain::HttpUrl::parse("https://shop.example/cb").expect("url")),
            ..OperationUrls::default()
        },
        requisites: None,
        user_data: UserData::default(),
        action: None,
        decline: None,
        route_id,
        expires_at: None,
        provider_state: None,
        due_at: None,
        created_at: at,
        updated_at: at,
    }
}

/// Stores `op` with no moves and no callback.
pub async fn insert_plain(db: &Database, op: &Operation) {
    let new = domain::ports::NewOperation {
        operation: op.clone(),
        fingerprint: None,
        moves: Vec::new(),
        callback: None,
    };
    db.insert(&new).await.expect("insert");
}

impl TestDb {
    /// The stored operation, which must exist.
    pub async fn db_get(&self, id: OperationId) -> Operation {
        self.db.get(id).await.expect("get").expect("stored")
    }
}

impl TestDb {
    /// Runs raw SQL that may be refused, with the database's message.
    pub fn try_exec(&self, sql: &str) -> Result<(), String> {
        match self.raw() {
            RawConn::Sqlite(mut c) => c.batch_execute(sql),
            RawConn::Pg(mut c) => c.batch_execute(sql),
        }
        .map_err(|e| e.to_string())
    }
}

/// Stores `n` deposits declined at creation, each with a callback queued at `at`.
pub async fn queue_callbacks(
    db: &Database,
    merchant: &Merchant,
    n: usize,
    at: Timestamp,
) -> Vec<OperationId> {
    let mut ids = Vec::new();
    for _ in 0..n {
        let op = operation(merchant, domain::Direction::Deposit, 1_00);
        let decline =
            domain::operation::Outcome::Decline(Decline::new(DeclineCode::PaymentRejected));
        let done = op.finish(&decline, at).expect("processing");
        let new = domain::ports::NewOperation {
            callback: domain::callback::callback_for(&done),
            operation: done,
            fingerprint: None,
            moves: Vec::new(),
        };
        db.insert(&new).await.expect("insert");
        ids.push(op.id);
    }
    ids
}
