//! Shared pieces of the system tests: databases, gateway processes, a callback receiver and
//! a merchant's API client.

pub mod api;
pub mod cli;
pub mod console;
pub mod db;
pub mod process;
pub mod python;
pub mod sandbox;
pub mod sim;

use std::time::Duration;

use domain::merchant::Secret;
use domain::signature::verify;

pub use api::{card_payout, deposit, Api, Merchant};
pub use cli::{gateway, gateway_line};
pub use db::{Backend, TestDb};
pub use process::{GatewayProcess, Serve};
pub use sandbox::Sandbox;
pub use testkit::{wait_until, CallbackReceiver, Captured};

/// How long a test waits for what the gateway does in the background. Generous: a loaded
/// 2-core machine may be slow, never this slow.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// Two tests of one scenario, `$run(db)`: `$sqlite` on a fresh SQLite file, `$postgres` on a
/// fresh PostgreSQL database when `GATEWAY_TEST_DATABASE_URL` names a server (see
/// `TestDb::on`). `async` for a Tokio test of an `async fn $run(TestDb)`, else a plain test of
/// a `fn $run(&TestDb)`. (A macro: a function cannot declare tests.)
macro_rules! on_sqlite_and_postgres {
    (async $run:ident: $sqlite:ident, $postgres:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $sqlite() {
            $run($crate::helpers::TestDb::sqlite()).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $postgres() {
            if let Some(db) = $crate::helpers::TestDb::on($crate::helpers::Backend::Postgres) {
                $run(db).await;
            }
        }
    };
    ($run:ident: $sqlite:ident, $postgres:ident) => {
        #[test]
        fn $sqlite() {
            $run(&$crate::helpers::TestDb::sqlite());
        }

        #[test]
        fn $postgres() {
            if let Some(db) = $crate::helpers::TestDb::on($crate::helpers::Backend::Postgres) {
                $run(&db);
            }
        }
    };
}
pub(crate) use on_sqlite_and_postgres;

/// Checks one callback against the callback rules of docs/api.md: headers, a signature made with the secret
/// of its direction (and not with the other one), and the body's fields.
#[track_caller]
pub fn assert_signed_callback(c: &Captured, merchant: &Merchant) {
    let json = c.json();
    let data = &json["data"];
    let kind = data["type"].as_str().unwrap_or("");
    let (right, wrong) = match kind {
        "deposit" => (&merchant.deposit_secret, &merchant.withdrawal_secret),
        "withdrawal" => (&merchant.withdrawal_secret, &merchant.deposit_secret),
        other => panic!("callback type {other:?} in {json}"),
    };
    assert_eq!(c.header("merchant-id"), merchant.id, "{:?}", c.headers);
    assert!(
        c.header("content-type").starts_with("application/json"),
        "{:?}",
        c.headers
    );
    assert!(c.attempt() >= 1, "x-callback-attempt: {:?}", c.headers);
    let signature = c.header("x-signature");
    if let Err(unfit) = c.signed_with(right) {
        panic!("the {kind} callback is not signed with the {kind} secret: {unfit}: {json}");
    }
    assert!(
        !verify(&Secret::new(wrong.as_str()), &c.body, signature),
        "the {kind} callback verifies under the other secret"
    );
    let object = json.as_object().expect("a JSON object");
    assert_eq!(object.len(), 1, "only `data` at the top: {json}");
    for key in [
        "operationId",
        "type",
        "paymentMethod",
        "userId",
        "amount",
        "currency",
        "updatedAt",
    ] {
        assert!(data[key].is_string(), "{key} missing in {json}");
    }
    let status = data["status"].as_i64().expect("a numeric status");
    assert!(status == 1 || status == 2, "a final status: {json}");
    let declined = status == 2;
    assert_eq!(data["errorCode"].is_string(), declined, "{json}");
    assert_eq!(data["errorMessage"].is_string(), declined, "{json}");
    let updated = data["updatedAt"].as_str().unwrap_or("");
    assert!(
        updated.ends_with('Z') && updated.contains('T'),
        "updatedAt is RFC 3339 UTC: {updated}"
    );
}
