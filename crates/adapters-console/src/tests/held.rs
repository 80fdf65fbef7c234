//! Held callbacks on the console: listed with their state and no button that would send them;
//! a retry of one changes nothing; enabling the merchant is audited with how many it released.

use actix_web::http::header;
use domain::callback::CallbackState;
use domain::console::Role;
use domain::ports::{CallbackStatus, RetryOutcome};
use domain::MerchantId;

use super::*;
use testkit::fixtures::{merchant, op_id, MERCHANT};

fn held() -> CallbackStatus {
    CallbackStatus {
        operation_id: op_id(),
        refund_id: None,
        dispute: None,
        merchant_id: MerchantId::parse(MERCHANT).expect("id"),
        url: "https://shop.example/cb".into(),
        state: CallbackState::Held,
        attempts: 0,
        next_attempt_at: Some(at(-30)),
        last_error: None,
    }
}

#[actix_web::test]
async fn the_callbacks_page_lists_a_held_callback_without_a_button_that_sends_it() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture
        .console
        .expect_open_callbacks()
        .returning(|_| Ok(vec![held()]));
    let app = fixture.app().await;
    let (status, _, body) = call(&app, get("/admin/callbacks")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(">held<"), "{body}");
    assert!(
        body.contains("its merchant is disabled; enabling the merchant sends it"),
        "{body}"
    );
    let id = op_id();
    assert!(!body.contains(&format!("/admin/callbacks/{id}/retry")));
    assert!(!body.contains(&format!("/admin/callbacks/{id}/send-now")));
}

#[actix_web::test]
async fn retrying_a_held_callback_changes_nothing_and_says_why() {
    let mut fixture = Fixture::new().signed_in(Role::Operator);
    fixture
        .outbox
        .expect_retry()
        .withf(|id, _| *id == op_id().as_uuid())
        .times(2)
        .returning(|_, _| Ok(RetryOutcome::Held));
    fixture.audits_nothing();
    let app = fixture.app().await;
    let id = op_id();
    let (status, headers, _) = call(&app, post(&format!("/admin/callbacks/{id}/retry"), &[])).await;
    assert_eq!(status, 303);
    assert_eq!(
        header_of(&headers, header::LOCATION),
        "/admin/callbacks?error=callback_held"
    );
    let path = format!("/admin/operations/{id}/callback-retry");
    let (status, headers, _) = call(&app, post(&path, &[])).await;
    assert_eq!(status, 303);
    assert_eq!(
        header_of(&headers, header::LOCATION),
        format!("/admin/operations/{id}?error=callback_held")
    );
}

#[actix_web::test]
async fn enabling_a_merchant_is_audited_with_the_held_callbacks_it_released() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture.operator.expect_find_merchant().returning(|_| {
        Ok(Some(domain::merchant::Merchant {
            enabled: false,
            ..merchant()
        }))
    });
    fixture
        .operator
        .expect_enable_merchant()
        .withf(|id, at| id.as_str() == MERCHANT && *at == now())
        .times(1)
        .returning(|_, _| Ok(Some(2)));
    fixture.audits_once(|entry| {
        entry.action == "merchant.enable"
            && entry.target == MERCHANT
            && entry.before.as_deref() == Some(r#"{"enabled":false}"#)
            && entry.after.as_deref() == Some(r#"{"enabled":true,"heldCallbacksReleased":2}"#)
    });
    let app = fixture.app().await;
    assert_merchant_action_done(&app, "enable").await;
}
