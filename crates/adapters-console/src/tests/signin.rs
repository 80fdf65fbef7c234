//! Sessions, CSRF and sign-in: who gets in, what a request without a session or token gets,
//! the per-name limit, and the cookies' attributes.

use std::sync::{Arc, Mutex};

use actix_web::cookie::Cookie;
use actix_web::http::header;
use actix_web::test::TestRequest;
use domain::console::{
    hash_password, ConsoleAccount, Role, Session, SIGNIN_FAILURE_LIMIT, SIGNIN_WINDOW_MS,
};

use super::*;
use crate::auth::LOGIN_COOKIE;

const PASSWORD: &str = "correct horse battery staple";

/// The account `alice`, enabled, with [`PASSWORD`].
fn account(role: Role) -> ConsoleAccount {
    ConsoleAccount {
        name: NAME.to_string(),
        role,
        password_hash: hash_password(PASSWORD),
        enabled: true,
        created_at: at(-86_400),
    }
}

/// The value of cookie `name` among `Set-Cookie` headers, with its whole header.
fn cookie_named(headers: &header::HeaderMap, name: &str) -> Option<(String, String)> {
    set_cookies(headers).into_iter().find_map(|line| {
        let parsed = Cookie::parse(line.clone()).ok()?;
        (parsed.name() == name).then(|| (parsed.value().to_string(), line))
    })
}

/// The sign-in form's POST with `login` as both its cookie and its `csrf` field.
fn sign_in(login: &str, name: &str, password: &str) -> TestRequest {
    TestRequest::post()
        .uri("/admin/login")
        .cookie(Cookie::new(LOGIN_COOKIE, login.to_string()))
        .set_form([("csrf", login), ("name", name), ("password", password)])
}

const LOGIN_TOKEN: &str = "1111111111111111111111111111111111111111111111111111111111111111";

/// A fixture whose session is a viewer's, an hour old and last seen two minutes ago (so a
/// request touches it).
fn viewer_seen_two_minutes_ago() -> Fixture {
    let mut fixture = Fixture::new();
    fixture
        .console
        .expect_session()
        .returning(|_| Ok(Some(session(Role::Viewer, 3600, 120))));
    fixture
}

/// An admin's fixture on which a refused form writes nothing: no merchant change, no audit,
/// no sign-out.
fn admin_writing_nothing() -> Fixture {
    let mut fixture = Fixture::new().signed_in(Role::Admin);
    fixture.operator.expect_enable_merchant().never();
    fixture.operator.expect_list_merchants().never();
    fixture.audits_nothing();
    fixture.console.expect_delete_session().never();
    fixture
}

/// A fixture on which alice has no failed sign-in in the window yet.
fn no_failures_yet() -> Fixture {
    let mut fixture = Fixture::new();
    fixture
        .console
        .expect_failed_signins()
        .returning(|_, _| Ok(0));
    fixture
}

/// A sign-in answered by the limit: 429, to be tried again in a minute, and no session.
fn assert_limited((status, headers, body): &(u16, header::HeaderMap, String)) {
    assert_eq!(*status, 429, "{body}");
    assert_eq!(header_of(headers, header::RETRY_AFTER), "60");
    assert!(cookie_named(headers, SESSION_COOKIE).is_none());
}

/// Expects the session of [`TOKEN`] to be deleted, once.
fn expect_session_deleted(fixture: &mut Fixture) {
    fixture
        .console
        .expect_delete_session()
        .withf(|id| id == session_id(TOKEN))
        .times(1)
        .returning(|_| Ok(()));
}

#[actix_web::test]
async fn a_page_without_a_session_goes_to_the_sign_in_page() {
    let app = Fixture::new().app().await;
    for path in [
        "/admin",
        "/admin/operations",
        "/admin/merchants",
        "/admin/audit",
    ] {
        let (status, headers, _) = call(&app, TestRequest::get().uri(path)).await;
        assert_eq!(status, 303, "{path}");
        assert_eq!(header_of(&headers, header::LOCATION), "/admin/login");
    }
}

