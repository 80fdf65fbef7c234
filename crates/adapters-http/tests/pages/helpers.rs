//! A real gateway for page tests: SQLite in a temp file, the sandbox provider, a clock the
//! test can move, and request helpers over an in-process actix app.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header::{self, HeaderMap};
use actix_web::{test, App};
use adapters_db::Database;
use adapters_http::{AlwaysReady, HttpSettings, HttpState};
use adapters_sandbox::{SandboxConfig, SandboxProvider};
use domain::merchant::{full_access, Merchant, Secret};
use domain::operation::{DeclineCode, Operation};
use domain::operator::{ManualAdjustment, ManualMove, NewMerchant, Operator};
use domain::ports::{CallbackOutbox, Clock};
use domain::request::{NewDeposit, NewWithdrawal, RawRequest};
use domain::service::{Checkout, Gateway};
use domain::testkit::RandomIds;
pub use domain::testkit::TestClock;
use domain::{Amount, Currency, KeptObject, OperationId, Status};
use serde_json::Value;
use tempfile::TempDir;

#[path = "../common/gateway.rs"]
mod common_gateway;
use common_gateway::gateway_on;

pub const SUCCESS_URL: &str = "https://shop.example/success?order=7";
pub const FAIL_URL: &str = "https://shop.example/fail?order=7";

/// What a page request answered.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl Answer {
    pub fn location(&self) -> Option<&str> {
        self.headers
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
    }

    pub fn header(&self, name: header::HeaderName) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    pub fn is_html(&self) -> bool {
        self.header(header::CONTENT_TYPE).starts_with("text/html")
            && self.body.starts_with("<!DOCTYPE html>")
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

/// Which merchant URLs a test deposit carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Urls {
    SuccessAndFail,
    None,
}

/// A gateway on a fresh database, with one merchant.
pub struct TestApp {
    pub db: Database,
    pub gateway: Gateway,
    pub checkout: Checkout,
    pub merchant: Merchant,
    pub clock: Arc<TestClock>,
    _dir: TempDir,
}

