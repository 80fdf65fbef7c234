//! Who is signed in: sessions as [`ConsoleStore`](domain::ports::ConsoleStore) rows behind a
//! cookie, CSRF tokens on every form, the sign-in form and its limit, sign-out.
//!
//! * The session cookie holds a random 32-byte token (hex); the row's id is the hex SHA-256
//!   of it, so a copy of the database signs no one in. The cookie is `HttpOnly`,
//!   `SameSite=Strict`, `Path=/admin`, and `Secure` when the request came over https (as
//!   actix's connection info says: the scheme of the connection, or of `Forwarded` /
//!   `X-Forwarded-Proto`).
//! * A session ends after 8 idle hours or 24 hours in all ([`Session::is_live`]): a dead one
//!   is deleted when seen. Sign-out deletes it.
//! * Every POST carries the session's CSRF token in its `csrf` field. The sign-in form has no
//!   session yet: it echoes a random token that a cookie of its own holds (double submit).
//! * Failed sign-ins are counted per name in the database: from
//!   [`SIGNIN_FAILURE_LIMIT`](domain::console::SIGNIN_FAILURE_LIMIT) in a minute on, every
//!   attempt for the name answers 429 before anything is hashed. An unknown or disabled name
//!   costs one Argon2 verification against a fixed hash, as a known one does. At most
//!   [`SIGNIN_CHECKS_AT_ONCE`](super::SIGNIN_CHECKS_AT_ONCE) verifications run at once.

use std::future::Future;
use std::pin::Pin;

use actix_web::cookie::{time::Duration as CookieAge, Cookie, SameSite};
use actix_web::dev::{Payload, UrlEncoded};
use actix_web::error::InternalError;
use actix_web::http::StatusCode;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use domain::console::{
    operator_name, signin_limited, verify_password, Need, Role, Session, SESSION_ABSOLUTE_MS,
    SIGNIN_FAILURE_LIMIT, SIGNIN_WINDOW_MS,
};
use maud::{html, Markup};
use rand::RngCore;
use sha2::{Digest, Sha256};

use super::i18n::texts;
use super::layout::{bare_shell, respond, see_other};
use super::paths::{LOGIN, OVERVIEW};
use super::{Answer, ConsoleState, Failure, Problem};
use web_edge::Lang;

/// The session cookie.
pub(crate) const SESSION_COOKIE: &str = "console_session";
/// The sign-in form's double-submit cookie.
pub(crate) const LOGIN_COOKIE: &str = "console_login";
/// Where the cookies apply.
const COOKIE_PATH: &str = "/admin";
/// The sign-in page.
/// The name of every form's CSRF field.
pub(crate) const CSRF_FIELD: &str = "csrf";
/// Largest console form accepted, in bytes (a 500-character reason in Cyrillic, encoded, is
/// about 3 KiB).
const FORM_LIMIT: usize = 16 * 1024;

/// An Argon2id hash (the `argon2` crate's default parameters, as
/// [`domain::console::hash_password`] makes) of a password no one has: an unknown or disabled
/// name is verified against it, so its answer takes as long as a known name's.
pub(crate) const DUMMY_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$c2lnbmluLWR1bW15LXNhbHQ$yW5r8o3H1ZkWkZrx0m0bYIIPq3W0iB2jPgqJmDj4Ccs";

/// A fresh random token: 32 bytes from the OS, hex.
pub(crate) fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// The stored id of the session whose cookie holds `token`: hex SHA-256.
pub(crate) fn session_id(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Whether a cookie's token has the form [`new_token`] gives (64 hex digits).
fn well_formed(token: &str) -> bool {
    token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Compares two secrets in time that depends on their lengths only.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |diff, (x, y)| diff | (x ^ y))
            == 0
}

/// A console cookie: `HttpOnly`, `SameSite=Strict`, `Path=/admin`, `Secure` over https.
fn cookie(
    req: &HttpRequest,
    name: &'static str,
    value: String,
    max_age_secs: i64,
) -> Cookie<'static> {
    let secure = req.connection_info().scheme() == "https";
    Cookie::build(name, value)
        .path(COOKIE_PATH)
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(secure)
        .max_age(CookieAge::seconds(max_age_secs))
        .finish()
}

