//! The operator console: server-rendered pages (maud) at `/admin` for the people who run the
//! gateway, usable without JavaScript, in Russian or English like the hosted pages.
//!
//! | route | what | role |
//! |---|---|---|
//! | `GET`/`POST /admin/login` | the sign-in form (double-submit CSRF cookie) | anyone |
//! | `POST /admin/logout` | sign-out | any |
//! | `GET /admin` | the overview: today's figures and fee income, health, charts | viewer |
//! | `POST /admin/ledger/verify` | runs the ledger check | operator |
//! | `GET /admin/operations` | search with filters, keyset pages | viewer |
//! | `GET /admin/operations.csv` | the filtered list as CSV, streamed | viewer |
//! | `GET /admin/operations/{id}` | one operation, its refunds, disputes, timeline, callbacks and discrepancies | viewer |
//! | `POST /admin/operations/{id}/callback-retry` | queues a failed callback again | operator |
//! | `POST /admin/operations/{id}/cancel` | cancels at the provider | operator |
//! | `POST /admin/operations/{id}/complete` | the sandbox's approve or decline | operator |
//! | `GET /admin/callbacks` | pending, held and failed callbacks | viewer |
//! | `POST /admin/callbacks/{id}/retry`, `.../send-now` | retry a failed one, send a pending one now | operator |
//! | `POST /admin/discrepancies/{id}/resolve` | marks a discrepancy resolved with a note | admin |
//! | `GET /admin/disputes`, `/admin/disputes/{id}`, `.../files/{n}` | disputes with their deadlines, one with its files | viewer |
//! | `POST /admin/disputes/{id}/accept`, `.../reject` | decides an open appeal | operator |
//! | `GET /admin/merchants` | merchants, methods, balances | viewer |
//! | `POST /admin/merchants/{id}/enable`, `.../disable`, `.../balance` | changes | admin |
//! | `GET /admin/routes` | the route table | viewer |
//! | `POST /admin/routes/{id}/enable`, `.../disable`, `.../priority` | changes | admin |
//! | `GET /admin/providers` | acquirers and every live process's circuits | viewer |
//! | `POST /admin/providers/{name}/enable`, `.../disable` | changes | admin |
//! | `GET /admin/tariffs` | every merchant's tariffs | viewer |
//! | `POST /admin/tariffs`, `POST /admin/tariffs/remove` | sets a whole tariff, removes one | admin |
//! | `GET /admin/statements` | a merchant's statement in one currency over local days | viewer |
//! | `GET /admin/statements.csv` | the same statement as CSV | viewer |
//! | `GET /admin/audit` | the audit log, newest first | viewer |
//!
//! Sessions are rows of the [`ConsoleStore`] (see [`auth`]); every change is written to the
//! audit log with the operator as its actor. Passwords, tokens, cookies and CSRF values are
//! never logged.
//!
//! The console depends on `domain` and on `web-edge` (the edge middleware, metrics, languages
//! and HTML answer headers it shares with the API), never on another adapter: the app hands it
//! its ports ([`ConsolePorts`]), and mounts it on the API's listener or serves it on its own.

mod auth;
mod csv;
mod filters;
mod i18n;
mod layout;
mod pages;
mod paths;
mod shell;
mod svg;
mod tariff_audit;
pub mod zone;

#[cfg(test)]
mod tests;

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer, ResponseError};
use domain::console::{Actor, AuditEntry, Need, Role};
use domain::operator::Operator;
use domain::ports::{
    BoxError, CallbackOutbox, Chain, Clock, ConsoleStore, ProcessRegistry, StoreError,
};
use domain::service::{Checkout, Gateway, ReadError};
use domain::tariffs::Tariffs;
use tokio::sync::Semaphore;

pub use tariff_audit::{tariff_json, tariff_target};
use web_edge::edge::Edge;
use web_edge::{Lang, Metrics};
pub use zone::Zone;

/// How many Argon2 checks run at once in this process (each takes tens of milliseconds of
/// one core).
pub const SIGNIN_CHECKS_AT_ONCE: usize = 2;

