//! Talking to a running gateway as a merchant would: merchants made with the CLI, signed API
//! requests, and finishing sandbox operations.

use app::application::Application;
use app::cli::ServeArgs;
use app::config::ServeConfig;
use domain::merchant::Secret;
use domain::operation::{Decline, DeclineCode, Outcome};
use domain::signature::sign;
use domain::OperationId;
use serde_json::{json, Value};

use super::db::TestDb;
use super::process::{gateway, GatewayProcess};

/// A merchant as the CLI printed it.
#[derive(Debug, Clone)]
pub struct Merchant {
    pub id: String,
    pub deposit_secret: String,
    pub withdrawal_secret: String,
}

impl Merchant {
    /// `gateway merchant create --name NAME --json`.
    #[track_caller]
    pub fn create(db: &TestDb, name: &str) -> Merchant {
        let out = gateway(db, &["merchant", "create", "--name", name, "--json"]);
        out.expect_code(0);
        let json = out.json();
        let field = |key: &str| {
            json[key]
                .as_str()
                .unwrap_or_else(|| panic!("{key} missing:\n{out}"))
                .to_string()
        };
        Merchant {
            id: field("merchantId"),
            deposit_secret: field("depositSecret"),
            withdrawal_secret: field("withdrawalSecret"),
        }
    }

    /// `gateway balance credit` of `amount` RUB.
    #[track_caller]
    pub fn credit(&self, db: &TestDb, amount: &str) {
        gateway(
            db,
            &[
                "balance",
                "credit",
                "--merchant",
                &self.id,
                "--currency",
                "RUB",
                "--amount",
                amount,
            ],
        )
        .expect_code(0);
    }

    /// The secret that signs requests to `path` (and callbacks about that direction).
    pub fn secret_for(&self, path: &str) -> &str {
        if path.starts_with("/api/v1/withdrawals") || path.starts_with("/api/v1/balance") {
            &self.withdrawal_secret
        } else {
            &self.deposit_secret
        }
    }
}

/// An answer: HTTP status and JSON body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Answer {
    /// `data.operationId`; fails the test unless the answer is 200.
    #[track_caller]
    pub fn operation_id(&self) -> String {
        assert_eq!(self.status, 200, "{}", self.body);
        self.body["data"]["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("no operationId in {}", self.body))
            .to_string()
    }
}

/// A signed API client for one merchant on one gateway.
#[derive(Clone)]
pub struct Api {
    base: String,
    merchant: Merchant,
    client: reqwest::Client,
}

impl Api {
    pub fn new(gateway: &GatewayProcess, merchant: &Merchant) -> Api {
        Api {
            base: gateway.url(""),
            merchant: merchant.clone(),
            client: reqwest::Client::builder()
                .no_proxy()
                .build()
                .expect("an HTTP client"),
        }
    }

    /// POSTs `body` to `path`, signed with the right secret.
    pub async fn post(&self, path: &str, body: &Value) -> Answer {
        let bytes = body.to_string().into_bytes();
        let signature = sign(&Secret::new(self.merchant.secret_for(path)), &bytes);
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("merchant-id", &self.merchant.id)
            .header("x-signature", signature)
            .header("content-type", "application/json")
            .body(bytes);
        answer(request).await
    }

    /// GETs `path`, signed over the path and query.
    pub async fn get(&self, path: &str) -> Answer {
        let signature = sign(
            &Secret::new(self.merchant.secret_for(path)),
            path.as_bytes(),
        );
        let request = self
            .client
            .get(format!("{}{path}", self.base))
            .header("merchant-id", &self.merchant.id)
            .header("x-signature", signature);
        answer(request).await
    }

    /// The RUB balance as `(available, held)`.
    pub async fn balance(&self) -> (String, String) {
        let answer = self.get("/api/v1/balance").await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        let rub = answer.body["data"]["balances"]
            .as_array()
            .and_then(|all| all.iter().find(|b| b["currency"] == "RUB").cloned())
            .unwrap_or_default();
        let field = |name: &str| rub[name].as_str().unwrap_or("0.00").to_string();
        (field("available"), field("held"))
    }
}

async fn answer(request: reqwest::RequestBuilder) -> Answer {
    let response = request.send().await.expect("the gateway answers");
    let status = response.status().as_u16();
    let text = response.text().await.expect("an answer body");
    Answer {
        status,
        body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
    }
}

