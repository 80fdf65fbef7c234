//! Talking to a running gateway as a merchant would: merchants made with the CLI and signed
//! API requests.

use serde_json::{json, Value};
use testkit::signing::{now_secs, scheme_for, signature_headers, Scheme};

use super::cli::{gateway, gateway_line};
use super::db::TestDb;
use super::process::GatewayProcess;

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
        let line = format!(
            "balance credit --merchant {} --currency RUB --amount {amount}",
            self.id
        );
        gateway_line(db, &line).expect_code(0);
    }

    /// `gateway tariff set` of the merchant's card tariff in RUB for `direction`, with
    /// `terms` (`--percent 1 --min 5.00`, ...).
    #[track_caller]
    pub fn set_card_tariff(&self, db: &TestDb, direction: &str, terms: &str) {
        let line = format!(
            "tariff set --merchant {} --direction {direction} --method card --currency RUB {terms}",
            self.id
        );
        gateway_line(db, &line).expect_code(0);
    }

    /// A new merchant ([`Merchant::create`]) credited with `amount` RUB.
    #[track_caller]
    pub fn funded(db: &TestDb, name: &str, amount: &str) -> Merchant {
        let shop = Merchant::create(db, name);
        shop.credit(db, amount);
        shop
    }

    /// The secret that signs requests to `path` (and callbacks about that direction); under
    /// `/api/v1/callbacks`, the one its `direction` names.
    pub fn secret_for(&self, path: &str) -> &str {
        let callbacks_of_payouts =
            path.starts_with("/api/v1/callbacks") && path.contains("direction=withdrawal");
        if path.starts_with("/api/v1/withdrawals")
            || path.starts_with("/api/v1/balance")
            || callbacks_of_payouts
        {
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
    /// How requests are signed where the path allows a choice (version 2 where it does not).
    scheme: Scheme,
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
            scheme: Scheme::V1,
        }
    }

    /// The same client, sending and signing `x-timestamp` with every request.
    pub fn stamped(&self) -> Api {
        self.signing(Scheme::V1Stamped)
    }

    /// The same client, signing with `scheme` wherever the path allows it (version 2 where
    /// only that is accepted).
    pub fn signing(&self, scheme: Scheme) -> Api {
        Api {
            scheme,
            ..self.clone()
        }
    }

    /// `request` with the merchant's id and the signature of `method`, `path` and `body`.
    fn signed(
        &self,
        request: reqwest::RequestBuilder,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> reqwest::RequestBuilder {
        let scheme = scheme_for(self.scheme, method, path);
        let secret = self.merchant.secret_for(path);
        signature_headers(secret, scheme, method, path, body, now_secs())
            .into_iter()
            .fold(
                request.header("merchant-id", &self.merchant.id),
                |r, (name, value)| r.header(name, value),
            )
    }

    /// The signature headers this client's merchant makes for `method`, `path` and `body`
    /// under `scheme` (whatever the path requires), with the right secret, stamped now.
    pub fn signature(
        &self,
        scheme: Scheme,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> Vec<(&'static str, String)> {
        let secret = self.merchant.secret_for(path);
        signature_headers(secret, scheme, method, path, body, now_secs())
    }

    /// POSTs `body` to `path` with the merchant's id and exactly these signature headers:
    /// for replaying a captured signature elsewhere.
    pub async fn post_raw(
        &self,
        path: &str,
        body: &Value,
        headers: &[(&'static str, String)],
    ) -> Answer {
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("merchant-id", &self.merchant.id)
            .header("content-type", "application/json")
            .body(body.to_string());
        let request = headers
            .iter()
            .fold(request, |r, (name, value)| r.header(*name, value));
        answer(request).await
    }

    /// A POST of `bytes` to `path`, signed with the right secret.
    fn post_request(&self, path: &str, bytes: Vec<u8>) -> reqwest::RequestBuilder {
        let request = self.client.post(format!("{}{path}", self.base));
        self.signed(request, "POST", path, &bytes)
            .header("content-type", "application/json")
            .body(bytes)
    }

    /// POSTs `body` to `path`, signed with the right secret.
    pub async fn post(&self, path: &str, body: &Value) -> Answer {
        answer(self.post_request(path, body.to_string().into_bytes())).await
    }

    /// POSTs the deposit request `body`.
    pub async fn create_deposit(&self, body: &Value) -> Answer {
        self.post("/api/v1/deposits", body).await
    }

    /// POSTs the withdrawal request `body`.
    pub async fn create_withdrawal(&self, body: &Value) -> Answer {
        self.post("/api/v1/withdrawals", body).await
    }

    /// As [`Api::post`], but a request that got no answer at all (the gateway died, the
    /// connection broke) is `None` instead of a failed test: for tests that crash gateways.
    pub async fn try_post(&self, path: &str, body: &Value) -> Option<(u16, Value)> {
        let response = self
            .post_request(path, body.to_string().into_bytes())
            .send()
            .await
            .ok()?;
        let status = response.status().as_u16();
        let text = response.text().await.ok()?;
        Some((
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        ))
    }

    /// GETs `path`, signed over the path and query.
    pub async fn get(&self, path: &str) -> Answer {
        let request = self.client.get(format!("{}{path}", self.base));
        answer(self.signed(request, "GET", path, b"")).await
    }

    /// Waits until the operation at `path` (`/api/v1/deposits/{id}` or
    /// `/api/v1/withdrawals/{id}`) is final, polling, for up to `deadline`; its data. The
    /// failure message shows the last answer and `gateway`'s log.
    pub async fn final_state(
        &self,
        path: &str,
        deadline: std::time::Duration,
        gateway: &super::GatewayProcess,
    ) -> Value {
        let until = std::time::Instant::now() + deadline;
        loop {
            let answer = self.get(path).await;
            if answer.status == 200 && answer.body["data"]["status"] != 3 {
                return answer.body["data"].clone();
            }
            assert!(
                std::time::Instant::now() < until,
                "{path} not final within {deadline:?}: {}\n{}",
                answer.body,
                gateway.log_text()
            );
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }

    /// Waits up to `deadline` (for `what`) until the balance is answered with `status`.
    pub async fn wait_for_balance_status(
        &self,
        what: &str,
        deadline: std::time::Duration,
        status: u16,
    ) {
        testkit::wait_until(what, deadline, || {
            let api = self.clone();
            async move {
                let answered = api.get("/api/v1/balance").await.status;
                (answered == status, format!("balance answered {answered}"))
            }
        })
        .await;
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

pub(super) async fn answer(request: reqwest::RequestBuilder) -> Answer {
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