/// The cookie that deletes `name` (same attributes, empty, expired).
fn removal(req: &HttpRequest, name: &'static str) -> Cookie<'static> {
    let mut gone = cookie(req, name, String::new(), 0);
    gone.make_removal();
    gone
}

fn add_cookie(response: &mut HttpResponse, cookie: &Cookie<'_>) {
    if let Err(error) = response.add_cookie(cookie) {
        // A cookie built from fixed names and hex values always fits in a header.
        tracing::error!(%error, "console cookie not set");
    }
}

/// The state of the console, from the request's app data.
fn state_of(req: &HttpRequest) -> Result<web::Data<ConsoleState>, Failure> {
    req.app_data::<web::Data<ConsoleState>>()
        .cloned()
        .ok_or_else(|| {
            let error = anyhow::anyhow!("the console's state is not registered");
            Failure::new(Lang::of(req), Problem::internal(&error))
        })
}

/// The session the request's cookie names, if it is live; `Err(true)` when there was a
/// cookie but no live session (its cookie should be cleared). A dead session is deleted here;
/// a live one's last-seen time is left to [`Signed::touch`].
async fn live_session(
    state: &ConsoleState,
    req: &HttpRequest,
) -> Result<Result<Session, bool>, Problem> {
    let Some(cookie) = req.cookie(SESSION_COOKIE) else {
        return Ok(Err(false));
    };
    if !well_formed(cookie.value()) {
        return Ok(Err(true));
    }
    let id = session_id(cookie.value());
    let Some(session) = state.store().session(&id).await? else {
        return Ok(Err(true));
    };
    if !session.is_live(state.now()) {
        state.store().delete_session(&id).await?;
        tracing::info!(operator = %session.operator, "console session ended");
        return Ok(Err(true));
    }
    Ok(Ok(session))
}

/// A signed-in operator, for a page (GET). Without a live session the request is answered
/// with `303` to the sign-in page instead.
pub(crate) struct Signed {
    pub lang: Lang,
    pub name: String,
    pub role: Role,
    pub csrf: String,
    pub state: web::Data<ConsoleState>,
    /// The session as read (its stored id, when it was last seen).
    session: Session,
}

impl Signed {
    /// Refuses (403) what the operator's role does not allow.
    pub fn need(&self, need: Need) -> Result<(), Failure> {
        if self.role.allows(need) {
            Ok(())
        } else {
            tracing::info!(operator = %self.name, role = %self.role, ?need, "console request refused by role");
            Err(self.fail(Problem::Forbidden {
                role: self.role,
                need,
            }))
        }
    }

    /// A failure page in the operator's language.
    pub fn fail(&self, problem: impl Into<Problem>) -> Failure {
        Failure::new(self.lang, problem).in_zone(self.state.zone())
    }

    /// Waits for a read or an action of the console's ports; its error becomes the failure
    /// page in the operator's language.
    pub async fn ask<T, E: Into<Problem>>(
        &self,
        work: impl Future<Output = Result<T, E>>,
    ) -> Result<T, Failure> {
        work.await.map_err(|e| self.fail(e))
    }

    /// A line saying how far behind the primary the replica this page was read from is
    /// (`GATEWAY_DATABASE_READ_URL`); nothing when the page read the primary.
    pub async fn replica_note(&self) -> Result<maud::Markup, Failure> {
        let lag = self
            .ask(self.state.ports.gateway.statements().read_lag())
            .await?;
        let t = crate::i18n::texts(self.lang);
        Ok(maud::html! {
            @if let Some(ms) = lag {
                p.muted.replica { (t.read_from_replica) " " (ms) " ms." }
            }
        })
    }

    /// [`Signed::ask`] for a lookup: nothing found is 404.
    pub async fn ask_found<T, E: Into<Problem>>(
        &self,
        lookup: impl Future<Output = Result<Option<T>, E>>,
    ) -> Result<T, Failure> {
        self.ask(lookup)
            .await?
            .ok_or_else(|| self.fail(Problem::NotFound))
    }

    async fn of(req: &HttpRequest) -> Result<Result<Signed, bool>, Failure> {
        let lang = Lang::of(req);
        let state = state_of(req)?;
        let found = live_session(&state, req)
            .await
            .map_err(|p| Failure::new(lang, p))?;
        Ok(found.map(|session| Signed {
            lang,
            name: session.operator.clone(),
            role: session.role,
            csrf: session.csrf.clone(),
            state,
            session,
        }))
    }

    /// Writes the session's last-seen time when it is due ([`Session::needs_touch`]): for a
    /// page at once, for a form only once its CSRF token matched.
    async fn touch(&self) -> Result<(), Failure> {
        let now = self.state.now();
        if self.session.needs_touch(now) {
            self.ask(self.state.store().touch_session(&self.session.id, now))
                .await?;
        }
        Ok(())
    }
}

impl FromRequest for Signed {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            match Signed::of(&req).await? {
                Ok(signed) => {
                    signed.touch().await?;
                    Ok(signed)
                }
                Err(clear) => {
                    let mut answer = see_other(LOGIN);
                    if clear {
                        add_cookie(&mut answer, &removal(&req, SESSION_COOKIE));
                    }
                    Err(InternalError::from_response("not signed in", answer).into())
                }
            }
        })
    }
}

