//! Hostile input, answered alike on SQLite and PostgreSQL: control characters in every text
//! field the gateway keeps, URLs a parser would repair, a body with many problems at once
//! (every one listed), and the sandbox's unsigned endpoint scoped to sandbox operations.

use domain::route::Flow;
use serde_json::{json, Value};

use crate::fields::{assert_field_error, with};
use crate::helpers::{
    card_withdrawal, deposit_body, each_backend, sbp_withdrawal, Answer, Setup, TestApp,
};

/// Control characters the gateway refuses in kept text (U+0000 to U+001F and U+007F), the
/// ones most likely to do harm first.
const CONTROLS: [char; 9] = [
    '\u{0}', '\u{1}', '\t', '\n', '\r', '\u{b}', '\u{1b}', '\u{1f}', '\u{7f}',
];

fn operations(app: &TestApp) -> i64 {
    app.database.count("SELECT COUNT(*) AS n FROM operations")
}

/// Nothing refused was stored: no operation, `available` RUB and nothing held.
async fn assert_nothing_stored(app: &TestApp, available: &str) {
    assert_eq!(operations(app), 0, "nothing refused was stored");
    app.assert_balance(available, "0.00").await;
}

/// `body` with `value` put at the dotted `path` (objects made on the way).
fn at(mut body: Value, path: &str, value: Value) -> Value {
    let mut node = &mut body;
    let parts: Vec<&str> = path.split('.').collect();
    for part in &parts[..parts.len() - 1] {
        if !node[*part].is_object() {
            node[*part] = json!({});
        }
        node = &mut node[*part];
    }
    node[parts[parts.len() - 1]] = value;
    body
}

#[tokio::test]
async fn control_characters_in_deposit_text_fields_are_refused() {
    each_backend(Setup::default(), |app| async move {
        for c in CONTROLS {
            let cases = [
                ("userId", format!("user{c}x")),
                ("merchantOperationId", format!("order{c}1")),
                ("userData.note", format!("a{c}b")),
                ("userData.email", format!("a{c}b@shop.example")),
                ("userData.ipAddress", format!("10.0.0.1{c}")),
                ("requisites.note", format!("a{c}b")),
                ("requisites.card.holder", format!("IVAN{c}")),
            ];
            for (field, value) in cases {
                let body = at(deposit_body("card", "10.00"), field, value.into());
                let answer = app.deposit(&body).await;
                assert_field_error(&answer, field);
            }
            let key = format!("no{c}te");
            let body = with(deposit_body("card", "10.00"), "userData", json!({key: "x"}));
            assert_field_error(&app.deposit(&body).await, "userData");
            let body = with(
                deposit_body("card", "10.00"),
                "requisites",
                json!({"list": ["ok", format!("x{c}")]}),
            );
            assert_field_error(&app.deposit(&body).await, "requisites.list.1");
        }
        assert_eq!(operations(&app), 0, "nothing refused was stored");
        let kept = at(
            deposit_body("card", "10.00"),
            "userData.note",
            "Иван Иванов, кв. 5 🙂".into(),
        );
        assert_eq!(
            app.deposit(&kept).await.status,
            200,
            "printable text passes"
        );
    })
    .await;
}

#[tokio::test]
async fn control_characters_in_withdrawal_text_fields_are_refused_and_nothing_is_held() {
    each_backend(Setup::credited("1000.00"), |app| async move {
        for c in CONTROLS {
            let cases = [
                (
                    sbp_withdrawal("10.00", "+79001234567"),
                    "userId",
                    format!("u{c}"),
                ),
                (
                    sbp_withdrawal("10.00", "+79001234567"),
                    "requisites.accountName",
                    format!("Ivan{c}"),
                ),
                (
                    sbp_withdrawal("10.00", "+79001234567"),
                    "requisites.bankName",
                    format!("Bank{c}A"),
                ),
                (
                    sbp_withdrawal("10.00", "+79001234567"),
                    "requisites.phone",
                    format!("+7900123456{c}"),
                ),
                (
                    card_withdrawal("10.00", "4242424242424242"),
                    "requisites.cardholderName",
                    format!("{c}IVAN"),
                ),
                (
                    card_withdrawal("10.00", "4242424242424242"),
                    "requisites.pan",
                    format!("424242424242424{c}"),
                ),
                (
                    card_withdrawal("10.00", "4242424242424242"),
                    "merchantOperationId",
                    format!("p{c}"),
                ),
            ];
            for (body, field, value) in cases {
                let answer = app.withdraw(&at(body, field, value.into())).await;
                assert_field_error(&answer, field);
            }
        }
        assert_nothing_stored(&app, "1000.00").await;
    })
    .await;
}

