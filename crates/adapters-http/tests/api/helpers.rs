//! A real gateway per test: a fresh database (a temp SQLite file, or a fresh PostgreSQL
//! database when `GATEWAY_TEST_DATABASE_URL` is set), the sandbox provider, the HTTP server on
//! `127.0.0.1:0`, and request helpers that sign like a merchant would.

use std::future::Future;
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::ServerHandle;
use adapters_db::{Database, NewMerchant, NewRoute};
use adapters_http::{HttpSettings, HttpState, ReadyFn};
use adapters_sandbox::{SandboxConfig, SandboxProvider};
use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection};
use domain::merchant::{full_access, Merchant, Secret};
use domain::ports::{Clock, IdGenerator};
use domain::route::Flow;
use domain::service::{Gateway, Ports};
use domain::signature::sign;
use domain::{Amount, Currency, Direction, OperationId, PaymentMethod, Timestamp};
use reqwest::header::HeaderMap;
use serde_json::Value;

/// The variable naming a PostgreSQL server the tests may create databases on.
const PG_VAR: &str = "GATEWAY_TEST_DATABASE_URL";

/// How long a sandbox payout takes to settle in these tests.
pub const SETTLE: Duration = Duration::from_millis(50);

/// The wall clock.
struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        Timestamp::from_millis(millis)
    }
}

/// Random UUIDs.
struct UuidIds;

impl IdGenerator for UuidIds {
    fn operation_id(&self) -> OperationId {
        OperationId::from_uuid(uuid::Uuid::new_v4())
    }
}

/// Where a test database lives; a PostgreSQL one is dropped with it.
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

fn sqlite() -> (Database, Place) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("gateway.db").display());
    let db = Database::connect(&url).expect("open SQLite");
    db.migrate().expect("migrate SQLite");
    (db, Place::Sqlite(dir))
}

fn postgres(admin_url: &str) -> (Database, Place) {
    let mut admin = PgConnection::establish(admin_url)
        .unwrap_or_else(|e| panic!("{PG_VAR} is set but PostgreSQL cannot be reached: {e}"));
    let name = format!("api_{}", uuid::Uuid::new_v4().simple());
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create the test database");
    let place = Place::Postgres {
        admin_url: admin_url.to_string(),
        name: name.clone(),
    };
    let mut url = url::Url::parse(admin_url).expect("a PostgreSQL URL");
    url.set_path(&name);
    let db = Database::connect(url.as_str()).expect("open PostgreSQL");
    db.migrate().expect("migrate PostgreSQL");
    (db, place)
}

/// What the test app is built with.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// Requests per second per merchant (0 = off).
    pub rate_limit: u32,
    /// Extra routes (e.g. a card deposit with the confirmation flow), added before serving.
    pub routes: Vec<(Flow, i32)>,
}

/// Runs `test` on a fresh SQLite app, then (when `GATEWAY_TEST_DATABASE_URL` is set) on a
/// fresh PostgreSQL app. A set but unreachable PostgreSQL fails the test.
pub async fn each_backend<F, Fut>(setup: Setup, test: F)
where
    F: Fn(TestApp) -> Fut,
    Fut: Future<Output = ()>,
{
    let (db, place) = tokio::task::spawn_blocking(sqlite).await.expect("SQLite");
    run(db, place, &setup, &test).await;
    match std::env::var(PG_VAR) {
        Ok(admin_url) if !admin_url.is_empty() => {
            let (db, place) = tokio::task::spawn_blocking(move || postgres(&admin_url))
                .await
                .expect("PostgreSQL");
            run(db, place, &setup, &test).await;
        }
        _ => eprintln!("PostgreSQL skipped: {PG_VAR} is not set"),
    }
}

async fn run<F, Fut>(db: Database, place: Place, setup: &Setup, test: &F)
where
    F: Fn(TestApp) -> Fut,
    Fut: Future<Output = ()>,
{
    let app = TestApp::spawn(db, place, setup).await;
    let handle = app.handle.clone();
    test(app).await;
    handle.stop(false).await;
}

