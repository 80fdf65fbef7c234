//! The tariffs page: who reads it, who changes tariffs, what a change calls and audits, and
//! how a refused value is answered.

use domain::console::Role;
use domain::fee::{FeeDirection, FeeTerms, Percent, Tariff};
use domain::{Currency, MerchantId, PaymentMethod};
use serde_json::{json, Value};

use super::*;
use testkit::fixtures::{merchant, MERCHANT};

/// Merchant m-1's card deposits in RUB: 2.50 % + 10.00, min 15.00.
fn card_tariff() -> Tariff {
    Tariff {
        merchant_id: MerchantId::parse(MERCHANT).expect("an id"),
        direction: FeeDirection::Deposit,
        method: PaymentMethod::Card,
        currency: Currency::RUB,
        terms: FeeTerms::new(
            Percent::parse("2.5").expect("2.5"),
            1_000,
            Some(1_500),
            None,
        )
        .expect("valid"),
    }
}

fn lists_card_tariff(fixture: &mut Fixture) {
    fixture
        .tariffs
        .expect_tariffs()
        .withf(|merchant| merchant.is_none())
        .times(1)
        .returning(|_| Ok(vec![card_tariff()]));
}

/// The JSON an audit entry's `before` or `after` holds.
fn parsed(text: &Option<String>) -> Option<Value> {
    text.as_deref()
        .map(|t| serde_json::from_str(t).expect("JSON"))
}

