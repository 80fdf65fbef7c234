//! The running gateway of one test, its merchants, and request helpers that sign like a
//! merchant would.

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::ServerHandle;
use adapters_db::Database;
use adapters_http::{HttpSettings, HttpState, ReadyFn};
use adapters_sandbox::{SandboxConfig, SandboxProvider};
use domain::merchant::{full_access, Merchant, Secret};
use domain::operator::{ManualAdjustment, ManualMove, NewMerchant, NewProvider, Operator};
use domain::ports::Clock;
use domain::provider::Credentials;
use domain::route::{Flow, NewRoute};
use domain::service::{Checkout, Gateway};
use domain::signature::sign;
use domain::testkit::{RandomIds, WallClock};
use domain::{Amount, Currency, Direction, PaymentMethod};
use serde_json::Value;

use testkit::signing::{now_secs, scheme_for, signature_headers, Scheme};
use testkit::FreshDatabase;

use super::backend::{Setup, OTHER_PROVIDER, SETTLE};
use super::gateway::gateway_on;
use super::Answer;

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
        self.merchant.signing_secret(Direction::Deposit)
    }

    pub fn withdrawal_secret(&self) -> &Secret {
        self.merchant.signing_secret(Direction::Withdrawal)
    }

    /// The secret for `path`: withdrawal for `/withdrawals`, `/balance` and the callbacks of
    /// `direction=withdrawal`, else deposit.
    pub fn secret_for(&self, path: &str) -> &Secret {
        let callbacks_of_payouts =
            path.starts_with("/api/v1/callbacks") && path.contains("direction=withdrawal");
        if path.starts_with("/api/v1/withdrawals")
            || path.starts_with("/api/v1/balance")
            || callbacks_of_payouts
        {
            self.withdrawal_secret()
        } else {
            self.deposit_secret()
        }
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
    pub(super) handle: ServerHandle,
    /// The database itself, for raw SQL; dropped (PostgreSQL: deleted) after the server.
    pub database: FreshDatabase,
    /// The clock of the gateway and the operator ([`Setup::clock`], else the wall clock).
    pub clock: Arc<dyn Clock>,
}

fn secret() -> Secret {
    Secret::new(format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    ))
}

