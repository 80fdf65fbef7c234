//! Issue 18: the operator console served by the real binary (`GATEWAY_ADMIN=on`), visited
//! without a browser: sessions and their cookie, CSRF, roles, the sign-in limit, the CSV export
//! against the API, and sessions shared by two processes on one PostgreSQL database.

use serde_json::Value;

use crate::helpers::console::{create_operator, set_operator_password, Visitor};
use crate::helpers::{
    deposit, on_sqlite_and_postgres, Api, Backend, GatewayProcess, Merchant, Serve, TestDb,
};

const PASSWORD: &str = "correct horse battery staple";

fn serve() -> Serve {
    Serve::default().with("GATEWAY_ADMIN", "on")
}

on_sqlite_and_postgres!(async console_rules: console_on_sqlite, console_on_postgres);

async fn console_rules(db: TestDb) {
    let shop = Merchant::funded(&db, "console-shop", "100.00");
    create_operator(&db, "ada", "admin", PASSWORD);
    create_operator(&db, "vic", "viewer", PASSWORD);
    create_operator(&db, "eve", "operator", PASSWORD);
    let gw = GatewayProcess::start("a", &db, &serve());
    let base = gw.url("");
    let api = Api::new(&gw, &shop);

    without_a_session(&base, &shop).await;
    signin_limit(&base).await;
    viewer_cannot_credit(&base, &shop, &api).await;
    admin_credits_with_a_reason(&base, &shop, &api).await;
    export_matches_the_api(&base, &shop, &api).await;
}

async fn without_a_session(base: &str, shop: &Merchant) {
    let mut nobody = Visitor::new(base);
    for path in ["/admin", "/admin/operations", "/admin/audit"] {
        let page = nobody.get(path).await;
        assert_eq!(page.status, 303, "GET {path}: {page:?}");
        assert_eq!(page.location.as_deref(), Some("/admin/login"), "{page:?}");
    }
    let credit = format!("/admin/merchants/{}/balance", shop.id);
    let page = nobody
        .post(
            &credit,
            &[("kind", "credit"), ("amount", "1.00"), ("currency", "RUB")],
        )
        .await;
    assert_eq!(page.status, 403, "a POST without a session: {page:?}");
}

/// From the 5th failure within a minute every attempt for the name, known or not, right
/// password or not, is 429; other names are not affected.
async fn signin_limit(base: &str) {
    for name in ["eve", "nobody-at-all"] {
        let mut visitor = Visitor::new(base);
        for attempt in 1..=5 {
            let page = visitor.sign_in(name, "wrong password!").await;
            assert_eq!(page.status, 401, "{name} attempt {attempt}: {page:?}");
        }
        let sixth = visitor.sign_in(name, "wrong password!").await;
        assert_eq!(
            sixth.status, 429,
            "{name}: the 6th wrong password: {sixth:?}"
        );
        let right = visitor.sign_in(name, PASSWORD).await;
        assert_eq!(right.status, 429, "{name}: limited whatever the password");
        assert!(right
            .set_cookies
            .iter()
            .all(|c| !c.starts_with("console_session=")));
    }
}

async fn viewer_cannot_credit(base: &str, shop: &Merchant, api: &Api) {
    let mut vic = Visitor::new(base);
    let signed = vic.sign_in("vic", PASSWORD).await;
    assert_eq!(signed.status, 303, "{signed:?}");
    assert_eq!(signed.location.as_deref(), Some("/admin"));
    let cookie = signed
        .set_cookies
        .iter()
        .find(|c| c.starts_with("console_session="))
        .expect("a session cookie");
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/admin"] {
        assert!(cookie.contains(attribute), "{attribute} missing: {cookie}");
    }
    assert!(
        !cookie.contains("Secure"),
        "plain http: no Secure: {cookie}"
    );
    let overview = vic.get("/admin").await;
    assert_eq!(overview.status, 200);
    assert!(
        overview.body.contains("vic"),
        "the operator's name is shown"
    );
    assert!(overview.body.contains("UTC"), "the time zone is named");
    let token = vic.token("/admin/merchants").await;
    let credit = format!("/admin/merchants/{}/balance", shop.id);
    let fields = [
        ("csrf", token.as_str()),
        ("kind", "credit"),
        ("amount", "500.00"),
        ("currency", "RUB"),
        ("reason", "viewer tries"),
    ];
    let page = vic.post(&credit, &fields).await;
    assert_eq!(page.status, 403, "a viewer cannot credit: {page:?}");
    assert_eq!(api.balance().await.0, "100.00");
}