#[actix_web::test]
async fn viewers_and_operators_read_the_tariffs_without_the_forms() {
    for role in [Role::Viewer, Role::Operator] {
        let mut fixture = Fixture::new().signed_in(role);
        lists_card_tariff(&mut fixture);
        fixture.operator.expect_list_merchants().never();
        let app = fixture.app().await;

        let (status, _, body) = call(&app, get("/admin/tariffs")).await;

        assert_eq!(status, 200, "{role}: {body}");
        for shown in ["m-1", "card", "RUB", "2.50%", "10.00", "15.00", "Tariffs"] {
            assert!(body.contains(shown), "{role}: {shown} in {body}");
        }
        assert!(
            !body.contains(r#"action="/admin/tariffs""#),
            "no set form: {body}"
        );
        assert!(
            !body.contains("/admin/tariffs/remove"),
            "no remove button: {body}"
        );
    }
}

#[actix_web::test]
async fn an_admin_sees_the_set_form_and_a_remove_button_per_tariff() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    lists_card_tariff(&mut fixture);
    fixture
        .operator
        .expect_list_merchants()
        .times(1)
        .returning(|| Ok(vec![merchant()]));
    let app = fixture.app().await;

    let (status, _, body) = call(&app, get("/admin/tariffs")).await;

    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#"action="/admin/tariffs""#), "{body}");
    assert!(body.contains(r#"action="/admin/tariffs/remove""#), "{body}");
    assert!(
        body.contains(r#"<option value="m-1">"#),
        "the merchants: {body}"
    );
    for hidden in [
        r#"name="merchant" value="m-1""#,
        r#"name="direction" value="deposit""#,
        r#"name="method" value="card""#,
        r#"name="currency" value="RUB""#,
    ] {
        assert!(body.contains(hidden), "{hidden} in {body}");
    }
    assert!(body.contains(&format!(r#"name="csrf" value="{CSRF}""#)));
    assert!(body.contains(r#"<option value="refund">"#), "{body}");
}

#[actix_web::test]
async fn an_admin_sets_a_whole_tariff_and_it_is_audited_as_the_cli_does() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture.finds_merchant();
    let expected = card_tariff();
    fixture
        .tariffs
        .expect_put_tariff()
        .withf(move |tariff, at| *tariff == expected && *at == now())
        .times(1)
        .returning(|_, _| Ok(Some(FeeTerms::default())));
    fixture.audits_once(|entry| {
        audited(entry, "tariff.set", "m-1/deposit/card/RUB")
            && parsed(&entry.before)
                == Some(json!({
                    "merchantId": "m-1", "direction": "deposit", "method": "card",
                    "currency": "RUB", "percent": "0.00", "fixed": "0.00", "min": null, "max": null,
                }))
            && parsed(&entry.after) == Some(crate::tariff_json(&card_tariff()))
    });
    let app = fixture.app().await;
    let form = [
        ("merchant", "m-1"),
        ("direction", "deposit"),
        ("method", "card"),
        ("currency", "RUB"),
        ("percent", "2.5"),
        ("fixed", "10.00"),
        ("min", "15.00"),
        ("max", ""),
    ];

    let done = "/admin/tariffs?done=tariff_set";
    assert_redirects(&app, post("/admin/tariffs", &form), done).await;
}

#[actix_web::test]
async fn a_viewer_or_operator_cannot_set_or_remove_a_tariff() {
    for role in [Role::Viewer, Role::Operator] {
        let mut fixture = Fixture::new().signed_in(role);
        fixture.tariffs.expect_put_tariff().never();
        fixture.tariffs.expect_remove_tariff().never();
        fixture.audits_nothing();
        let app = fixture.app().await;
        let key = [
            ("merchant", "m-1"),
            ("direction", "deposit"),
            ("method", "card"),
            ("currency", "RUB"),
        ];
        for path in ["/admin/tariffs", "/admin/tariffs/remove"] {
            let (status, _, body) = call(&app, post(path, &key)).await;
            assert_needs_admin(role, status, &body);
        }
    }
}

#[actix_web::test]
async fn a_refused_value_is_a_400_naming_its_field_and_nothing_is_written() {
    let cases: [(&[(&str, &str)], &str); 7] = [
        (&[("percent", "2.555")], "percent:"),
        (&[("fixed", "-1.00")], "fixed:"),
        (&[("min", "20.00"), ("max", "10.00")], "min:"),
        (
            &[("method", "sbp_qr"), ("direction", "withdrawal")],
            "method:",
        ),
        (&[("method", "sbp"), ("currency", "USD")], "currency:"),
        (&[("direction", "sideways")], "direction:"),
        (&[("merchant", "nobody")], "merchant: no such merchant"),
    ];
    for (changed, named) in cases {
        let mut fixture = Fixture::new().signed_in(Role::Admin);
        fixture
            .operator
            .expect_find_merchant()
            .returning(|id| Ok((id.as_str() == MERCHANT).then(merchant)));
        fixture.tariffs.expect_put_tariff().never();
        fixture.audits_nothing();
        let app = fixture.app().await;
        let mut form = vec![
            ("merchant", "m-1"),
            ("direction", "deposit"),
            ("method", "card"),
            ("currency", "RUB"),
        ];
        form.retain(|(k, _)| !changed.iter().any(|(c, _)| c == k));
        form.extend_from_slice(changed);

        let (status, _, body) = call(&app, post("/admin/tariffs", &form)).await;

        assert_eq!(status, 400, "{changed:?}: {body}");
        assert!(body.contains(named), "{named} in {body}");
    }
}

#[actix_web::test]
async fn an_admin_removes_a_tariff_audited_with_its_terms_and_a_missing_one_says_so() {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    let mut calls = mockall::Sequence::new();
    let key = card_tariff().key();
    let (first, second) = (key.clone(), key);
    fixture
        .tariffs
        .expect_remove_tariff()
        .withf(move |k| *k == first)
        .times(1)
        .in_sequence(&mut calls)
        .returning(|_| Ok(Some(card_tariff().terms)));
    fixture
        .tariffs
        .expect_remove_tariff()
        .withf(move |k| *k == second)
        .times(1)
        .in_sequence(&mut calls)
        .returning(|_| Ok(None));
    fixture.audits_once(|entry| {
        audited(entry, "tariff.remove", "m-1/deposit/card/RUB")
            && parsed(&entry.before) == Some(crate::tariff_json(&card_tariff()))
            && entry.after.is_none()
    });
    let app = fixture.app().await;
    let form = [
        ("merchant", "m-1"),
        ("direction", "deposit"),
        ("method", "card"),
        ("currency", "RUB"),
    ];
    let path = "/admin/tariffs/remove";

    assert_redirects(
        &app,
        post(path, &form),
        "/admin/tariffs?done=tariff_removed",
    )
    .await;
    assert_redirects(
        &app,
        post(path, &form),
        "/admin/tariffs?error=no_such_tariff",
    )
    .await;
}