/// What the console runs on; the app builds it from its adapters.
#[derive(Clone)]
pub struct ConsolePorts {
    /// Accounts, sessions, failed sign-ins, the audit log, the search, events, counters.
    pub store: Arc<dyn ConsoleStore>,
    /// Retrying failed callbacks.
    pub outbox: Arc<dyn CallbackOutbox>,
    /// The serving processes and their circuits.
    pub processes: Arc<dyn ProcessRegistry>,
    /// Merchants, routes, providers, balances, the ledger check, an operation's story.
    pub operator: Operator,
    /// Reading operations, refunds, balances and statements; cancelling at a provider.
    pub gateway: Gateway,
    /// The merchants' tariffs: listing, setting, removing.
    pub tariffs: Tariffs,
    /// The sandbox's completion; `None` when the sandbox is not in service.
    pub checkout: Option<Checkout>,
    pub clock: Arc<dyn Clock>,
    /// The operation as the API shows it, for the operation page: the app passes
    /// `adapters_http::read_shape`, so the console never shows it otherwise than the API.
    pub read_shape: ReadShape,
}

/// The read shape of an operation with its refunds and disputes (oldest first), its
/// `lifetime` counted at the instant given: the `data` the API answers for it.
pub type ReadShape = fn(
    &domain::operation::Operation,
    &[domain::refund::Refund],
    &[domain::dispute::Dispute],
    domain::Timestamp,
) -> Result<serde_json::Value, serde_json::Error>;

/// The console's shared state: its ports, its time zone and the sign-in checks' permits.
/// Cheap to clone; clones share the permits.
#[derive(Clone)]
pub struct ConsoleState {
    ports: ConsolePorts,
    zone: Zone,
    signin_checks: Arc<Semaphore>,
}

impl ConsoleState {
    /// The console over `ports`, showing times in `zone` (see [`Zone::parse`]).
    pub fn new(ports: ConsolePorts, zone: Zone) -> Self {
        Self {
            ports,
            zone,
            signin_checks: Arc::new(Semaphore::new(SIGNIN_CHECKS_AT_ONCE)),
        }
    }

    pub fn zone(&self) -> &Zone {
        &self.zone
    }

    fn store(&self) -> &dyn ConsoleStore {
        self.ports.store.as_ref()
    }

    fn now(&self) -> domain::Timestamp {
        self.ports.clock.now()
    }

    /// Writes one audit entry by `operator` at now.
    async fn audit(
        &self,
        operator: &str,
        action: &str,
        target: &str,
        before: Option<serde_json::Value>,
        after: Option<serde_json::Value>,
    ) -> Result<(), StoreError> {
        let entry = AuditEntry {
            actor: Actor::operator(operator),
            action: action.to_string(),
            target: target.to_string(),
            before: before.map(|v| v.to_string()),
            after: after.map(|v| v.to_string()),
            at: self.now(),
        };
        self.store().audit(&entry).await?;
        tracing::info!(operator, action, target, "console action");
        Ok(())
    }
}

/// Mounts the console under `/admin` with its state: hand it to the API's server
/// (`adapters_http::server`) as its `extra` to serve the console on the API's listener, or use
/// [`server`] for a listener of its own.
pub fn mount(state: ConsoleState) -> impl Fn(&mut web::ServiceConfig) + Clone + Send + 'static {
    let state = web::Data::new(state);
    move |cfg: &mut web::ServiceConfig| pages::configure(cfg, state.clone())
}

/// Serves only the console on `listener` (`/` redirects to `/admin`), behind the same edge
/// middleware as the API (request ids, tracing spans). Its request metrics are kept in a
/// registry of its own, not exported.
pub fn server(listener: TcpListener, state: ConsoleState) -> std::io::Result<Server> {
    let console = mount(state);
    // Registering fixed, valid names in an empty registry cannot fail.
    let metrics = Metrics::new(prometheus::Registry::new())
        .unwrap_or_else(|e| unreachable!("console metrics in a fresh registry: {e}"));
    let server = HttpServer::new(move || standalone(console.clone(), metrics.clone()))
        .listen(listener)?
        .run();
    Ok(server)
}

