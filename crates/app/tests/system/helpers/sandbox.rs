//! Finishing waiting sandbox operations, over HTTP or in this process.

use app::application::Application;
use app::cli::ServeArgs;
use app::config::ServeConfig;
use domain::operation::{Decline, DeclineCode, Outcome};
use domain::OperationId;
use serde_json::json;

use super::api::{answer, Answer};
use super::db::TestDb;
use super::process::GatewayProcess;

/// Finishes waiting sandbox operations: through `POST /sandbox/operations/{id}/complete` on a
/// running gateway, or through the use case in this process when no gateway runs.
pub struct Sandbox {
    endpoint: Option<String>,
    client: reqwest::Client,
    database_url: String,
    local: Option<Application>,
}

impl Sandbox {
    /// Finishing through `gateway`'s sandbox endpoint (the sandbox rules of docs/api.md).
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

    /// Finishing in this process, through `Answers::complete` (no gateway need be running).
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
            .answers()
            .complete(id, outcome)
            .await
            .unwrap_or_else(|e| panic!("complete {operation_id}: {e}"));
        assert_eq!(i64::from(done.status().number()), i64::from(status));
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
        database_read_url: None,
        public_url: None,
        callback_allow_private: "true".into(),
        callback_schedule: Some("200ms,200ms,200ms".into()),
        callback_timeout: "10s".into(),
        rate_limit: "0".into(),
        sandbox_settle_ms: "200".into(),
        sandbox: "true".into(),
        reconcile_after: "60s".into(),
        routing_budget: "15s".into(),
        http_workers: None,
        admin: "off".into(),
        console_timezone: "UTC".into(),
    };
    ServeConfig::from_args(database_url, &args).expect("a valid test configuration")
}