#[tokio::test]
async fn a_look_up_by_a_merchant_operation_id_with_control_characters_is_refused() {
    each_backend(Setup::default(), |app| async move {
        for escaped in ["a%00b", "a%0Ab", "a%0D%0Ab", "a%7F", "a%09"] {
            for direction in ["deposits", "withdrawals"] {
                let path = format!("/api/v1/{direction}?merchantOperationId={escaped}");
                assert_field_error(&app.get(&path).await, "merchantOperationId");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn control_characters_in_input_field_values_are_refused() {
    let setup = Setup {
        routes: vec![(Flow::InputFields, 200)],
        ..Setup::default()
    };
    each_backend(setup, |app| async move {
        let created = app.deposit(&deposit_body("card", "10.00")).await;
        created.assert_ok();
        let path = format!("/api/v1/deposits/{}/input", created.operation_id());
        for c in CONTROLS {
            let body = json!({"fields": {"payerName": format!("Ivan{c}"), "bank": "bank_a"}});
            let answer = app.post(&path, &body.to_string()).await;
            assert_field_error(&answer, "fields.payerName");
        }
        let body = json!({"fields": {"payerName": "Ivan Ivanov", "bank": "bank_a"}});
        let done = app.post(&path, &body.to_string()).await;
        assert_eq!(done.data()["status"], 1, "{}", done.text);
    })
    .await;
}

/// URLs a WHATWG parser accepts by repairing them; the gateway refuses each as sent.
const REPAIRABLE_URLS: [&str; 17] = [
    "http://127.0.0.1:9/cb\r\nHost: evil",
    "http://127.0.0.1:9/cb\n",
    "http://127.0.0.1:9/c\tb",
    "http://127.0.0.1:9/cb\u{0}",
    "http://127.0.0.1:9/cb\u{1}",
    "http://127.0.0.1:9/cb\u{7f}",
    "http://shop.example/a b",
    " http://shop.example/cb",
    "http://shop.example/cb ",
    "http://shop.example\\cb",
    "http://shop.example/ж",
    "http://магазин.example/cb",
    "http://shop.example/%zz",
    "http://shop.example/<cb>",
    "http:shop.example/cb",
    "http:/shop.example/cb",
    "http:///shop.example/cb",
];

#[tokio::test]
async fn urls_are_refused_unless_valid_as_sent() {
    each_backend(Setup::credited("100.00"), |app| async move {
        for bad in REPAIRABLE_URLS {
            for field in ["callbackUrl", "successUrl", "failUrl", "processingUrl"] {
                let body = with(deposit_body("card", "10.00"), field, bad.into());
                assert_field_error(&app.deposit(&body).await, field);
            }
            let body = with(
                sbp_withdrawal("1.00", "+79001234567"),
                "callbackUrl",
                bad.into(),
            );
            assert_field_error(&app.withdraw(&body).await, "callbackUrl");
        }
        assert_nothing_stored(&app, "100.00").await;
    })
    .await;
}

#[tokio::test]
async fn a_valid_url_is_stored_exactly_as_sent() {
    each_backend(Setup::default(), |app| async move {
        let sent = "HTTPS://Shop.Example:8443/Cb/../x?a=%41&b=!$()*+,;=#Frag";
        let body = with(deposit_body("card", "10.00"), "callbackUrl", sent.into());
        let answer = app.deposit(&body).await;
        answer.assert_ok();
        let stored = app.database.count(&format!(
            "SELECT COUNT(*) AS n FROM operations WHERE callback_url = '{sent}'"
        ));
        assert_eq!(stored, 1, "the URL is kept byte for byte");
    })
    .await;
}

#[tokio::test]
async fn details_list_every_invalid_field_at_once() {
    each_backend(Setup::default(), |app| async move {
        let sbp_shaped =
            json!({"phone": "+79001234567", "accountName": "Ivan", "bankName": "Bank A"});
        let body = with(
            card_withdrawal("10.00", "4242424242424242"),
            "requisites",
            sbp_shaped,
        );
        let answer = app.withdraw(&body).await;
        answer.assert_error(400, "InvalidRequest");
        assert_eq!(
            answer.sorted_detail_fields(),
            [
                "requisites.accountName",
                "requisites.bankName",
                "requisites.cardholderName",
                "requisites.pan",
                "requisites.phone",
            ],
            "{}",
            answer.text
        );

        let everything_wrong = json!({
            "amount": "1.0", "currency": "rub", "paymentMethod": "cash", "userId": "u\u{0}",
            "merchantOperationId": "has space", "callbackUrl": "http://a.example/\r\n",
            "successUrl": "ftp://a.example", "userData": {"email": "nope", "note": "\u{7f}"},
            "requisites": {"x": "\u{0}"}, "surprise": 1,
        });
        let answer = app.deposit(&everything_wrong).await;
        assert_eq!(
            answer.sorted_detail_fields(),
            [
                "amount",
                "callbackUrl",
                "currency",
                "merchantOperationId",
                "paymentMethod",
                "requisites.x",
                "successUrl",
                "surprise",
                "userData.email",
                "userData.note",
                "userId",
            ],
            "{}",
            answer.text
        );
    })
    .await;
}

async fn complete(app: &TestApp, id: &str, status: u8) -> Answer {
    let headers = [("Content-Type", "application/json")];
    let path = format!("/sandbox/operations/{id}/complete");
    let body = json!({ "status": status }).to_string();
    app.raw(reqwest::Method::POST, &path, &headers, body).await
}

#[tokio::test]
async fn the_sandbox_endpoint_and_pages_act_only_on_sandbox_operations() {
    let setup = Setup {
        pages: true,
        other_provider: true,
        ..Setup::default()
    };
    each_backend(setup, |app| async move {
        app.credit("100.00").await;
        let foreign_deposit = app.deposit(&deposit_body("sbp", "10.00")).await;
        let foreign_payout = app.withdraw(&sbp_withdrawal("10.00", "+79001234567")).await;
        for (answer, read) in [
            (&foreign_deposit, "deposits"),
            (&foreign_payout, "withdrawals"),
        ] {
            answer.assert_ok();
            let id = answer.operation_id();
            for status in [1, 2] {
                complete(&app, &id, status)
                    .await
                    .assert_error(404, "NotFound");
            }
            let now = app.get(&format!("/api/v1/{read}/{id}")).await;
            assert_eq!(now.data()["status"], 3, "unchanged: {}", now.text);
        }
        let id = foreign_deposit.operation_id();
        // Its payment page is the acquirer's: /pay/{id} sends the payer there.
        let no_redirects = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let page = no_redirects
            .get(format!("{}/pay/{id}", app.address))
            .send()
            .await
            .expect("the pay page answers");
        assert_eq!(page.status(), 303);
        assert_eq!(
            page.headers()["location"],
            format!("http://127.0.0.1:9/pay/{id}").as_str()
        );
        for (method, path) in [
            (reqwest::Method::GET, format!("/pay/{id}/sbp?bank=bank_a")),
            (reqwest::Method::POST, format!("/pay/{id}/decision")),
        ] {
            let headers = [("Content-Type", "application/x-www-form-urlencoded")];
            let page = app.raw(method, &path, &headers, "approve=true").await;
            assert_eq!(page.status, 404, "{path}: {}", page.text);
        }
        app.assert_balance("90.00", "10.00").await;

        let own = app.deposit(&deposit_body("card", "10.00")).await;
        let done = complete(&app, &own.operation_id(), 1).await;
        done.assert_ok();
        assert_eq!(done.data()["status"], 1);
    })
    .await;
}
