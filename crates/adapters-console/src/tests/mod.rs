//! The console through its own app (the edge middleware, its routes, extractors) on mockall
//! mocks: no I/O. (Mounted on the API's app, it is tested by the app crate's tests.) Every port a test does not set up panics when called, so a test that sets none
//! proves nothing was read or written.

mod actions;
mod discrepancies;
mod disputes;
mod export;
mod held;
mod pages;
mod signin;
mod statements;
mod tariffs;

use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::cookie::Cookie;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::header::{self, HeaderMap};
use actix_web::test::{self, TestRequest};
use domain::console::{AuditEntry, Role, Session};
use domain::operation::Operation;
use domain::operator::Operator;
use domain::ports::{
    MockCallbackOutbox, MockClock, MockConsoleStore, MockHostedCheckout, MockIdGenerator,
    MockLedgerReader, MockOperationStore, MockOperatorStore, MockProcessRegistry, MockTariffStore,
};
use domain::service::{Checkout, Gateway, Ports};
use domain::tariffs::Tariffs;
use domain::Timestamp;

use super::auth::{session_id, CSRF_FIELD, SESSION_COOKIE};
use super::{mount, standalone, ConsolePorts, ConsoleState, Zone};
use testkit::fixtures::{merchant, now, op_id, Mocks};

/// The session cookie's token in these tests, and the session's CSRF token.
pub(super) const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
pub(super) const CSRF: &str = "c5f0c5f0c5f0c5f0c5f0c5f0c5f0c5f0c5f0c5f0c5f0c5f0c5f0c5f0c5f0c5f0";
/// The signed-in operator.
pub(super) const NAME: &str = "alice";

/// A session of [`NAME`] with `role`, created `age_secs` ago and last seen `idle_secs` ago.
pub(super) fn session(role: Role, age_secs: i64, idle_secs: i64) -> Session {
    Session {
        id: session_id(TOKEN),
        operator: NAME.to_string(),
        role,
        csrf: CSRF.to_string(),
        created_at: now().plus_seconds(-age_secs),
        last_seen_at: now().plus_seconds(-idle_secs),
    }
}

/// Every port of the console, as mocks; the clock says [`now`].
pub(super) struct Fixture {
    pub console: MockConsoleStore,
    pub outbox: MockCallbackOutbox,
    pub processes: MockProcessRegistry,
    /// The operator's store; also where the tariffs find their merchant.
    pub operator: MockOperatorStore,
    /// The tariffs' store.
    pub tariffs: MockTariffStore,
    /// The gateway's ledger, which statements read.
    pub ledger: MockLedgerReader,
    /// The gateway's mocks; its operation store is also the operator's.
    pub mocks: Mocks,
    /// `Some`: the sandbox is in service with this checkout side.
    pub hosted: Option<MockHostedCheckout>,
    pub zone: Zone,
}

impl Fixture {
    pub fn new() -> Self {
        // The primary itself unless a test says otherwise: its pages show no replica line.
        let mut ledger = MockLedgerReader::new();
        ledger.expect_read_lag().returning(|| Ok(None));
        Self {
            console: MockConsoleStore::new(),
            outbox: MockCallbackOutbox::new(),
            processes: MockProcessRegistry::new(),
            operator: MockOperatorStore::new(),
            tariffs: MockTariffStore::new(),
            ledger,
            mocks: Mocks::new(),
            hosted: None,
            zone: Zone::utc(),
        }
    }

    /// The request's cookie names a session of `role` that is live and recently seen.
    pub fn signed_in(mut self, role: Role) -> Self {
        self.console
            .expect_session()
            .withf(|id| id == session_id(TOKEN))
            .returning(move |_| Ok(Some(session(role, 3600, 10))));
        self
    }

    pub fn state(self) -> (ConsoleState, Gateway) {
        let clock: Arc<MockClock> = Arc::new({
            let mut clock = MockClock::new();
            clock.expect_now().returning(now);
            clock
        });
        let ids = Arc::new({
            let mut ids = MockIdGenerator::new();
            // A dispute's change is keyed by a fresh id.
            ids.expect_change_id().returning(uuid::Uuid::new_v4);
            ids
        });
        let operations: Arc<MockOperationStore> = Arc::new(self.mocks.store);
        let gateway = Gateway::new(Ports {
            store: operations.clone(),
            refunds: Arc::new(self.mocks.refunds),
            disputes: Arc::new(self.mocks.disputes),
            merchants: Arc::new(self.mocks.merchants),
            routes: Arc::new(self.mocks.routes),
            tariffs: Arc::new(domain::testkit::NoTariffs),
            ledger: Arc::new(self.ledger),
            provider: Arc::new(self.mocks.provider),
            providers: Arc::new(domain::testkit::NoAcquirers),
            acquirer: Arc::new(domain::testkit::NoAcquirers),
            clock: clock.clone(),
            ids: ids.clone(),
            callback_format: Arc::new(domain::testkit::DebugCallbackFormat),
            callbacks: Arc::new(domain::testkit::NoCallbacks),
            qr: Arc::new(domain::testkit::TextQr),
        });
        let operator_store = Arc::new(self.operator);
        let tariffs = Tariffs::new(
            Arc::new(self.tariffs),
            operator_store.clone(),
            clock.clone(),
        );
        let operator = Operator::new(operator_store, operations, clock.clone(), ids);
        let checkout = self
            .hosted
            .map(|hosted| Checkout::new(gateway.steps(), Arc::new(hosted)));
        let ports = ConsolePorts {
            store: Arc::new(self.console),
            outbox: Arc::new(self.outbox),
            processes: Arc::new(self.processes),
            operator,
            gateway: gateway.clone(),
            tariffs,
            checkout,
            clock,
            read_shape: adapters_http::read_shape,
        };
        (ConsoleState::new(ports, self.zone), gateway)
    }

