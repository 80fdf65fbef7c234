//! The hosted pages: server-rendered HTML (maud) that works without JavaScript, on a phone,
//! in Russian or English, plus the sandbox's scripted-completion endpoint.
//!
//! | route | what |
//! |---|---|
//! | `GET /pay/{id}` | an acquirer deposit: 303 to the acquirer's page; a sandbox deposit: the page its method needs (card form, SBP bank list, bank page, QR code); or its final state |
//! | `POST /pay/{id}/card` | the card form (`pan`, `expiry` as MM/YY, `cvc`) |
//! | `GET`/`POST /pay/{id}/sbp?bank=ID` | the chosen SBP bank's page |
//! | `POST /pay/{id}/decision` | Confirm (`approve=true`) or Reject (`approve=false`) |
//! | `GET /pay/{id}/result` | the gateway's own result page |
//! | `GET /pay/{id}/return` | where an acquirer sends the payer back: on to the merchant's URL for the result (429 beyond 10 a second per operation) |
//! | `GET /sandbox/qr/{id}` | the sandbox bank app an `sbp_qr` code opens |
//! | `POST /sandbox/qr/{id}/decision` | its Confirm or Reject |
//! | `POST /sandbox/operations/{id}/complete` | `{"status": 1 or 2}` finishes a waiting operation |
//!
//! Handlers take `web::Data<Checkout>` and `web::Data<Gateway>`; [`mount`] registers both.
//! Card numbers and CVCs are never logged, stored or written back into a page; handlers
//! log operation ids only.

mod acquirer;
mod bank;
mod card;
mod i18n;
pub(crate) mod layout;
mod outcome;
mod pay;
mod qr;
mod sandbox;
mod stage;

use std::future::Future;
use std::pin::Pin;

use actix_web::error::InternalError;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use domain::operation::Operation;
use domain::service::{Checkout, Gateway};
use domain::OperationId;

pub use acquirer::ReturnLimiter;
pub use i18n::{negotiate, Lang, PageTexts};

use outcome::{bad_request, method_not_allowed};

/// Largest page form accepted, in bytes (the card form is well under 200).
const FORM_LIMIT: usize = 4 * 1024;

/// Registers the pages and the sandbox endpoint. The app must also register
/// `web::Data<Checkout>`, `web::Data<Gateway>` and `web::Data<ReturnLimiter>` (or use
/// [`mount`]).
pub fn configure_pages(cfg: &mut web::ServiceConfig) {
    configure_acquirer_pages(cfg);
    cfg.service(
        page_resource("/pay/{id}/card", "POST")
            .app_data(form_config())
            .route(web::post().to(card::submit)),
    )
    .service(
        page_resource("/pay/{id}/sbp", "GET, POST")
            .app_data(form_config())
            .app_data(query_config())
            .route(web::get().to(bank::choose_by_query))
            .route(web::post().to(bank::choose_by_form)),
    )
    .service(
        page_resource("/pay/{id}/decision", "POST")
            .app_data(form_config())
            .route(web::post().to(bank::decide)),
    )
    .service(page_resource("/sandbox/qr/{id}", "GET").route(web::get().to(qr::bank_app)))
    .service(
        page_resource("/sandbox/qr/{id}/decision", "POST")
            .app_data(form_config())
            .route(web::post().to(qr::decide)),
    )
    // No default service: actix's own 405 carries `Allow`, and the edge middleware gives
    // it the API's JSON error body, as on the API's paths.
    .service(
        web::resource("/sandbox/operations/{id}/complete").route(web::post().to(sandbox::complete)),
    );
}

/// Registers the pages every deposit has (`/pay/{id}`, its result and the acquirer's way
/// back); they need `web::Data<Gateway>` and one `web::Data<ReturnLimiter>` for the whole
/// process, and serve sandbox deposits only when `web::Data<Checkout>` is registered too.
pub fn configure_acquirer_pages(cfg: &mut web::ServiceConfig) {
    cfg.service(page_resource("/pay/{id}", "GET").route(web::get().to(pay::show)))
        .service(page_resource("/pay/{id}/result", "GET").route(web::get().to(pay::result)))
        .service(
            page_resource("/pay/{id}/return", "GET")
                .route(web::get().to(acquirer::back_from_acquirer)),
        );
}

