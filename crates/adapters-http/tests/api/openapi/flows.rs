//! The card flows a route can give a deposit (input fields, confirmation, instruction,
//! requisites) with their steps, and the sandbox's completion endpoint.

use reqwest::Method;
use serde_json::{json, Value};

use super::operations::{ok, DEPOSITS};
use super::Checked;
use crate::helpers::{deposit_body, Answer};

const JSON: (&str, &str) = ("content-type", "application/json");

/// Asserts that the `step` (`input`, `confirm`) of an unknown deposit is 404.
async fn unknown_is_404(api: &Checked<'_>, step: &str, body: &Value) {
    let unknown = format!("{DEPOSITS}/{}/{step}", uuid::Uuid::new_v4());
    api.post(&unknown, body).await.assert_error(404, "NotFound");
}

/// The input-fields flow: the fields, refusals, the approving step, and steps out of turn.
pub async fn input_fields(api: &Checked<'_>) {
    let created = api.post(DEPOSITS, &deposit_body("card", "10.00")).await;
    assert!(ok(&created)["inputFields"].is_array());
    let id = created.operation_id();
    ok(&api.get(&format!("{DEPOSITS}/{id}")).await);
    let path = format!("{DEPOSITS}/{id}/input");
    api.refused_by_both(&path, json!({"values": {}})).await;
    api.refused_by_both(&path, json!({"fields": {"payerName": 1}}))
        .await;
    let bad = api
        .post(
            &path,
            &json!({"fields": {"payerName": "Ivan", "bank": "nope"}}),
        )
        .await;
    assert_eq!(bad.detail_fields(), vec!["fields.bank"]);
    let confirm = format!("{DEPOSITS}/{id}/confirm");
    let code = json!({"code": "123456"});
    api.post(&confirm, &code)
        .await
        .assert_error(409, "InvalidState");
    let good = json!({"fields": {"payerName": "Ivan Ivanov", "bank": "bank_a"}});
    let done = api.post(&path, &good).await;
    assert_eq!(ok(&done)["status"], 1);
    api.post(&path, &good)
        .await
        .assert_error(409, "InvalidState");
    unknown_is_404(api, "input", &good).await;
}

/// The confirmation flow: wrong codes, the decline after three, the approving code.
pub async fn confirmation(api: &Checked<'_>) {
    let created = api.post(DEPOSITS, &deposit_body("card", "10.00")).await;
    assert_eq!(ok(&created)["confirmRequired"], true);
    let path = format!("{DEPOSITS}/{}/confirm", created.operation_id());
    let wrong = json!({"code": "000000"});
    for _ in 0..2 {
        api.post(&path, &wrong)
            .await
            .assert_error(422, "InvalidCode");
    }
    let last = api.post(&path, &wrong).await;
    assert_eq!(ok(&last)["errorCode"], "ConfirmationFailed");
    let right = json!({"code": "123456"});
    api.post(&path, &right)
        .await
        .assert_error(409, "InvalidState");

    let created = api.post(DEPOSITS, &deposit_body("card", "10.00")).await;
    let id = created.operation_id();
    ok(&api.get(&format!("{DEPOSITS}/{id}")).await);
    let path = format!("{DEPOSITS}/{id}/confirm");
    api.refused_by_both(&path, json!({"code": 123456})).await;
    api.refused_by_both(&path, json!({"code": ""})).await;
    assert_eq!(ok(&api.post(&path, &right).await)["status"], 1);
    unknown_is_404(api, "confirm", &right).await;
}

/// The instruction flow.
pub async fn instruction(api: &Checked<'_>) {
    let created = api.post(DEPOSITS, &deposit_body("card", "10.00")).await;
    assert_eq!(ok(&created)["instruction"]["category"], "DoPayment");
    ok(&api
        .get(&format!("{DEPOSITS}/{}", created.operation_id()))
        .await);
}

/// POSTs `body` to the sandbox's completion of `id` and checks the request schema too.
pub async fn complete(api: &Checked<'_>, id: &str, body: &Value) -> Answer {
    let path = format!("/sandbox/operations/{id}/complete");
    let answer = api
        .raw(Method::POST, &path, &[JSON], body.to_string())
        .await;
    let problem = api.spec.request_problem("POST", &path, body);
    assert_eq!(
        answer.status == 400,
        problem.is_some(),
        "{body}: {problem:?}"
    );
    answer
}

/// The requisites flow, finished through the sandbox endpoint, and a payout finished there.
pub async fn requisites_and_the_sandbox(api: &Checked<'_>) {
    let created = api.post(DEPOSITS, &deposit_body("card", "10.00")).await;
    assert!(ok(&created)["requisites"]["cardNumber"].is_string());
    let id = created.operation_id();
    ok(&api.get(&format!("{DEPOSITS}/{id}")).await);
    for bad in [
        json!({"status": 3}),
        json!({"status": "1"}),
        json!({"status": 1, "x": 1}),
    ] {
        complete(api, &id, &bad)
            .await
            .assert_error(400, "InvalidRequest");
    }
    let done = complete(api, &id, &json!({"status": 1})).await;
    assert_eq!(ok(&done)["status"], 1);
    let again = complete(api, &id, &json!({"status": 2})).await;
    again.assert_error(409, "InvalidState");
    let unknown = uuid::Uuid::new_v4().to_string();
    complete(api, &unknown, &json!({"status": 1}))
        .await
        .assert_error(404, "NotFound");

    api.app.credit("100.00").await;
    let payout = api.sbp_payout("10.00").await;
    let done = complete(api, &payout.operation_id(), &json!({"status": 2})).await;
    assert_eq!(ok(&done)["errorCode"], "ProviderDeclined");
    assert!(done.data()["requisites"]["phone"].is_string());
}