/// The console's own app: the edge middleware, the console, `/` on to the overview and an
/// HTML 404 for anything else.
pub(crate) fn standalone(
    console: impl FnOnce(&mut web::ServiceConfig),
    metrics: Metrics,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    App::new()
        .wrap(Edge::new(metrics))
        .configure(console)
        .route(
            "/",
            web::get().to(|| async { layout::see_other(paths::OVERVIEW) }),
        )
        .default_service(web::to(|req: HttpRequest| async move {
            Failure::new(Lang::of(&req), Problem::NotFound).error_response()
        }))
}

/// Why a console request failed, as the page it answers.
#[derive(Debug)]
pub(crate) enum Problem {
    /// A malformed filter, query or form, with what is wrong.
    BadRequest(String),
    /// The operator's role does not allow this.
    Forbidden {
        role: Role,
        need: Need,
    },
    /// A POST without a valid CSRF token.
    BadToken,
    /// A POST without a live session.
    SignedOut,
    NotFound,
    /// Storage cannot be reached; nothing changed.
    Unavailable(BoxError),
    /// Every password check of this process is busy (a flood of sign-ins); nothing was
    /// checked.
    Busy,
    /// The change was made, but its audit entry could not be written: logged once with a
    /// correlation id. Repeating the change would make it twice.
    Unaudited {
        correlation: String,
    },
    /// A bug: logged once, where the failure is made.
    Internal {
        correlation: String,
    },
}

impl From<StoreError> for Problem {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Unavailable(why) => Problem::Unavailable(why),
            StoreError::Other(error) => Problem::internal(&error),
        }
    }
}

impl From<ReadError> for Problem {
    fn from(error: ReadError) -> Self {
        match error {
            ReadError::NotFound => Problem::NotFound,
            ReadError::Unavailable(why) => Problem::Unavailable(why),
            ReadError::Unknown(error) => Problem::internal(&error),
        }
    }
}

impl Problem {
    /// A bug, logged here once with a correlation id the page shows.
    pub(crate) fn internal(error: &anyhow::Error) -> Problem {
        let correlation = uuid::Uuid::new_v4().to_string();
        tracing::error!(correlation.id = %correlation, error = format!("{error:#}"), "console page failed");
        Problem::Internal { correlation }
    }
}

/// A failed console request in the operator's language: an HTML error page.
#[derive(Debug)]
pub(crate) struct Failure {
    lang: Lang,
    problem: Problem,
    /// The console's time zone, named on the page when known.
    zone: Option<String>,
}

impl Failure {
    pub(crate) fn new(lang: Lang, problem: impl Into<Problem>) -> Failure {
        let problem = problem.into();
        if let Problem::Unavailable(why) = &problem {
            tracing::warn!(reason = %Chain(why.as_ref()), "console dependency unavailable");
        }
        Failure {
            lang,
            problem,
            zone: None,
        }
    }

    /// The same failure, its page naming `zone`.
    pub(crate) fn in_zone(mut self, zone: &Zone) -> Failure {
        self.zone = Some(zone.name().to_string());
        self
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "console request failed: {:?}", self.problem)
    }
}

impl ResponseError for Failure {
    fn status_code(&self) -> StatusCode {
        match self.problem {
            Problem::BadRequest(_) => StatusCode::BAD_REQUEST,
            Problem::Forbidden { .. } | Problem::BadToken | Problem::SignedOut => {
                StatusCode::FORBIDDEN
            }
            Problem::NotFound => StatusCode::NOT_FOUND,
            Problem::Unavailable(_) | Problem::Busy => StatusCode::SERVICE_UNAVAILABLE,
            Problem::Internal { .. } | Problem::Unaudited { .. } => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }

    fn error_response(&self) -> HttpResponse {
        layout::problem_page(
            self.status_code(),
            self.lang,
            &self.problem,
            self.zone.as_deref(),
        )
    }
}

/// What a console handler answers.
pub(crate) type Answer = Result<HttpResponse, Failure>;