/// A form's fields, as sent (`application/x-www-form-urlencoded`). Its values are never
/// logged.
pub(crate) struct Fields(Vec<(String, String)>);

impl Fields {
    /// Reads the request's form; anything unreadable (not a form, too large, malformed) is
    /// 400.
    async fn read(req: &HttpRequest, payload: &mut Payload) -> Result<Fields, Problem> {
        UrlEncoded::<Vec<(String, String)>>::new(req, payload)
            .limit(FORM_LIMIT)
            .await
            .map(Fields)
            .map_err(|_| Problem::BadRequest("the form could not be read".into()))
    }

    /// The field's value, if it was sent once; sent twice is 400.
    pub fn get(&self, name: &str) -> Result<Option<&str>, Problem> {
        let mut found = self.0.iter().filter(|(key, _)| key == name);
        let first = found.next().map(|(_, value)| value.as_str());
        if found.next().is_some() {
            return Err(Problem::BadRequest(format!(
                "{name}: is sent more than once"
            )));
        }
        Ok(first)
    }

    /// The field's value; missing is 400.
    pub fn required(&self, name: &str) -> Result<&str, Problem> {
        self.get(name)?
            .ok_or_else(|| Problem::BadRequest(format!("{name}: is required")))
    }
}

impl FromRequest for Fields {
    type Error = Failure;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        with_body(req, payload, |req, mut payload| async move {
            Fields::read(&req, &mut payload)
                .await
                .map_err(|p| Failure::new(Lang::of(&req), p))
        })
    }
}

/// A form extractor's future: `read` gets the request and its body, both owned.
fn with_body<T, F>(
    req: &HttpRequest,
    payload: &mut Payload,
    read: impl FnOnce(HttpRequest, Payload) -> F,
) -> Pin<Box<dyn Future<Output = Result<T, Failure>>>>
where
    F: Future<Output = Result<T, Failure>> + 'static,
{
    Box::pin(read(req.clone(), payload.take()))
}

/// A signed-in operator's form (POST) whose CSRF token matched the session's. Without a
/// session, or without the right token, the request is refused with 403 before anything is
/// written. A body that is not a readable form (none at all, another content type, malformed,
/// too large) carries no token, so it is 403 too.
pub(crate) struct Posted {
    pub signed: Signed,
    pub fields: Fields,
}

impl Posted {
    /// [`Signed::need`].
    pub fn need(&self, need: Need) -> Result<(), Failure> {
        self.signed.need(need)
    }

    pub fn fail(&self, problem: impl Into<Problem>) -> Failure {
        self.signed.fail(problem)
    }

    /// A required field.
    pub fn field(&self, name: &str) -> Result<&str, Failure> {
        self.fields.required(name).map_err(|p| self.fail(p))
    }

    /// An optional field.
    pub fn optional(&self, name: &str) -> Result<Option<&str>, Failure> {
        self.fields.get(name).map_err(|p| self.fail(p))
    }
}

impl FromRequest for Posted {
    type Error = Failure;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        with_body(req, payload, |req, mut payload| async move {
            let lang = Lang::of(&req);
            let Ok(signed) = Signed::of(&req).await? else {
                tracing::info!("console form without a session refused");
                return Err(Failure::new(lang, Problem::SignedOut));
            };
            let fields = Fields::read(&req, &mut payload).await;
            let token_ok = matches!(
                fields.as_ref().map(|f| f.get(CSRF_FIELD)),
                Ok(Ok(Some(token))) if same(token, &signed.csrf)
            );
            let (Ok(fields), true) = (fields, token_ok) else {
                tracing::info!(operator = %signed.name, "console form without a valid CSRF token refused");
                return Err(signed.fail(Problem::BadToken));
            };
            signed.touch().await?;
            Ok(Posted { signed, fields })
        })
    }
}

/// The hidden field that carries a form's CSRF token.
pub(crate) fn csrf_field(token: &str) -> Markup {
    html! { input type="hidden" name=(CSRF_FIELD) value=(token); }
}

