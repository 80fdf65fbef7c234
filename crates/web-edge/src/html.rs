//! The headers of every HTML answer, the hosted pages' and the console's.

use actix_web::http::header::{self, ContentType};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, HttpResponseBuilder};
use maud::Markup;

/// The headers of every HTML answer, the pages' and the console's: nothing cached or leaked
/// through `Referer`, no framing, and the content security policy `csp`.
fn protect(builder: &mut HttpResponseBuilder, csp: &'static str) {
    builder
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::CONTENT_SECURITY_POLICY, csp));
}

/// An HTML answer under `csp` in the language tagged `lang`, `vary` naming the request
/// headers it depends on.
pub fn html_answer(
    status: StatusCode,
    csp: &'static str,
    lang: &'static str,
    vary: &'static str,
    markup: Markup,
) -> HttpResponse {
    let mut builder = HttpResponse::build(status);
    protect(&mut builder, csp);
    builder
        .insert_header((header::CONTENT_LANGUAGE, lang))
        .insert_header((header::VARY, vary))
        .content_type(ContentType::html())
        .body(markup.into_string())
}

/// `303 See Other` to `location` under `csp`: after a form post the browser then GETs it.
pub fn see_other_under(csp: &'static str, location: &str) -> HttpResponse {
    let mut builder = HttpResponse::SeeOther();
    protect(&mut builder, csp);
    builder.insert_header((header::LOCATION, location)).finish()
}