/// A merchant as a test sees it: its id and both secrets.
#[derive(Debug, Clone)]
pub struct Shop {
    pub merchant: Merchant,
}

impl Shop {
    pub fn id(&self) -> &str {
        self.merchant.id.as_str()
    }

    pub fn deposit_secret(&self) -> &Secret {
        &self.merchant.deposit_secret
    }

    pub fn withdrawal_secret(&self) -> &Secret {
        &self.merchant.withdrawal_secret
    }

    /// The secret for `path`: withdrawal for `/withdrawals` and `/balance`, else deposit.
    pub fn secret_for(&self, path: &str) -> &Secret {
        if path.starts_with("/api/v1/withdrawals") || path.starts_with("/api/v1/balance") {
            self.withdrawal_secret()
        } else {
            self.deposit_secret()
        }
    }
}

/// What the server answered.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub text: String,
    /// The body as JSON (`Value::Null` if it is not JSON).
    pub body: Value,
}

impl Answer {
    /// `data` of a 2xx answer.
    pub fn data(&self) -> &Value {
        &self.body["data"]
    }

    /// Asserts the contract's error body with this status and code.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{}", self.text);
        assert_eq!(self.body["errorCode"], code, "{}", self.text);
        assert!(self.body["errorMessage"].is_string(), "{}", self.text);
        assert!(
            self.headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/json")),
            "{:?}",
            self.headers
        );
    }

    /// The fields named in `details`.
    pub fn detail_fields(&self) -> Vec<String> {
        self.body["details"]
            .as_array()
            .map(|d| {
                d.iter()
                    .filter_map(|e| e["field"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn operation_id(&self) -> String {
        self.data()["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("no operationId in {}", self.text))
            .to_string()
    }
}

/// A running gateway on a fresh database.
pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    pub db: Database,
    pub gateway: Gateway,
    /// A merchant with every method.
    pub shop: Shop,
    /// A second merchant with every method.
    pub other: Shop,
    handle: ServerHandle,
    _place: Place,
}

fn secret() -> Secret {
    Secret::new(format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    ))
}

impl TestApp {
    async fn spawn(db: Database, place: Place, setup: &Setup) -> TestApp {
        for (flow, priority) in &setup.routes {
            db.add_route(NewRoute {
                direction: Direction::Deposit,
                method: PaymentMethod::Card,
                currency: Currency::RUB,
                min_amount: 1,
                max_amount: 1_000_000_000,
                priority: *priority,
                provider: "sandbox".into(),
                flow: *flow,
                lifetime_secs: None,
            })
            .await
            .expect("add a route");
        }
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
        let address = format!("http://{}", listener.local_addr().expect("address"));
        let provider = SandboxProvider::new(SandboxConfig {
            public_url: address.clone(),
            settle_after: SETTLE,
        });
        let store = Arc::new(db.clone());
        let gateway = Gateway::new(Ports {
            store: store.clone(),
            merchants: store.clone(),
            routes: store,
            provider: Arc::new(provider),
            clock: Arc::new(SystemClock),
            ids: Arc::new(UuidIds),
        });
        let ping = db.clone();
        let readiness = ReadyFn(move || {
            let db = ping.clone();
            async move { db.ping().await }
        });
        let settings = HttpSettings {
            rate_limit_per_sec: setup.rate_limit,
            public_url: address.clone(),
        };
        let state = HttpState::new(gateway.clone(), Arc::new(readiness), settings);
        let server = adapters_http::server(listener, state, |_| {}).expect("server");
        let handle = server.handle();
        tokio::spawn(server);
        let shop = Shop {
            merchant: create_merchant(&db, "shop").await,
        };
        let other = Shop {
            merchant: create_merchant(&db, "other").await,
        };
        TestApp {
            address,
            client: reqwest::Client::new(),
            db,
            gateway,
            shop,
            other,
            handle,
            _place: place,
        }
    }

    /// Sends a request with these headers and body, exactly.
    pub async fn raw(
        &self,
        method: reqwest::Method,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<reqwest::Body>,
    ) -> Answer {
        let mut request = self
            .client
            .request(method, format!("{}{path}", self.address))
            .body(body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.expect("the server answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.expect("a body");
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Answer {
            status,
            headers,
            text,
            body,
        }
    }

    /// A JSON POST by `shop`, signed with `secret`.
    pub async fn post_signed(
        &self,
        shop: &Shop,
        path: &str,
        body: &str,
        secret: &Secret,
    ) -> Answer {
        let signature = sign(secret, body.as_bytes());
        let headers = [
            ("merchant-id", shop.id()),
            ("x-signature", signature.as_str()),
            ("content-type", "application/json"),
        ];
        self.raw(reqwest::Method::POST, path, &headers, body.to_string())
            .await
    }

    /// A JSON POST by `shop` with the right secret for the path.
    pub async fn post_as(&self, shop: &Shop, path: &str, body: &str) -> Answer {
        self.post_signed(shop, path, body, shop.secret_for(path))
            .await
    }

    /// A JSON POST by the main merchant with the right secret.
    pub async fn post(&self, path: &str, body: &str) -> Answer {
        self.post_as(&self.shop, path, body).await
    }

    /// A GET by `shop`, signed over the path and query with the right secret.
    pub async fn get_as(&self, shop: &Shop, path: &str) -> Answer {
        let signature = sign(shop.secret_for(path), path.as_bytes());
        let headers = [
            ("merchant-id", shop.id()),
            ("x-signature", signature.as_str()),
        ];
        self.raw(reqwest::Method::GET, path, &headers, Vec::new())
            .await
    }

    /// A GET by the main merchant.
    pub async fn get(&self, path: &str) -> Answer {
        self.get_as(&self.shop, path).await
    }

    /// Credits the main merchant's RUB balance by hand.
    pub async fn credit(&self, amount: &str) {
        let amount = Amount::parse(amount).expect("an amount");
        self.gateway
            .adjust_balance(self.shop.merchant.id.clone(), Currency::RUB, amount, true)
            .await
            .expect("credited");
    }

    /// The main merchant's RUB balance as the API shows it: (available, held).
    pub async fn balance(&self) -> (String, String) {
        let answer = self.get("/api/v1/balance").await;
        assert_eq!(answer.status, 200, "{}", answer.text);
        let rub = answer.data()["balances"]
            .as_array()
            .and_then(|all| all.iter().find(|b| b["currency"] == "RUB").cloned())
            .unwrap_or_default();
        let field = |name: &str| rub[name].as_str().unwrap_or("0.00").to_string();
        (field("available"), field("held"))
    }
}

async fn create_merchant(db: &Database, name: &str) -> Merchant {
    db.create_merchant(NewMerchant {
        id: None,
        name: name.into(),
        access: full_access(),
        deposit_secret: secret(),
        withdrawal_secret: secret(),
    })
    .await
    .expect("create a merchant")
}

/// A deposit body with the required fields.
pub fn deposit_body(method: &str, amount: &str) -> Value {
    serde_json::json!({"amount": amount, "currency": "RUB", "paymentMethod": method, "userId": "user-1"})
}

/// A card withdrawal body to a test card.
pub fn card_withdrawal(amount: &str, pan: &str) -> Value {
    serde_json::json!({"amount": amount, "currency": "RUB", "paymentMethod": "card", "userId": "user-1",
                       "requisites": {"pan": pan, "cardholderName": "IVAN IVANOV"}})
}

/// An SBP withdrawal body.
pub fn sbp_withdrawal(amount: &str, phone: &str) -> Value {
    serde_json::json!({"amount": amount, "currency": "RUB", "paymentMethod": "sbp", "userId": "user-1",
                       "requisites": {"phone": phone, "accountName": "Ivan Ivanov", "bankName": "Bank A"}})
}
