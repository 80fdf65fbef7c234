//! A real gateway per test: a fresh database (a temp SQLite file, or a fresh PostgreSQL
//! database when `GATEWAY_TEST_DATABASE_URL` is set), the sandbox provider, the HTTP server on
//! `127.0.0.1:0`, and request helpers that sign like a merchant would.

mod answer;
mod app;
mod backend;
#[path = "../../common/gateway.rs"]
mod gateway;

pub use answer::Answer;
pub use app::{signed_headers, Shop, TestApp};
pub use backend::{each_backend, Setup, OTHER_PROVIDER};
use reqwest::Method;
use serde_json::Value;

/// Requests that match no route of the API: each answers 404 before authentication.
pub const UNKNOWN_PATHS: [(Method, &str); 4] = [
    (Method::GET, "/"),
    (Method::POST, "/api/v1/payments"),
    (Method::GET, "/api/v1/deposits/"),
    (Method::GET, "/api/v2/balance"),
];

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

/// A card deposit of `amount` with `merchant_operation_id`.
pub fn card_deposit(amount: &str, merchant_operation_id: &str) -> Value {
    let mut body = deposit_body("card", amount);
    body["merchantOperationId"] = merchant_operation_id.into();
    body
}

/// A card withdrawal to the test card `4242424242424242` with this `merchantOperationId`, as
/// the JSON text to sign.
pub fn card_withdrawal_text(amount: &str, merchant_operation_id: &str) -> String {
    let mut body = card_withdrawal(amount, "4242424242424242");
    body["merchantOperationId"] = merchant_operation_id.into();
    body.to_string()
}