impl TestApp {
    pub async fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("gateway.db").display());
        let db = Database::connect(&url).expect("database");
        db.migrate().expect("migrations");
        let provider = Arc::new(SandboxProvider::new(SandboxConfig {
            public_url: "http://gateway.test".into(),
            settle_after: Duration::from_millis(10),
        }));
        let clock = Arc::new(TestClock::starting_now());
        let gateway = gateway_on(&db, provider.clone(), clock.clone());
        let checkout = Checkout::new(gateway.steps(), provider);
        let store = Arc::new(db.clone());
        let merchant = Operator::new(store.clone(), store, clock.clone(), Arc::new(RandomIds))
            .create_merchant(NewMerchant {
                id: None,
                name: "shop".into(),
                access: full_access(),
                deposit_secret: Secret::new("11".repeat(32)),
                withdrawal_secret: Secret::new("22".repeat(32)),
                require_timestamp: false,
                require_signature_v2: false,
            })
            .await
            .expect("merchant");
        Self {
            db,
            gateway,
            checkout,
            merchant,
            clock,
            _dir: dir,
        }
    }

    /// A new gateway with one waiting deposit of `amount` RUB by `method`.
    pub async fn with_deposit(method: &str, amount: &str, urls: Urls) -> (Self, Operation) {
        let app = Self::new().await;
        let op = app.deposit(method, amount, urls).await;
        (app, op)
    }

    /// A waiting deposit of `amount` RUB by `method`.
    pub async fn deposit(&self, method: &str, amount: &str, urls: Urls) -> Operation {
        let (success, fail) = match urls {
            Urls::SuccessAndFail => (Some(SUCCESS_URL), Some(FAIL_URL)),
            Urls::None => (None, None),
        };
        self.deposit_to(method, amount, success, fail).await
    }

    /// A waiting deposit with these `successUrl` and `failUrl`.
    pub async fn deposit_to(
        &self,
        method: &str,
        amount: &str,
        success: Option<&str>,
        fail: Option<&str>,
    ) -> Operation {
        let raw = RawRequest {
            amount: Some(amount),
            currency: Some("RUB"),
            payment_method: Some(method),
            user_id: Some("user-1"),
            callback_url: Some("https://shop.example/callback"),
            success_url: success,
            fail_url: fail,
            ..RawRequest::default()
        };
        let request = NewDeposit::parse(&raw).expect("a valid deposit");
        let created = self
            .gateway
            .creation()
            .create_deposit(&self.merchant, request, b"{}")
            .await
            .expect("created");
        assert_eq!(created.operation.status(), Status::Processing);
        created.operation
    }

    /// A processing card payout of `amount` RUB (the balance is credited first).
    pub async fn payout(&self, amount: &str) -> Operation {
        let value = Amount::parse(amount, domain::Currency::RUB).expect("amount");
        Operator::new(
            Arc::new(self.db.clone()),
            Arc::new(self.db.clone()),
            self.clock.clone(),
            Arc::new(RandomIds),
        )
        .adjust_balance(
            &ManualAdjustment {
                merchant: self.merchant.id.clone(),
                currency: Currency::RUB,
                amount: value,
                kind: ManualMove::Credit,
                operation: None,
            },
            &domain::testkit::note(),
        )
        .await
        .expect("credited");
        let requisites = KeptObject::new()
            .with("pan", "4242424242424242")
            .with("cardholderName", "IVAN IVANOV");
        let raw = RawRequest {
            amount: Some(amount),
            currency: Some("RUB"),
            payment_method: Some("card"),
            user_id: Some("user-1"),
            requisites: Some(&requisites),
            ..RawRequest::default()
        };
        let request = NewWithdrawal::parse(&raw).expect("a valid withdrawal");
        self.gateway
            .creation()
            .create_withdrawal(&self.merchant, request, b"{}")
            .await
            .expect("created")
            .operation
    }

    pub async fn operation(&self, id: OperationId) -> Operation {
        self.gateway.reads().operation(id).await.expect("stored")
    }

    /// (available, held) of the merchant's RUB balance, in kopecks.
    pub async fn balance(&self) -> (i64, i64) {
        let balances = self
            .gateway
            .reads()
            .balances(&self.merchant.id)
            .await
            .expect("balances");
        balances
            .iter()
            .find(|b| b.currency == Currency::RUB)
            .map_or((0, 0), |b| (b.available, b.held))
    }

    /// Asserts the merchant's RUB balance, (available, held) in kopecks, and that a callback
    /// is queued for `id`.
    pub async fn assert_balance_and_callback(&self, id: OperationId, balance: (i64, i64)) {
        assert_eq!(self.balance().await, balance);
        assert!(self.callback_queued(id).await);
    }

    /// Whether a callback is queued for the operation.
    pub async fn callback_queued(&self, id: OperationId) -> bool {
        CallbackOutbox::list(&self.db, None, 1000)
            .await
            .expect("callbacks")
            .iter()
            .any(|c| c.operation_id == id)
    }

    /// A card expiry two years ahead of the gateway clock, as MM/YY.
    pub fn future_expiry(&self) -> String {
        let (year, _) = self.clock.now().year_month();
        format!("12/{:02}", (year + 2) % 100)
    }

    async fn call(&self, request: test::TestRequest) -> Answer {
        let app = test::init_service(App::new().configure(adapters_http::pages::mount(
            Some(self.checkout.clone()),
            self.gateway.clone(),
        )))
        .await;
        let response = test::call_service(&app, request.to_request()).await;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = test::read_body(response).await;
        Answer {
            status,
            headers,
            body: String::from_utf8(bytes.to_vec()).expect("UTF-8 body"),
        }
    }

    pub async fn get(&self, path: &str) -> Answer {
        self.call(test::TestRequest::get().uri(path)).await
    }

    pub async fn get_in(&self, path: &str, accept_language: &str) -> Answer {
        self.call(
            test::TestRequest::get()
                .uri(path)
                .insert_header((header::ACCEPT_LANGUAGE, accept_language)),
        )
        .await
    }

    pub async fn post_form(&self, path: &str, form: &[(&str, &str)]) -> Answer {
        self.call(test::TestRequest::post().uri(path).set_form(form))
            .await
    }

    pub async fn post_form_in(
        &self,
        path: &str,
        form: &[(&str, &str)],
        accept_language: &str,
    ) -> Answer {
        self.call(
            test::TestRequest::post()
                .uri(path)
                .insert_header((header::ACCEPT_LANGUAGE, accept_language))
                .set_form(form),
        )
        .await
    }

    pub async fn post_raw(&self, path: &str, content_type: &str, body: &str) -> Answer {
        self.call(
            test::TestRequest::post()
                .uri(path)
                .insert_header((header::CONTENT_TYPE, content_type))
                .set_payload(body.to_string()),
        )
        .await
    }

    /// `POST /sandbox/operations/{id}/complete` with this JSON `body`.
    pub async fn complete(&self, id: impl std::fmt::Display, body: &str) -> Answer {
        self.post_raw(&complete_path(id), "application/json", body)
            .await
    }

    /// Posts the bank's decision (`approve` = `"true"` or `"false"`) on the deposit `id`.
    pub async fn decide(&self, id: OperationId, approve: &str) -> Answer {
        let path = format!("/pay/{id}/decision");
        self.post_form(&path, &[("approve", approve)]).await
    }

    /// Posts the card form of deposit `id` with these fields.
    pub async fn post_card(&self, id: OperationId, pan: &str, expiry: &str, cvc: &str) -> Answer {
        let path = format!("/pay/{id}/card");
        self.post_form(&path, &card_fields(pan, expiry, cvc)).await
    }

    /// Pays the card deposit `id` on its form.
    pub async fn pay(&self, id: OperationId, pan: &str) -> Answer {
        self.post_card(id, pan, &self.future_expiry(), "123").await
    }
}

/// The fields of the card form.
pub fn card_fields<'a>(
    pan: &'a str,
    expiry: &'a str,
    cvc: &'a str,
) -> [(&'static str, &'a str); 3] {
    [("pan", pan), ("expiry", expiry), ("cvc", cvc)]
}

/// Serves the pages of `app` behind the API's real server and its edge middleware on
/// `127.0.0.1:0`; returns its base URL.
pub fn serve(app: &TestApp) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = listener.local_addr().expect("bound").port();
    let state = HttpState::new(
        app.gateway.clone(),
        Arc::new(AlwaysReady),
        HttpSettings::default(),
    );
    let pages = adapters_http::pages::mount(Some(app.checkout.clone()), app.gateway.clone());
    let server = adapters_http::server(listener, state, None, pages).expect("server");
    actix_web::rt::spawn(server);
    format!("http://127.0.0.1:{port}")
}

/// The sandbox's completion endpoint of operation `id`.
pub fn complete_path(id: impl std::fmt::Display) -> String {
    format!("/sandbox/operations/{id}/complete")
}

/// Asserts a `303 See Other` to `location`.
#[track_caller]
pub fn assert_see_other(answer: &Answer, location: &str) {
    assert_eq!(answer.status, 303);
    assert_eq!(answer.location(), Some(location));
}

/// The decline code of a declined operation.
pub fn decline_code(op: &Operation) -> Option<DeclineCode> {
    op.decline().map(|d| d.code)
}