impl TestApp {
    pub(super) async fn spawn(db: Database, database: FreshDatabase, setup: &Setup) -> TestApp {
        let clock: Arc<dyn Clock> = match &setup.clock {
            Some(clock) => clock.clone(),
            None => Arc::new(WallClock),
        };
        let ops = operator_on(&db, clock.clone());
        for (flow, priority) in &setup.routes {
            ops.add_route(NewRoute {
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
        if setup.other_provider {
            ops.add_provider(NewProvider {
                name: OTHER_PROVIDER.into(),
                protocol: domain::provider::ProtocolName::from_stored("acquirer".into()),
                url: "http://127.0.0.1:9".into(),
                allow_insecure: false,
                timeout: std::time::Duration::from_secs(5),
                credentials: Credentials::new("key", "secret").expect("credentials"),
            })
            .await
            .expect("add another provider");
            for (direction, flow) in [
                (Direction::Deposit, Flow::Redirect),
                (Direction::Withdrawal, Flow::Payout),
            ] {
                ops.add_route(NewRoute {
                    direction,
                    method: PaymentMethod::Sbp,
                    currency: Currency::RUB,
                    min_amount: 1,
                    max_amount: 1_000_000_000,
                    priority: 1_000,
                    provider: OTHER_PROVIDER.into(),
                    flow,
                    lifetime_secs: None,
                })
                .await
                .expect("add a route of another provider");
            }
        }
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
        let address = format!("http://{}", listener.local_addr().expect("address"));
        let provider = Arc::new(SandboxProvider::new(SandboxConfig {
            public_url: address.clone(),
            settle_after: setup.settle.unwrap_or(SETTLE),
        }));
        let gateway = gateway_on(&db, provider.clone(), clock.clone());
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
        let pages = setup.pages.then(|| {
            adapters_http::pages::mount(
                Some(Checkout::new(gateway.steps(), provider)),
                gateway.clone(),
            )
        });
        let extra = move |cfg: &mut actix_web::web::ServiceConfig| {
            if let Some(mount) = &pages {
                mount(cfg);
            }
        };
        let server = adapters_http::server(listener, state, None, extra).expect("server");
        let handle = server.handle();
        tokio::spawn(server);
        let shop = Shop {
            merchant: create_merchant(&ops, "shop", false).await,
        };
        let other = Shop {
            merchant: create_merchant(&ops, "other", false).await,
        };
        TestApp {
            address,
            client: reqwest::Client::new(),
            db,
            gateway,
            shop,
            other,
            handle,
            database,
            clock,
        }
    }

    /// A new merchant with every method; `require_timestamp` makes `x-timestamp` mandatory.
    pub async fn new_shop(&self, name: &str, require_timestamp: bool) -> Shop {
        Shop {
            merchant: create_merchant(&self.operator(), name, require_timestamp).await,
        }
    }

    /// A JSON POST by `shop` carrying `x-timestamp: {stamp}`, signed with `secret` over
    /// `"{stamp}.{body}"`.
    pub async fn post_stamped(
        &self,
        shop: &Shop,
        path: &str,
        body: &str,
        secret: &Secret,
        stamp: &str,
    ) -> Answer {
        let signature = sign(secret, format!("{stamp}.{body}").as_bytes());
        let headers = signed_headers(shop, &signature, "application/json");
        let mut headers = headers.to_vec();
        headers.push(("x-timestamp", stamp));
        self.raw(reqwest::Method::POST, path, &headers, body.to_string())
            .await
    }

    /// A GET by `shop` carrying `x-timestamp: {stamp}`, signed with the right secret over
    /// `"{stamp}.{path}"`.
    pub async fn get_stamped(&self, shop: &Shop, path: &str, stamp: &str) -> Answer {
        let signature = sign(shop.secret_for(path), format!("{stamp}.{path}").as_bytes());
        let headers = [
            ("merchant-id", shop.id()),
            ("x-signature", signature.as_str()),
            ("x-timestamp", stamp),
        ];
        self.raw(reqwest::Method::GET, path, &headers, Vec::new())
            .await
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

    /// A JSON POST by `shop`, signed with `secret`: version 1 where the path allows it,
    /// version 2 where it requires it (a POST naming an operation).
    pub async fn post_signed(
        &self,
        shop: &Shop,
        path: &str,
        body: &str,
        secret: &Secret,
    ) -> Answer {
        let scheme = scheme_for(Scheme::V1, "POST", path);
        self.post_scheme(shop, path, body, secret, scheme).await
    }

    /// A JSON POST by `shop`, signed with `secret` under `scheme`, whatever the path requires.
    pub async fn post_scheme(
        &self,
        shop: &Shop,
        path: &str,
        body: &str,
        secret: &Secret,
        scheme: Scheme,
    ) -> Answer {
        let signed = signature_headers(
            secret.expose(),
            scheme,
            "POST",
            path,
            body.as_bytes(),
            now_secs(),
        );
        let mut headers = vec![
            ("merchant-id", shop.id()),
            ("content-type", "application/json"),
        ];
        headers.extend(signed.iter().map(|(name, value)| (*name, value.as_str())));
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

    /// Reads the deposit `id`.
    pub async fn deposit_read(&self, id: &str) -> Answer {
        self.get(&format!("/api/v1/deposits/{id}")).await
    }

    /// A GET of `path` by the main merchant is answered 404 `NotFound`.
    pub async fn assert_not_found(&self, path: &str) {
        self.get(path).await.assert_error(404, "NotFound");
    }

    /// A deposit of `body` is refused with `status` and `code`.
    pub async fn assert_deposit_refused(&self, body: &Value, status: u16, code: &str) {
        self.deposit(body).await.assert_error(status, code);
    }

    /// A withdrawal of `body` is refused with `status` and `code`.
    pub async fn assert_withdrawal_refused(&self, body: &Value, status: u16, code: &str) {
        self.withdraw(body).await.assert_error(status, code);
    }

    /// The id of a new deposit of `amount` by `method`.
    pub async fn deposit_id(&self, method: &str, amount: &str) -> String {
        let body = super::deposit_body(method, amount);
        self.deposit(&body).await.operation_id()
    }

    /// A deposit of `body` by the main merchant.
    pub async fn deposit(&self, body: &Value) -> Answer {
        self.post("/api/v1/deposits", &body.to_string()).await
    }

    /// A withdrawal of `body` by the main merchant.
    pub async fn withdraw(&self, body: &Value) -> Answer {
        self.post("/api/v1/withdrawals", &body.to_string()).await
    }

    /// The operator's use cases over this gateway's database, on the gateway's clock.
    pub fn operator(&self) -> Operator {
        operator_on(&self.db, self.clock.clone())
    }

    /// Credits the main merchant's RUB balance by hand.
    pub async fn credit(&self, amount: &str) {
        self.credit_in(Currency::RUB, amount).await
    }

    /// Credits the main merchant's balance in `currency` by hand (`amount` in its form).
    pub async fn credit_in(&self, currency: Currency, amount: &str) {
        let amount = Amount::parse(amount, currency).expect("an amount");
        self.operator()
            .adjust_balance(
                &ManualAdjustment {
                    merchant: self.shop.merchant.id.clone(),
                    currency,
                    amount,
                    kind: ManualMove::Credit,
                    operation: None,
                },
                &domain::testkit::note(),
            )
            .await
            .expect("credited");
    }

    /// Settles every sandbox payout once its time has come (after three settle times).
    pub async fn settle_payouts(&self) {
        tokio::time::sleep(SETTLE * 3).await;
        self.gateway
            .answers()
            .settle_due_payouts()
            .await
            .expect("settled");
    }

    /// Settles every sandbox refund once its time has come (after three settle times), as
    /// the process `owner`.
    pub async fn settle_refunds(&self, owner: &str) {
        tokio::time::sleep(SETTLE * 3).await;
        self.gateway
            .answers()
            .settle_refunds(owner)
            .await
            .expect("settled");
    }

    /// The main merchant's RUB balance as the API shows it: (available, held).
    pub async fn balance(&self) -> (String, String) {
        let answer = self.get("/api/v1/balance").await;
        answer.assert_ok();
        let rub = answer.data()["balances"]
            .as_array()
            .and_then(|all| all.iter().find(|b| b["currency"] == "RUB").cloned())
            .unwrap_or_default();
        let field = |name: &str| rub[name].as_str().unwrap_or("0.00").to_string();
        (field("available"), field("held"))
    }

    /// Asserts the main merchant's RUB balance as the API shows it.
    pub async fn assert_balance(&self, available: &str, held: &str) {
        assert_eq!(
            self.balance().await,
            (available.to_string(), held.to_string())
        );
    }
}

/// The headers of a POST by `shop` with this `signature` and `content-type`.
pub fn signed_headers<'a>(
    shop: &'a Shop,
    signature: &'a str,
    content_type: &'a str,
) -> [(&'static str, &'a str); 3] {
    [
        ("merchant-id", shop.id()),
        ("x-signature", signature),
        ("content-type", content_type),
    ]
}

/// The operator's use cases over `db` (merchants, routes) on `clock`.
fn operator_on(db: &Database, clock: Arc<dyn Clock>) -> Operator {
    Operator::new(
        Arc::new(db.clone()),
        Arc::new(db.clone()),
        clock,
        Arc::new(RandomIds),
    )
}

async fn create_merchant(ops: &Operator, name: &str, require_timestamp: bool) -> Merchant {
    ops.create_merchant(NewMerchant {
        id: None,
        name: name.into(),
        access: full_access(),
        deposit_secret: secret(),
        withdrawal_secret: secret(),
        require_timestamp,
        require_signature_v2: false,
    })
    .await
    .expect("create a merchant")
}
