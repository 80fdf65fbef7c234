//! The console's actions: who may do them, what they call, what they audit.

use actix_web::http::header;
use domain::console::Role;
use domain::ledger::{Balance, EntryKind, ManualEntry};
use domain::ports::{ManualMoveError, MockHostedCheckout, RetryOutcome};
use domain::{Currency, Status};

use super::*;
use testkit::fixtures::{deposit, merchant, op_id, MERCHANT};

#[actix_web::test]
async fn a_viewer_cannot_credit_a_balance() {
    for role in [Role::Viewer, Role::Operator] {
        let mut fixture = Fixture::new().signed_in(role);
        fixture.operator.expect_find_merchant().never();
        fixture.operator.expect_apply_manual_move().never();
        fixture.audits_nothing();
        let app = fixture.app().await;
        let form = [
            ("kind", "credit"),
            ("amount", "100.00"),
            ("currency", "RUB"),
            ("reason", "goodwill"),
        ];
        let (status, _, body) = call(&app, post("/admin/merchants/m-1/balance", &form)).await;
        assert_eq!(status, 403, "{role}: {body}");
        assert!(body.contains("Not allowed"), "{body}");
        assert!(body.contains("admin"), "names the role it needs: {body}");
    }
}

#[actix_web::test]
async fn an_admin_credit_moves_the_balance_with_the_actor_and_reason_and_is_audited() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture
        .operator
        .expect_find_merchant()
        .returning(|id| Ok((id.as_str() == MERCHANT).then(merchant)));
    fixture
        .operator
        .expect_apply_manual_move()
        .withf(|adjustment, note| {
            adjustment.merchant_id.as_str() == MERCHANT
                && adjustment.kind == EntryKind::ManualCredit
                && adjustment.available == 12_550
                && adjustment.held == 0
                && adjustment.currency == Currency::RUB
                && note.actor.as_str() == "operator:alice"
                && note.reason == "goodwill for order 7"
        })
        .times(1)
        .returning(|_, _| {
            Ok(ManualEntry {
                balance: Balance {
                    currency: Currency::RUB,
                    available: 112_550,
                    held: 300,
                },
                entry_id: 41,
                resolved: vec![],
            })
        });
    fixture.audits_once(|entry| {
            audited(entry, "balance.credit", MERCHANT)
                && entry.before.as_deref()
                    == Some(r#"{"available":"1000.00","currency":"RUB","held":"3.00"}"#)
                && entry.after.as_deref()
                    == Some(r#"{"amount":"125.50","available":"1125.50","currency":"RUB","held":"3.00","ledgerEntry":41,"reason":"goodwill for order 7"}"#)
        });
    let app = fixture.app().await;
    let form = [
        ("kind", "credit"),
        ("amount", "125.50"),
        ("currency", "RUB"),
        ("reason", "  goodwill for order 7 "),
    ];
    assert_balance_changed(&app, &form).await;
}

#[actix_web::test]
async fn a_refused_debit_shows_the_error_and_audits_nothing() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture.finds_merchant();
    fixture
        .operator
        .expect_apply_manual_move()
        .withf(|adjustment, _| {
            adjustment.available == -500_000 && adjustment.kind == EntryKind::ManualDebit
        })
        .returning(|_, _| Err(ManualMoveError::InsufficientBalance));
    fixture.audits_nothing();
    fixture
        .operator
        .expect_list_merchants()
        .returning(|| Ok(vec![merchant()]));
    fixture
        .mocks
        .store
        .expect_balances()
        .returning(|_| Ok(Vec::new()));
    let app = fixture.app().await;
    let form = [
        ("kind", "debit"),
        ("amount", "5000.00"),
        ("currency", "RUB"),
        ("reason", ""),
    ];
    let (status, headers, _) = call(&app, post("/admin/merchants/m-1/balance", &form)).await;
    assert_eq!(status, 303);
    let location = header_of(&headers, header::LOCATION).to_string();
    assert_eq!(location, "/admin/merchants?error=insufficient_balance");
    let (status, _, page) = call(&app, get(&location)).await;
    assert_eq!(status, 200);
    assert!(
        page.contains("Refused: the available balance is lower than the debit."),
        "{page}"
    );
}