    /// The operation page finds `op`, with no attempts and no ledger entries.
    pub fn shows_operation(&mut self, op: Operation) {
        let store = &mut self.mocks.store;
        store.expect_get().returning(move |_| Ok(Some(op.clone())));
        store.expect_attempts().returning(|_| Ok(Vec::new()));
        self.operator
            .expect_operation_ledger()
            .returning(|_| Ok(Vec::new()));
        self.mocks
            .disputes
            .expect_disputes_of()
            .returning(|_| Ok(Vec::new()));
    }

    /// The operation has no callbacks queued.
    pub fn no_callbacks(&mut self) {
        self.operator
            .expect_operation_callbacks()
            .returning(|_| Ok(Vec::new()));
    }

    /// Expects no audit entry at all.
    pub fn audits_nothing(&mut self) {
        self.console.expect_audit().never();
    }

    /// Every merchant asked for is the test merchant.
    pub fn finds_merchant(&mut self) {
        self.operator
            .expect_find_merchant()
            .returning(|_| Ok(Some(merchant())));
    }

    /// Expects exactly one audit entry, one for which `check` holds.
    pub fn audits_once(&mut self, check: impl Fn(&AuditEntry) -> bool + Send + 'static) {
        self.console
            .expect_audit()
            .withf(check)
            .times(1)
            .returning(|_| Ok(()));
    }

    /// The console's own app (the edge middleware, the console, an HTML 404), its request
    /// metrics in a registry of their own.
    pub async fn app(
        self,
    ) -> impl Service<
        actix_http::Request,
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
    > {
        let (console, _) = self.state();
        let metrics = web_edge::Metrics::new(prometheus::Registry::new()).expect("fresh");
        test::init_service(standalone(mount(console), metrics)).await
    }
}

/// A GET carrying the session cookie.
pub(super) fn get(path: &str) -> TestRequest {
    TestRequest::get()
        .uri(path)
        .cookie(Cookie::new(SESSION_COOKIE, TOKEN))
}

/// A form POST carrying the session cookie, the session's CSRF token and `fields`.
pub(super) fn post(path: &str, fields: &[(&str, &str)]) -> TestRequest {
    let mut form: Vec<(&str, &str)> = vec![(CSRF_FIELD, CSRF)];
    form.extend_from_slice(fields);
    post_bare(path).set_form(form)
}

/// A POST carrying the session cookie and nothing else (no body, so no CSRF token).
pub(super) fn post_bare(path: &str) -> TestRequest {
    TestRequest::post()
        .uri(path)
        .cookie(Cookie::new(SESSION_COOKIE, TOKEN))
}

/// Status, headers and the body as text.
pub(super) async fn call<S, B>(app: &S, req: TestRequest) -> (u16, HeaderMap, String)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let (status, headers, bytes) = testkit::fixtures::send(app, req).await;
    (
        status,
        headers,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

/// Sends `req` and checks it is answered 303 to `location`.
pub(super) async fn assert_redirects<S, B>(app: &S, req: TestRequest, location: &str)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let (status, headers, body) = call(app, req).await;
    assert_eq!(status, 303, "{body}");
    assert_eq!(header_of(&headers, header::LOCATION), location);
}

/// The operation page of [`op_id`] with the flash `flash` (`done=...` or `error=...`).
pub(super) fn operation_flash(flash: &str) -> String {
    format!("/admin/operations/{}?{flash}", op_id())
}

/// Posts the balance form `form` for merchant m-1 and checks it is answered 303 to the
/// merchants' page saying the balance changed.
pub(super) async fn assert_balance_changed<S, B>(app: &S, form: &[(&str, &str)])
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let done = "/admin/merchants?done=balance_changed";
    assert_redirects(app, post("/admin/merchants/m-1/balance", form), done).await;
}

/// Posts `action` (`enable`, `disable`) for merchant m-1 and checks it is answered 303 to the
/// merchants' page saying it was done.
pub(super) async fn assert_merchant_action_done<S, B>(app: &S, action: &str)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let path = format!("/admin/merchants/m-1/{action}");
    let done = format!("/admin/merchants?done=merchant_{action}d");
    assert_redirects(app, post(&path, &[]), &done).await;
}

/// A user of `role` was refused with 403 and told that the action needs an admin.
pub(super) fn assert_needs_admin(role: Role, status: u16, body: &str) {
    assert_eq!(status, 403, "{role}: {body}");
    assert!(body.contains("admin"), "names the role it needs: {body}");
}

/// An audit entry by alice with this action and target.
pub(super) fn audited(entry: &AuditEntry, action: &str, target: &str) -> bool {
    entry.actor.as_str() == "operator:alice"
        && entry.action == action
        && entry.target == target
        && entry.at == now()
}

/// A header's value as text ("" if absent).
pub(super) fn header_of(headers: &HeaderMap, name: header::HeaderName) -> &str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// Every `Set-Cookie` of an answer.
pub(super) fn set_cookies(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(header::SET_COOKIE)
        .filter_map(|v| v.to_str().ok())
        .map(str::to_string)
        .collect()
}

/// The instant `seconds` after [`now`].
pub(super) fn at(seconds: i64) -> Timestamp {
    now().plus_seconds(seconds)
}