/// The sign-in form's token: the one its cookie holds, or a fresh one (and the cookie to set).
fn login_token(req: &HttpRequest) -> (String, Option<Cookie<'static>>) {
    match req.cookie(LOGIN_COOKIE) {
        Some(cookie) if well_formed(cookie.value()) => (cookie.value().to_string(), None),
        _ => {
            let token = new_token();
            let cookie = cookie(req, LOGIN_COOKIE, token.clone(), SESSION_ABSOLUTE_MS / 1000);
            (token, Some(cookie))
        }
    }
}

/// What the sign-in page says above the form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Notice {
    None,
    WrongCredentials,
    TooMany,
}

/// The sign-in page with `status`.
fn login_page(req: &HttpRequest, status: StatusCode, notice: Notice, name: &str) -> HttpResponse {
    let lang = Lang::of(req);
    let t = texts(lang);
    let (token, new_cookie) = login_token(req);
    let body = html! {
        h1 { (t.signin_title) }
        @match notice {
            Notice::WrongCredentials => p.flash.bad role="alert" { (t.signin_wrong) },
            Notice::TooMany => p.flash.bad role="alert" { (t.signin_too_many) },
            Notice::None => {},
        }
        form.signin method="post" action=(LOGIN) {
            (csrf_field(&token))
            label for="name" { (t.signin_name) }
            input #name type="text" name="name" value=(name) autocomplete="username" required autofocus;
            label for="password" { (t.signin_password) }
            input #password type="password" name="password" autocomplete="current-password" required;
            button type="submit" { (t.signin_button) }
        }
    };
    let zone = state_of(req).ok().map(|s| s.zone().name().to_string());
    let mut answer = respond(
        status,
        lang,
        bare_shell(lang, t.signin_title, body, zone.as_deref()),
    );
    if let Some(cookie) = new_cookie {
        add_cookie(&mut answer, &cookie);
    }
    answer
}

/// `GET /admin/login`: the form, or on to the overview for a live session.
pub(crate) async fn show_login(req: HttpRequest) -> Answer {
    let lang = Lang::of(&req);
    let state = state_of(&req)?;
    let found = live_session(&state, &req)
        .await
        .map_err(|p| Failure::new(lang, p))?;
    match found {
        Ok(_) => Ok(see_other(OVERVIEW)),
        Err(clear) => {
            let mut answer = login_page(&req, StatusCode::OK, Notice::None, "");
            if clear {
                add_cookie(&mut answer, &removal(&req, SESSION_COOKIE));
            }
            Ok(answer)
        }
    }
}

/// How long a sign-in waits for one of the process's password checks before it is answered
/// 503 (a flood of sign-ins must not queue real operators for ever).
const SIGNIN_PERMIT_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The form again, 429, for a name with too many recent failures (nothing was hashed).
fn too_many(req: &HttpRequest, name: &str) -> HttpResponse {
    tracing::info!("console sign-in refused: too many failures for the name");
    let mut answer = login_page(req, StatusCode::TOO_MANY_REQUESTS, Notice::TooMany, name);
    answer.headers_mut().insert(
        actix_web::http::header::RETRY_AFTER,
        actix_web::http::header::HeaderValue::from(SIGNIN_WINDOW_MS / 1000),
    );
    answer
}