#[actix_web::test]
async fn an_unknown_session_goes_to_the_sign_in_page_and_its_cookie_is_cleared() {
    let mut fixture = Fixture::new();
    fixture.console.expect_session().returning(|_| Ok(None));
    let app = fixture.app().await;
    let (status, headers, _) = call(&app, get("/admin")).await;
    assert_eq!(status, 303);
    assert_eq!(header_of(&headers, header::LOCATION), "/admin/login");
    let (value, line) = cookie_named(&headers, SESSION_COOKIE).expect("cleared");
    assert_eq!(value, "");
    assert!(line.contains("Max-Age=0"), "{line}");
}

#[actix_web::test]
async fn a_form_without_a_session_is_forbidden_and_writes_nothing() {
    // No store expectation but the session lookup: any write would panic.
    let mut fixture = Fixture::new();
    fixture.console.expect_session().returning(|_| Ok(None));
    let app = fixture.app().await;
    let bare = TestRequest::post()
        .uri("/admin/merchants/m-1/enable")
        .set_form([("csrf", CSRF)]);
    let (status, _, body) = call(&app, bare).await;
    assert_eq!(status, 403, "{body}");
    let (status, _, _) = call(&app, post("/admin/merchants/m-1/enable", &[])).await;
    assert_eq!(status, 403, "an unknown session's cookie");
    let (status, _, _) = call(&app, post("/admin/logout", &[])).await;
    assert_eq!(status, 403);
}

#[actix_web::test]
async fn a_form_without_the_sessions_csrf_token_is_forbidden_and_writes_nothing() {
    let app = admin_writing_nothing().app().await;
    let path = "/admin/merchants/m-1/enable";
    let without = post_bare(path).set_form([("other", "x")]);
    let (status, _, body) = call(&app, without).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("The form has expired"), "{body}");
    let wrong = post_bare(path).set_form([("csrf", &CSRF.replace('c', "d")[..])]);
    assert_eq!(call(&app, wrong).await.0, 403);
    let twice = post_bare(path).set_form([("csrf", CSRF), ("csrf", CSRF)]);
    assert_eq!(
        call(&app, twice).await.0,
        403,
        "a repeated token is no token"
    );
    let logout = post_bare("/admin/logout").set_form([("csrf", "")]);
    assert_eq!(call(&app, logout).await.0, 403);
}