async fn admin_credits_with_a_reason(base: &str, shop: &Merchant, api: &Api) {
    let mut ada = Visitor::new(base);
    assert_eq!(ada.sign_in("ada", PASSWORD).await.status, 303);
    let credit = format!("/admin/merchants/{}/balance", shop.id);
    let form = [
        ("kind", "credit"),
        ("amount", "50.00"),
        ("currency", "RUB"),
        ("reason", "goodwill"),
    ];
    // Without the CSRF token, or with another one: 403, nothing changes.
    assert_eq!(ada.post(&credit, &form).await.status, 403);
    let mut forged = form.to_vec();
    forged.push(("csrf", "0000"));
    assert_eq!(ada.post(&credit, &forged).await.status, 403);
    assert_eq!(api.balance().await.0, "100.00");

    let token = ada.token("/admin/merchants").await;
    let mut signed = form.to_vec();
    signed.push(("csrf", &token));
    let page = ada.post(&credit, &signed).await;
    assert_eq!(page.status, 303, "{page:?}");
    assert_eq!(api.balance().await.0, "150.00");
    let audit = ada.get("/admin/audit").await;
    assert!(audit.body.contains("balance.credit"), "{}", audit.body);
    assert!(audit.body.contains("operator:ada"));
    assert!(audit.body.contains("goodwill"));
}

/// Operations whose merchantOperationId and userId hold commas, quotes and formula starts;
/// the export holds each once, quoted and neutralised, and its amounts add up to the API's.
async fn export_matches_the_api(base: &str, shop: &Merchant, api: &Api) {
    let tricky = [
        ("=HYPERLINK(\"http://x\",\"y\")", "plain user", "10.25"),
        ("-5+3", "@SUM(A1:A9)", "20.50"),
        ("a,b", "user \"quoted\", with comma", "30.75"),
        ("+7", "=1+1", "41.00"),
        ("normal-1", "user-1", "15.10"),
    ];
    let mut ids = Vec::new();
    let mut sum = 0i64;
    for (moid, user, amount) in tricky {
        let mut body = deposit("card", amount, moid, None);
        body["userId"] = Value::from(user);
        let answer = api.create_deposit(&body).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        let id = answer.operation_id();
        let read = api.get(&format!("/api/v1/deposits/{id}")).await;
        sum += minor(read.body["data"]["amount"].as_str().expect("amount"));
        ids.push(id);
    }
    let mut ada = Visitor::new(base);
    assert_eq!(ada.sign_in("ada", PASSWORD).await.status, 303);
    let csv = ada
        .get(&format!("/admin/operations.csv?merchant={}", shop.id))
        .await;
    assert_eq!(csv.status, 200, "{csv:?}");
    let text = csv.body;
    assert!(!text.starts_with('\u{feff}'), "no BOM");
    assert!(text.ends_with("\r\n"));
    assert!(
        !text.replace("\r\n", "").contains('\n'),
        "every line ends in CRLF"
    );
    let lines: Vec<&str> = text.trim_end_matches("\r\n").split("\r\n").collect();
    assert_eq!(
        lines[0],
        "operationId,merchantId,merchantOperationId,direction,paymentMethod,status,errorCode,amount,currency,refundedAmount,userId,provider,createdAt,updatedAt"
    );
    assert_eq!(lines.len(), 1 + ids.len(), "{text}");
    for id in &ids {
        assert_eq!(
            lines.iter().filter(|l| l.starts_with(id.as_str())).count(),
            1
        );
    }
    assert!(
        text.contains(r#""'=HYPERLINK(""http://x"",""y"")""#),
        "{text}"
    );
    assert!(text.contains(",'-5+3,"), "{text}");
    assert!(text.contains(",'@SUM(A1:A9),"), "{text}");
    assert!(
        text.contains(r#","user ""quoted"", with comma","#),
        "{text}"
    );
    assert!(text.contains(",'+7,") && text.contains(",'=1+1,"), "{text}");
    assert!(text.contains(r#","a,b","#), "{text}");
    // The amount column (the 8th) of every row, read by an RFC 4180 reader, sums to the API's.
    let exported: i64 = rows(&text)
        .iter()
        .skip(1)
        .map(|cells| minor(&cells[7]))
        .sum();
    assert_eq!(exported, sum);
    let audit = ada.get("/admin/audit").await;
    assert!(
        audit.body.contains("operations.export"),
        "exports are audited"
    );
}

/// "12.34" in minor units.
fn minor(text: &str) -> i64 {
    let (units, cents) = text.split_once('.').expect("two fraction digits");
    units.parse::<i64>().expect("units") * 100 + cents.parse::<i64>().expect("cents")
}

/// A small RFC 4180 reader: quoted cells, doubled quotes, CRLF rows.
fn rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut cell)),
            (false, '\r') if chars.peek() == Some(&'\n') => {
                chars.next();
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => cell.push(c),
        }
    }
    rows
}