/// A deposit request body.
pub fn deposit(method: &str, amount: &str, moid: &str, callback: Option<&str>) -> Value {
    let mut body = json!({"amount": amount, "currency": "RUB", "paymentMethod": method,
                          "userId": "user-42", "merchantOperationId": moid});
    if let Some(url) = callback {
        body["callbackUrl"] = json!(url);
    }
    body
}

/// A card payout request body to `pan`.
pub fn card_payout(amount: &str, pan: &str, moid: &str, callback: Option<&str>) -> Value {
    let mut body = json!({"amount": amount, "currency": "RUB", "paymentMethod": "card",
                          "userId": "user-42", "merchantOperationId": moid,
                          "requisites": {"pan": pan, "cardholderName": "IVAN IVANOV"}});
    if let Some(url) = callback {
        body["callbackUrl"] = json!(url);
    }
    body
}

/// Finishes waiting sandbox operations: through `POST /sandbox/operations/{id}/complete` on a
/// running gateway, or through the use case in this process when no gateway runs.
pub struct Sandbox {
    endpoint: Option<String>,
    client: reqwest::Client,
    database_url: String,
    local: Option<Application>,
}

impl Sandbox {
    /// Finishing through `gateway`'s sandbox endpoint (contract section 9).
    pub async fn new(gateway: &GatewayProcess, db: &TestDb) -> Sandbox {
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("an HTTP client");
        // The endpoint answers 405 to GET; an unmounted path would answer 404.
        let probe = client
            .get(gateway.url(&format!(
                "/sandbox/operations/{}/complete",
                uuid::Uuid::new_v4()
            )))
            .send()
            .await
            .expect("the gateway answers");
        assert_eq!(
            probe.status().as_u16(),
            405,
            "POST /sandbox/operations/{{id}}/complete is not mounted"
        );
        Sandbox {
            endpoint: Some(gateway.url("")),
            client,
            database_url: db.url.clone(),
            local: None,
        }
    }

    /// Finishing in this process, through `Gateway::complete` (no gateway need be running).
    pub fn local(db: &TestDb) -> Sandbox {
        Sandbox {
            endpoint: None,
            client: reqwest::Client::new(),
            database_url: db.url.clone(),
            local: None,
        }
    }

    /// Approves (`1`) or declines (`2`, as `ProviderDeclined`) a waiting operation.
    pub async fn complete(&mut self, operation_id: &str, status: u8) {
        if self.endpoint.is_some() {
            let answer = self.post_complete(operation_id, status).await;
            assert_eq!(
                answer.status, 200,
                "complete {operation_id}: {}",
                answer.body
            );
            assert_eq!(answer.body["data"]["status"], status, "{}", answer.body);
            return;
        }
        let outcome = match status {
            1 => Outcome::Approve,
            _ => Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined)),
        };
        let id = OperationId::parse(operation_id).expect("an operation id");
        let done = self
            .app()
            .await
            .gateway()
            .complete(id, outcome)
            .await
            .unwrap_or_else(|e| panic!("complete {operation_id}: {e}"));
        assert_eq!(i64::from(done.status.code()), i64::from(status));
    }

    /// `POST /sandbox/operations/{id}/complete` as is, whatever it answers.
    pub async fn post_complete(&self, operation_id: &str, status: u8) -> Answer {
        let base = self
            .endpoint
            .as_deref()
            .expect("a sandbox on a running gateway");
        answer(
            self.client
                .post(format!("{base}/sandbox/operations/{operation_id}/complete"))
                .header("content-type", "application/json")
                .body(json!({ "status": status }).to_string()),
        )
        .await
    }

    /// The in-process application (built once; its server and workers never run).
    pub async fn app(&mut self) -> &Application {
        if self.local.is_none() {
            let config = serve_config(&self.database_url);
            let app = Application::build(config)
                .await
                .expect("an in-process gateway on the test database");
            self.local = Some(app);
        }
        self.local.as_ref().expect("just built")
    }
}

/// The configuration of an in-process gateway on `database_url`, listening on 127.0.0.1:0.
pub fn serve_config(database_url: &str) -> ServeConfig {
    let args = ServeArgs {
        demo: false,
        bind: "127.0.0.1:0".into(),
        public_url: None,
        callback_allow_private: "true".into(),
        callback_schedule: Some("200ms,200ms,200ms".into()),
        callback_timeout: "10s".into(),
        rate_limit: "0".into(),
        sandbox_settle_ms: "200".into(),
    };
    ServeConfig::from_args(database_url, &args).expect("a valid test configuration")
}