/// A body that is not a form carries no CSRF token: 403 like a form without one, whatever the
/// route, and nothing is written (not even the session's last-seen time).
#[actix_web::test]
async fn a_post_with_a_session_and_no_form_body_is_forbidden_and_writes_nothing() {
    let mut fixture = admin_writing_nothing();
    fixture.console.expect_touch_session().never();
    let app = fixture.app().await;
    for path in ["/admin/merchants/m-1/enable", "/admin/logout"] {
        let bare = post_bare(path);
        let (status, _, body) = call(&app, bare).await;
        assert_eq!(status, 403, "{path}, no Content-Type, no body: {body}");
        assert!(body.contains("The form has expired"), "{body}");
        let empty_form = post_bare(path)
            .insert_header((header::CONTENT_TYPE, "application/x-www-form-urlencoded"));
        assert_eq!(call(&app, empty_form).await.0, 403, "{path}, an empty form");
        let json = post_bare(path)
            .insert_header((header::CONTENT_TYPE, "application/json"))
            .set_payload(format!(r#"{{"csrf":"{CSRF}"}}"#));
        assert_eq!(call(&app, json).await.0, 403, "{path}, not a form");
    }
}

#[actix_web::test]
async fn a_session_idle_for_8_hours_or_24_hours_old_is_deleted_and_goes_to_sign_in() {
    for (age, idle) in [(9 * 3600, 8 * 3600), (24 * 3600, 60)] {
        let mut fixture = Fixture::new();
        fixture
            .console
            .expect_session()
            .returning(move |_| Ok(Some(session(Role::Admin, age, idle))));
        expect_session_deleted(&mut fixture);
        fixture.console.expect_touch_session().never();
        let app = fixture.app().await;
        let (status, headers, _) = call(&app, get("/admin")).await;
        assert_eq!(status, 303, "age {age}, idle {idle}");
        assert_eq!(header_of(&headers, header::LOCATION), "/admin/login");
        assert_eq!(
            cookie_named(&headers, SESSION_COOKIE).map(|c| c.0),
            Some(String::new())
        );
    }
}

#[actix_web::test]
async fn a_live_session_is_touched_once_a_minute_has_passed() {
    let mut fixture = viewer_seen_two_minutes_ago();
    fixture
        .console
        .expect_touch_session()
        .withf(|id, at| id == session_id(TOKEN) && *at == now())
        .times(1)
        .returning(|_, _| Ok(()));
    fixture
        .console
        .expect_audit_log()
        .returning(|_, _| Ok(Vec::new()));
    let app = fixture.app().await;
    let (status, _, body) = call(&app, get("/admin/audit")).await;
    assert_eq!(status, 200, "{body}");
}

#[actix_web::test]
async fn the_sign_in_page_sets_its_double_submit_cookie_and_echoes_it_in_the_form() {
    let app = Fixture::new().app().await;
    let (status, headers, body) = call(&app, TestRequest::get().uri("/admin/login")).await;
    assert_eq!(status, 200);
    let (token, line) = cookie_named(&headers, LOGIN_COOKIE).expect("a login cookie");
    assert_eq!(token.len(), 64);
    assert!(
        line.contains("HttpOnly")
            && line.contains("SameSite=Strict")
            && line.contains("Path=/admin"),
        "{line}"
    );
    assert!(
        body.contains(&format!(r#"name="csrf" value="{token}""#)),
        "{body}"
    );
    assert_eq!(header_of(&headers, header::CACHE_CONTROL), "no-store");
    // A second visit with the cookie keeps its token.
    let again = TestRequest::get()
        .uri("/admin/login")
        .cookie(Cookie::new(LOGIN_COOKIE, token.clone()));
    let (_, headers, body) = call(&app, again).await;
    assert!(cookie_named(&headers, LOGIN_COOKIE).is_none());
    assert!(body.contains(&format!(r#"value="{token}""#)));
}

/// A fixture whose store counts `failures` for alice and knows `account`; the session
/// written on success is kept in the returned cell.
fn signin_fixture(
    failures: u32,
    account: Option<ConsoleAccount>,
) -> (Fixture, Arc<Mutex<Option<Session>>>) {
    let mut fixture = Fixture::new();
    fixture
        .console
        .expect_failed_signins()
        .withf(|name, since| name == NAME && *since == now().plus_millis(-SIGNIN_WINDOW_MS))
        .returning(move |_, _| Ok(failures));
    // The attempt is reserved (counted as a failure) before the password is checked.
    fixture
        .console
        .expect_reserve_signin()
        .withf(|name, at, since| {
            name == NAME && *at == now() && *since == now().plus_millis(-SIGNIN_WINDOW_MS)
        })
        .returning(move |_, _, _| Ok((7, failures + 1)));
    let checked = account.as_ref().map(|a| a.password_hash.clone());
    fixture
        .console
        .expect_account()
        .withf(|name| name == NAME)
        .returning(move |_| Ok(account.clone()));
    let written = Arc::new(Mutex::new(None));
    let cell = written.clone();
    fixture
        .console
        .expect_insert_session()
        .returning(move |session, hash| {
            // The session is opened on the hash the password was checked against.
            assert_eq!(Some(hash), checked.as_deref());
            *cell.lock().expect("not poisoned") = Some(session.clone());
            Ok(true)
        });
    (fixture, written)
}

#[actix_web::test]
async fn a_password_changed_during_the_check_opens_no_session() {
    let mut fixture = no_failures_yet();
    fixture
        .console
        .expect_reserve_signin()
        .returning(|_, _, _| Ok((7, 1)));
    fixture
        .console
        .expect_account()
        .returning(|_| Ok(Some(account(Role::Admin))));
    fixture.console.expect_forget_signin().returning(|_| Ok(()));
    // The store found another hash (or a disabled account) when it came to write.
    fixture
        .console
        .expect_insert_session()
        .times(1)
        .returning(|_, _| Ok(false));
    let app = fixture.app().await;
    let (status, headers, body) = call(&app, sign_in(LOGIN_TOKEN, NAME, PASSWORD)).await;
    assert_eq!(status, 401, "{body}");
    let session_cookie = format!("{}=", crate::auth::SESSION_COOKIE);
    assert!(
        headers
            .get_all(header::SET_COOKIE)
            .all(|value| !value.to_str().unwrap_or("").starts_with(&session_cookie)),
        "no session cookie: {headers:?}"
    );
}

#[actix_web::test]
async fn a_right_password_opens_a_session_with_a_strict_http_only_cookie() {
    let (mut fixture, written) = signin_fixture(2, Some(account(Role::Operator)));
    // Its reserved attempt is forgotten: a success is not a failure.
    fixture
        .console
        .expect_forget_signin()
        .withf(|id| *id == 7)
        .times(1)
        .returning(|_| Ok(()));
    let app = fixture.app().await;
    // The name is case-folded.
    let (status, headers, body) = call(&app, sign_in(LOGIN_TOKEN, " Alice", PASSWORD)).await;
    assert_eq!(status, 303, "{body}");
    assert_eq!(header_of(&headers, header::LOCATION), "/admin");
    let (token, line) = cookie_named(&headers, SESSION_COOKIE).expect("a session cookie");
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/admin"] {
        assert!(line.contains(attribute), "{attribute} in {line}");
    }
    assert!(!line.contains("Secure"), "plain http: {line}");
    let session = written
        .lock()
        .expect("not poisoned")
        .clone()
        .expect("a session row");
    assert_eq!(
        session.id,
        session_id(&token),
        "the row keeps the token's SHA-256 only"
    );
    assert_ne!(session.id, token);
    assert_eq!(session.operator, NAME);
    assert_eq!(session.role, Role::Operator);
    assert_eq!((session.created_at, session.last_seen_at), (now(), now()));
    assert_eq!(session.csrf.len(), 64);
    assert_ne!(session.csrf, token);
    let (cleared, _) = cookie_named(&headers, LOGIN_COOKIE).expect("the login cookie is cleared");
    assert_eq!(cleared, "");
}

#[actix_web::test]
async fn the_cookie_is_secure_when_the_request_came_over_https() {
    let (mut fixture, _) = signin_fixture(0, Some(account(Role::Viewer)));
    fixture.console.expect_forget_signin().returning(|_| Ok(()));
    let app = fixture.app().await;
    let forwarded =
        sign_in(LOGIN_TOKEN, NAME, PASSWORD).insert_header(("x-forwarded-proto", "https"));
    let (status, headers, _) = call(&app, forwarded).await;
    assert_eq!(status, 303);
    let (_, line) = cookie_named(&headers, SESSION_COOKIE).expect("a session cookie");
    assert!(line.contains("Secure"), "{line}");
    let standard = sign_in(LOGIN_TOKEN, NAME, PASSWORD)
        .insert_header(("forwarded", "for=10.0.0.1;proto=https"));
    let (_, headers, _) = call(&app, standard).await;
    let (_, line) = cookie_named(&headers, SESSION_COOKIE).expect("a session cookie");
    assert!(line.contains("Secure"), "{line}");
}

#[actix_web::test]
async fn a_limited_name_answers_429_without_looking_the_account_up_or_hashing() {
    let mut fixture = Fixture::new();
    fixture
        .console
        .expect_failed_signins()
        .returning(|_, _| Ok(SIGNIN_FAILURE_LIMIT));
    fixture.console.expect_account().never();
    fixture.console.expect_reserve_signin().never();
    fixture.console.expect_insert_session().never();
    let app = fixture.app().await;
    // Even the right password is not looked at.
    let answer = call(&app, sign_in(LOGIN_TOKEN, NAME, PASSWORD)).await;
    assert_limited(&answer);
    let body = &answer.2;
    assert!(body.contains("Too many failed attempts"), "{body}");
}

#[actix_web::test]
async fn a_wrong_password_an_unknown_or_a_disabled_name_answer_401_and_are_counted() {
    let mut disabled = account(Role::Admin);
    disabled.enabled = false;
    for (account, password) in [
        (Some(account(Role::Admin)), "not the password at all"),
        (None, PASSWORD),
        (Some(disabled), PASSWORD),
    ] {
        let known = account.is_some();
        let (mut fixture, written) = signin_fixture(SIGNIN_FAILURE_LIMIT - 1, account);
        // The reserved attempt stays: it is the failure.
        fixture.console.expect_forget_signin().never();
        let app = fixture.app().await;
        let (status, headers, body) = call(&app, sign_in(LOGIN_TOKEN, NAME, password)).await;
        assert_eq!(status, 401, "known {known}: {body}");
        assert!(body.contains("Wrong name or password."), "{body}");
        assert!(body.contains(r#"name="password""#), "the form again");
        assert!(
            !body.contains(password),
            "the password is never written back"
        );
        assert!(cookie_named(&headers, SESSION_COOKIE).is_none());
        assert!(written.lock().expect("not poisoned").is_none());
    }
}

/// Attempts sent at once all pass the first count; the reservation's count, which includes
/// the ones reserved before, stops every one past the limit before it is hashed.
#[actix_web::test]
async fn an_attempt_reserved_past_the_limit_answers_429_without_hashing() {
    let mut fixture = no_failures_yet();
    fixture
        .console
        .expect_reserve_signin()
        .times(1)
        .returning(|_, _, _| Ok((9, SIGNIN_FAILURE_LIMIT + 1)));
    fixture.console.expect_account().never();
    fixture.console.expect_forget_signin().never();
    fixture.console.expect_insert_session().never();
    let app = fixture.app().await;
    assert_limited(&call(&app, sign_in(LOGIN_TOKEN, NAME, PASSWORD)).await);
}

#[actix_web::test]
async fn the_sign_in_form_must_echo_its_cookie() {
    let mut fixture = Fixture::new();
    fixture.console.expect_failed_signins().never();
    fixture.console.expect_account().never();
    let app = fixture.app().await;
    let mismatch = TestRequest::post()
        .uri("/admin/login")
        .cookie(Cookie::new(LOGIN_COOKIE, LOGIN_TOKEN))
        .set_form([
            ("csrf", &LOGIN_TOKEN.replace('1', "2")[..]),
            ("name", NAME),
            ("password", PASSWORD),
        ]);
    assert_eq!(call(&app, mismatch).await.0, 403);
    let no_cookie = TestRequest::post().uri("/admin/login").set_form([
        ("csrf", LOGIN_TOKEN),
        ("name", NAME),
        ("password", PASSWORD),
    ]);
    assert_eq!(call(&app, no_cookie).await.0, 403);
    let no_field = TestRequest::post()
        .uri("/admin/login")
        .cookie(Cookie::new(LOGIN_COOKIE, LOGIN_TOKEN))
        .set_form([("name", NAME), ("password", PASSWORD)]);
    assert_eq!(call(&app, no_field).await.0, 403);
    let not_a_form = TestRequest::post()
        .uri("/admin/login")
        .cookie(Cookie::new(LOGIN_COOKIE, LOGIN_TOKEN))
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .set_payload(r#"{"name":"alice"}"#);
    assert_eq!(call(&app, not_a_form).await.0, 400);
}

#[actix_web::test]
async fn sign_out_deletes_the_session_and_clears_its_cookie() {
    let mut fixture = Fixture::new().signed_in(Role::Viewer);
    expect_session_deleted(&mut fixture);
    let app = fixture.app().await;
    let (status, headers, _) = call(&app, post("/admin/logout", &[])).await;
    assert_eq!(status, 303);
    assert_eq!(header_of(&headers, header::LOCATION), "/admin/login");
    let (value, line) = cookie_named(&headers, SESSION_COOKIE).expect("cleared");
    assert_eq!(value, "");
    assert!(
        line.contains("Max-Age=0") && line.contains("Path=/admin"),
        "{line}"
    );
}

#[actix_web::test]
async fn a_form_touches_its_session_only_once_its_token_matched() {
    let mut fixture = viewer_seen_two_minutes_ago();
    fixture.console.expect_touch_session().never();
    let app = fixture.app().await;
    let wrong = post_bare("/admin/logout").set_form([("csrf", "0".repeat(64))]);
    assert_eq!(call(&app, wrong).await.0, 403);

    let mut fixture = viewer_seen_two_minutes_ago();
    fixture
        .console
        .expect_touch_session()
        .times(1)
        .returning(|_, _| Ok(()));
    fixture
        .console
        .expect_delete_session()
        .times(1)
        .returning(|_| Ok(()));
    let app = fixture.app().await;
    assert_eq!(call(&app, post("/admin/logout", &[])).await.0, 303);
}

#[actix_web::test]
async fn the_sign_in_page_sends_a_signed_in_operator_on_to_the_overview() {
    let app = Fixture::new().signed_in(Role::Viewer).app().await;
    assert_redirects(&app, get("/admin/login"), "/admin").await;
}