on_sqlite_and_postgres!(async new_password: a_new_password_signs_out_on_sqlite, a_new_password_signs_out_on_postgres);

/// `gateway operator set-password` ends every session of the account at once: the cookie of
/// a session made with the old password leads to the sign-in page, the old password no longer
/// signs in and the new one does; another operator stays signed in.
async fn new_password(db: TestDb) {
    create_operator(&db, "ada", "admin", PASSWORD);
    create_operator(&db, "vic", "viewer", PASSWORD);
    let gw = GatewayProcess::start("a", &db, &serve());
    let base = gw.url("");
    let mut ada = Visitor::new(&base);
    assert_eq!(ada.sign_in("ada", PASSWORD).await.status, 303);
    let mut ada_elsewhere = Visitor::new(&base);
    assert_eq!(ada_elsewhere.sign_in("ada", PASSWORD).await.status, 303);
    let mut vic = Visitor::new(&base);
    assert_eq!(vic.sign_in("vic", PASSWORD).await.status, 303);
    assert_eq!(ada.get("/admin").await.status, 200);
    let token = ada.token("/admin").await;

    const NEW: &str = "a brand new passphrase";
    set_operator_password(&db, "ada", NEW).expect_code(0);

    for visitor in [&mut ada, &mut ada_elsewhere] {
        let page = visitor.get("/admin").await;
        assert_eq!(page.status, 303, "signed out: {page:?}");
        assert_eq!(page.location.as_deref(), Some("/admin/login"));
    }
    // A form made before the change is refused, as any form without a session.
    let late = ada.post("/admin/logout", &[("csrf", &token)]).await;
    assert_eq!(late.status, 403, "{late:?}");
    assert_eq!(vic.get("/admin").await.status, 200, "vic stays signed in");

    let mut again = Visitor::new(&base);
    let old = again.sign_in("ada", PASSWORD).await;
    assert_eq!(old.status, 401, "the old password: {old:?}");
    let new = again.sign_in("ada", NEW).await;
    assert_eq!(new.status, 303, "the new password: {new:?}");
    assert_eq!(again.get("/admin").await.status, 200);
}

/// Sessions are rows: a session made on one process is valid on another on the same
/// database, and signing out on either ends it on both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_shared_by_two_processes_on_postgres() {
    let Some(db) = TestDb::on(Backend::Postgres) else {
        return;
    };
    let _serial = crate::helpers::db::several_postgres_gateways().await;
    create_operator(&db, "ada", "admin", PASSWORD);
    let a = GatewayProcess::start("a", &db, &serve());
    let b = GatewayProcess::start("b", &db, &serve());
    let mut on_a = Visitor::new(&a.url(""));
    assert_eq!(on_a.sign_in("ada", PASSWORD).await.status, 303);
    let mut on_b = on_a.at(&b.url(""));
    let overview = on_b.get("/admin").await;
    assert_eq!(overview.status, 200, "the session made on a works on b");
    // A form from a's page is accepted by b: one session, one token.
    let token = on_a.token("/admin").await;
    let out = on_b.post("/admin/logout", &[("csrf", &token)]).await;
    assert_eq!(out.status, 303, "{out:?}");
    let after = on_a.get("/admin").await;
    assert_eq!(after.status, 303, "signed out on b is signed out on a");
    assert_eq!(after.location.as_deref(), Some("/admin/login"));
}

/// `GATEWAY_ADMIN=HOST:PORT`: the console on a listener of its own, and not on the API's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_can_have_a_listener_of_its_own() {
    let db = TestDb::sqlite();
    create_operator(&db, "ada", "admin", PASSWORD);
    let gw = GatewayProcess::start(
        "a",
        &db,
        &Serve::default().with("GATEWAY_ADMIN", "127.0.0.1:0"),
    );
    let needle = "console_port=";
    gw.wait_for_log(needle, std::time::Duration::from_secs(30));
    let log = gw.log_text();
    let at = log.find(needle).expect("the console's port") + needle.len();
    let port: u16 = log[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .expect("a port number");
    assert_ne!(port, gw.port);
    let mut visitor = Visitor::new(&format!("http://127.0.0.1:{port}"));
    let first = visitor.get("/admin").await;
    assert_eq!(first.status, 303, "{first:?}");
    assert_eq!(first.location.as_deref(), Some("/admin/login"));
    assert_eq!(visitor.sign_in("ada", PASSWORD).await.status, 303);
    assert_eq!(visitor.get("/admin/operations").await.status, 200);
    // The API's listener does not serve it.
    let mut on_api = Visitor::new(&gw.url(""));
    assert_eq!(on_api.get("/admin/login").await.status, 404);
}