/// Registers `gateway`, the process's [`ReturnLimiter`] and, when the sandbox is in service,
/// its `checkout` as app data, then the pages: hand this to [`crate::server`] as its `extra`.
/// Without a checkout, every sandbox surface answers 404 and acquirer deposits keep their
/// pages.
pub fn mount(
    checkout: Option<Checkout>,
    gateway: Gateway,
) -> impl Fn(&mut web::ServiceConfig) + Clone + Send + 'static {
    // Made once here, not per worker: the limit is the process's.
    let limiter = web::Data::new(ReturnLimiter::new(acquirer::RETURN_LIMIT_PER_SEC));
    move |cfg: &mut web::ServiceConfig| {
        cfg.app_data(web::Data::new(gateway.clone()))
            .app_data(limiter.clone());
        match &checkout {
            Some(checkout) => {
                cfg.app_data(web::Data::new(checkout.clone()));
                configure_pages(cfg);
            }
            None => configure_acquirer_pages(cfg),
        }
    }
}

/// A page path whose wrong methods answer an HTML 405 page naming the `allow`ed ones.
fn page_resource(path: &str, allow: &'static str) -> actix_web::Resource {
    web::resource(path).default_service(web::to(move |req: HttpRequest| async move {
        let mut page = method_not_allowed(Lang::of(&req));
        page.headers_mut().insert(
            actix_web::http::header::ALLOW,
            actix_web::http::header::HeaderValue::from_static(allow),
        );
        page
    }))
}

/// Page forms: `application/x-www-form-urlencoded`, small; anything unreadable is an HTML
/// 400 page. The body is never logged.
fn form_config() -> web::FormConfig {
    web::FormConfig::default()
        .limit(FORM_LIMIT)
        .error_handler(|_error, req| {
            tracing::info!("page form refused");
            unreadable(req)
        })
}

/// Page queries: an unreadable one is an HTML 400 page.
fn query_config() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|_error, req| {
        tracing::info!("page query refused");
        unreadable(req)
    })
}

fn unreadable(req: &HttpRequest) -> actix_web::Error {
    let answer: HttpResponse = bad_request(Lang::of(req));
    InternalError::from_response("unreadable page request", answer).into()
}

/// The operation id of a page path; anything that is not a UUID names no payment.
fn parse_id(text: &str) -> Option<OperationId> {
    OperationId::parse(text).ok()
}

/// The deposit a page path names, or the page to answer instead (404 for a malformed or
/// unknown id, the failure page for any other error).
async fn load_deposit(
    lang: Lang,
    path: &str,
    checkout: &Checkout,
) -> Result<Operation, HttpResponse> {
    let id = parse_id(path).ok_or_else(|| outcome::not_found(lang))?;
    checkout
        .deposit(id)
        .await
        .map_err(|error| outcome::failure(lang, error))
}

/// The opening of a page form's handler, as an extractor: the page's language and the
/// operation id its `{id}` names (`None` if malformed). It never fails, so an unreadable form
/// is refused (400) before a bad id is looked at (404), however the body arrives.
pub(crate) struct PageId {
    pub lang: Lang,
    pub id: Option<OperationId>,
}

impl FromRequest for PageId {
    type Error = std::convert::Infallible;
    type Future = std::future::Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let path = req.match_info().get("id").unwrap_or_default();
        std::future::ready(Ok(Self {
            lang: Lang::of(req),
            id: parse_id(path),
        }))
    }
}

/// The opening every page handler shares, as an extractor: the page's language and the
/// sandbox deposit its `{id}` names. When there is none, the request is answered with the
/// 404 or failure page instead and the handler never runs.
pub(crate) struct PageDeposit {
    pub lang: Lang,
    pub op: Operation,
}

impl FromRequest for PageDeposit {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let lang = Lang::of(&req);
            let answer = |page: HttpResponse| InternalError::from_response("no such payment", page);
            let checkout = req
                .app_data::<web::Data<Checkout>>()
                .ok_or_else(|| answer(outcome::not_found(lang)))?;
            let path = req.match_info().get("id").unwrap_or_default();
            let op = load_deposit(lang, path, checkout).await.map_err(answer)?;
            Ok(Self { lang, op })
        })
    }
}