#[actix_web::test]
async fn a_malformed_balance_form_is_400_and_moves_nothing() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture.operator.expect_apply_manual_move().never();
    fixture.operator.expect_find_merchant().never();
    let app = fixture.app().await;
    for (form, named) in [
        (
            vec![("kind", "gift"), ("amount", "1.00"), ("currency", "RUB")],
            "kind:",
        ),
        (
            vec![("kind", "credit"), ("amount", "1"), ("currency", "RUB")],
            "amount:",
        ),
        (
            vec![("kind", "credit"), ("amount", "-1.00"), ("currency", "RUB")],
            "amount:",
        ),
        (
            vec![("kind", "credit"), ("amount", "1.00"), ("currency", "rub")],
            "currency:",
        ),
        (vec![("kind", "credit"), ("currency", "RUB")], "amount:"),
        (
            vec![
                ("kind", "credit"),
                ("amount", "1.00"),
                ("currency", "RUB"),
                ("reason", "a\nb"),
            ],
            "reason:",
        ),
    ] {
        let (status, _, body) = call(&app, post("/admin/merchants/m-1/balance", &form)).await;
        assert_eq!(status, 400, "{form:?}");
        assert!(body.contains(named), "{named}: {body}");
    }
}

#[actix_web::test]
async fn disabling_a_merchant_is_audited_with_before_and_after() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture
        .operator
        .expect_find_merchant()
        .withf(|id| id.as_str() == MERCHANT)
        .returning(|_| Ok(Some(merchant())));
    fixture
        .operator
        .expect_disable_merchant()
        .withf(|id| id.as_str() == MERCHANT)
        .times(1)
        .returning(|_| Ok(true));
    fixture.audits_once(|entry| {
        audited(entry, "merchant.disable", MERCHANT)
            && entry.before.as_deref() == Some(r#"{"enabled":true}"#)
            && entry.after.as_deref() == Some(r#"{"enabled":false}"#)
    });
    let app = fixture.app().await;
    assert_merchant_action_done(&app, "disable").await;
}

#[actix_web::test]
async fn an_operator_retries_a_failed_callback_and_it_is_audited() {
    let mut fixture = Fixture::new().signed_in(Role::Operator);
    fixture
        .outbox
        .expect_retry()
        .withf(|id, at| *id == op_id().as_uuid() && *at == now())
        .times(1)
        .returning(|_, _| Ok(RetryOutcome::Queued));
    fixture.audits_once(|entry| {
        audited(entry, "callback.retry", &op_id().to_string())
            && entry.before.as_deref() == Some(r#"{"state":"failed"}"#)
            && entry.after.as_deref() == Some(r#"{"state":"pending"}"#)
    });
    let app = fixture.app().await;
    let path = format!("/admin/operations/{}/callback-retry", op_id());
    let back = operation_flash("done=callback_retried");
    assert_redirects(&app, post(&path, &[]), &back).await;
}

#[actix_web::test]
async fn a_viewer_cannot_retry_callbacks_or_send_them_now() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    fixture.outbox.expect_retry().never();
    fixture.console.expect_send_callback_now().never();
    let app = fixture.app().await;
    let id = op_id();
    for path in [
        format!("/admin/operations/{id}/callback-retry"),
        format!("/admin/callbacks/{id}/retry"),
        format!("/admin/callbacks/{id}/send-now"),
        format!("/admin/operations/{id}/cancel"),
        "/admin/ledger/verify".to_string(),
    ] {
        assert_eq!(call(&app, post(&path, &[])).await.0, 403, "{path}");
    }
}

#[actix_web::test]
async fn send_now_makes_a_pending_callback_due_and_is_audited() {
    let mut fixture = Fixture::new().signed_in(Role::Operator);
    fixture
        .console
        .expect_send_callback_now()
        .withf(|id, at| *id == op_id().as_uuid() && *at == now())
        .times(1)
        .returning(|_, _| Ok(true));
    fixture
        .console
        .expect_audit()
        .withf(|entry| audited(entry, "callback.send_now", &op_id().to_string()))
        .times(1)
        .returning(|_| Ok(()));
    let app = fixture.app().await;
    let send_now = post(&format!("/admin/callbacks/{}/send-now", op_id()), &[]);
    assert_redirects(&app, send_now, "/admin/callbacks?done=callback_sent").await;
}

#[actix_web::test]
async fn verify_now_records_the_check_with_the_operator_and_audits_it() {
    let mut fixture = Fixture::new().signed_in(Role::Operator);
    fixture
        .operator
        .expect_verify_ledger()
        .times(1)
        .returning(|| Ok(Vec::new()));
    fixture
        .operator
        .expect_ledger_flows()
        .times(1)
        .returning(|| Ok(Vec::new()));
    fixture
        .operator
        .expect_broken_entries()
        .times(1)
        .returning(|_| Ok(Vec::new()));
    fixture
        .console
        .expect_record_ledger_check()
        .withf(|check| {
            check.actor.as_str() == "operator:alice" && check.mismatches == 0 && check.at == now()
        })
        .times(1)
        .returning(|_| Ok(()));
    fixture.audits_once(|entry| {
        audited(entry, "ledger.verify", "ledger")
            && entry.after.as_deref() == Some(r#"{"mismatches":0}"#)
    });
    let app = fixture.app().await;
    assert_redirects(
        &app,
        post("/admin/ledger/verify", &[]),
        "/admin?done=ledger_holds",
    )
    .await;
}

#[actix_web::test]
async fn the_sandboxs_complete_approves_a_processing_sandbox_operation_and_is_audited() {
    let mut fixture = Fixture::new().signed_in(Role::Operator);
    let mut hosted = MockHostedCheckout::new();
    hosted.expect_provider().return_const("sandbox");
    fixture.hosted = Some(hosted);
    fixture
        .mocks
        .store
        .expect_get()
        .returning(|_| Ok(Some(deposit(Status::Processing, None))));
    fixture
        .mocks
        .store
        .expect_finish()
        .withf(|completion| completion.operation.status() == Status::Approved)
        .times(1)
        .returning(|_| Ok(()));
    fixture.audits_once(|entry| {
        audited(entry, "sandbox.complete", &op_id().to_string())
            && entry.before.as_deref() == Some(r#"{"status":3}"#)
            && entry.after.as_deref() == Some(r#"{"status":1}"#)
    });
    let app = fixture.app().await;
    let path = format!("/admin/operations/{}/complete", op_id());
    let approve = post(&path, &[("outcome", "approve")]);
    assert_redirects(&app, approve, &operation_flash("done=completed")).await;
    let (status, _, _) = call(&app, post(&path, &[("outcome", "maybe")])).await;
    assert_eq!(status, 400);
}

#[actix_web::test]
async fn without_the_sandbox_complete_changes_nothing() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture.mocks.store.expect_finish().never();
    fixture.audits_nothing();
    let app = fixture.app().await;
    let path = format!("/admin/operations/{}/complete", op_id());
    let (status, headers, _) = call(&app, post(&path, &[("outcome", "decline")])).await;
    assert_eq!(status, 303);
    assert!(header_of(&headers, header::LOCATION).ends_with("?error=sandbox_off"));
}

#[actix_web::test]
async fn cancelling_a_sandbox_operation_at_a_provider_is_refused_as_a_flash() {
    let mut fixture = Fixture::new().signed_in(Role::Operator);
    fixture
        .mocks
        .store
        .expect_get()
        .returning(|_| Ok(Some(deposit(Status::Processing, None))));
    fixture.audits_nothing();
    let app = fixture.app().await;
    let cancel = post(&format!("/admin/operations/{}/cancel", op_id()), &[]);
    assert_redirects(&app, cancel, &operation_flash("error=not_at_acquirer")).await;
}

#[actix_web::test]
async fn route_priority_is_admin_only_and_audited() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture
        .operator
        .expect_list_routes()
        .returning(|| Ok(testkit::fixtures::routes()));
    fixture
        .operator
        .expect_set_route_priority()
        .withf(|id, priority| *id == 2 && *priority == 250)
        .times(1)
        .returning(|_, _| Ok(true));
    fixture.audits_once(|entry| {
        audited(entry, "route.set_priority", "2")
            && entry.before.as_deref() == Some(r#"{"priority":100}"#)
            && entry.after.as_deref() == Some(r#"{"priority":250}"#)
    });
    let app = fixture.app().await;
    let (status, _, body) = call(
        &app,
        post("/admin/routes/2/priority", &[("priority", "250")]),
    )
    .await;
    assert_eq!(status, 303, "{body}");
    let (status, _, _) = call(
        &app,
        post("/admin/routes/2/priority", &[("priority", "high")]),
    )
    .await;
    assert_eq!(status, 400);
    let (status, _, _) = call(&app, post("/admin/routes/999/enable", &[])).await;
    assert_eq!(status, 404);
}