/// `POST /admin/login` with `csrf`, `name` and `password`: a session and `303` to the
/// overview, or the form again (401 for any wrong name or password, 429 for a limited name).
pub(crate) async fn sign_in(req: HttpRequest, fields: Fields) -> Answer {
    let lang = Lang::of(&req);
    let fail = |p: Problem| Failure::new(lang, p);
    let state = state_of(&req)?;
    let cookie_token = req.cookie(LOGIN_COOKIE).map(|c| c.value().to_string());
    let token_ok = match (fields.get(CSRF_FIELD), cookie_token) {
        (Ok(Some(sent)), Some(kept)) => well_formed(&kept) && same(sent, &kept),
        _ => false,
    };
    if !token_ok {
        tracing::info!("console sign-in without a valid CSRF token refused");
        return Err(fail(Problem::BadToken));
    }
    let typed_name = fields.required("name").map_err(fail)?;
    let password = fields.required("password").map_err(fail)?.to_string();
    let Ok(name) = operator_name(typed_name) else {
        // No account can have this name: nothing to count, nothing to hash.
        tracing::info!("console sign-in refused: not an operator name");
        return Ok(login_page(
            &req,
            StatusCode::UNAUTHORIZED,
            Notice::WrongCredentials,
            "",
        ));
    };
    let now = state.now();
    let since = now.plus_millis(-SIGNIN_WINDOW_MS);
    let failures = state
        .store()
        .failed_signins(&name, since)
        .await
        .map_err(|e| fail(e.into()))?;
    if signin_limited(failures) {
        return Ok(too_many(&req, &name));
    }
    // The attempt counts as a failure before its password is checked, so that attempts
    // sent at once (to this process or others) each see the ones reserved before them: at
    // most a few pass this line however many arrive together.
    let (attempt, counted) = state
        .store()
        .reserve_signin(&name, now, since)
        .await
        .map_err(|e| fail(e.into()))?;
    if counted > SIGNIN_FAILURE_LIMIT {
        return Ok(too_many(&req, &name));
    }
    let account = state
        .store()
        .account(&name)
        .await
        .map_err(|e| fail(e.into()))?
        .filter(|account| account.enabled);
    let hash = match &account {
        Some(account) => account.password_hash.clone(),
        None => DUMMY_HASH.to_string(),
    };
    // At most SIGNIN_CHECKS_AT_ONCE checks run in this process: the permit travels with the
    // check onto its blocking thread, so a request dropped while it runs does not free it.
    let permit = tokio::time::timeout(
        SIGNIN_PERMIT_WAIT,
        state.signin_checks.clone().acquire_owned(),
    )
    .await
    .map_err(|_| fail(Problem::Busy))?
    .map_err(|e| {
        fail(Problem::internal(&anyhow::anyhow!(
            "sign-in permits closed: {e}"
        )))
    })?;
    let matched = web::block(move || {
        let _permit = permit;
        verify_password(&hash, &password)
    })
    .await
    .map_err(|e| fail(Problem::internal(&anyhow::anyhow!("password check: {e}"))))?;
    let account = match account {
        Some(account) if matched => account,
        _ => {
            // The reserved attempt stays: it is this failure.
            tracing::info!("console sign-in refused: wrong name or password");
            return Ok(login_page(
                &req,
                StatusCode::UNAUTHORIZED,
                Notice::WrongCredentials,
                &name,
            ));
        }
    };
    state
        .store()
        .forget_signin(attempt)
        .await
        .map_err(|e| fail(e.into()))?;
    let token = new_token();
    let session = Session {
        id: session_id(&token),
        operator: account.name.clone(),
        role: account.role,
        csrf: new_token(),
        created_at: now,
        last_seen_at: now,
    };
    let opened = state
        .store()
        .insert_session(&session, &account.password_hash)
        .await
        .map_err(|e| fail(e.into()))?;
    if !opened {
        // The password was changed (or the account disabled) while it was being checked.
        tracing::info!("console sign-in refused: the account changed during the check");
        return Ok(login_page(
            &req,
            StatusCode::UNAUTHORIZED,
            Notice::WrongCredentials,
            &name,
        ));
    }
    tracing::info!(operator = %account.name, role = %account.role, "console sign-in");
    let mut answer = see_other(OVERVIEW);
    add_cookie(
        &mut answer,
        &cookie(&req, SESSION_COOKIE, token, SESSION_ABSOLUTE_MS / 1000),
    );
    add_cookie(&mut answer, &removal(&req, LOGIN_COOKIE));
    Ok(answer)
}

/// `POST /admin/logout`: deletes the session and its cookie, then on to the sign-in page.
pub(crate) async fn sign_out(req: HttpRequest, posted: Posted) -> Answer {
    let signed = &posted.signed;
    signed
        .ask(signed.state.store().delete_session(&signed.session.id))
        .await?;
    tracing::info!(operator = %signed.name, "console sign-out");
    let mut answer = see_other(LOGIN);
    add_cookie(&mut answer, &removal(&req, SESSION_COOKIE));
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_64_random_hex_digits_and_ids_their_sha256() {
        let (a, b) = (new_token(), new_token());
        assert!(well_formed(&a) && well_formed(&b));
        assert_ne!(a, b);
        assert_eq!(
            session_id("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_ne!(session_id(&a), a);
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "ab"));
        assert!(!same("", "a"));
    }

    #[test]
    fn the_dummy_hash_costs_what_a_real_one_does() {
        let real = domain::console::hash_password("a password of some length");
        let params = |hash: &str| hash.rsplitn(3, '$').nth(2).map(str::to_string);
        assert_eq!(
            params(DUMMY_HASH),
            params(&real),
            "same algorithm and parameters"
        );
        assert!(argon2::password_hash::PasswordHash::new(DUMMY_HASH).is_ok());
        assert!(!verify_password(DUMMY_HASH, ""));
        assert!(!verify_password(DUMMY_HASH, "a password of some length"));
    }
}
