//! The page shell, the pieces every page shares, and the headers every page answer carries.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use domain::operation::Operation;
use domain::OperationId;
use maud::{html, Markup, PreEscaped, DOCTYPE};

use web_edge::html::{html_answer, see_other_under};

use super::i18n::{Lang, PageTexts, Texts};

/// One small style sheet, inline so a page is a single request and works offline.
const CSS: &str = "\
*{box-sizing:border-box}\
body{margin:0;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;background:#f2f3f5;color:#16181d}\
main{max-width:28rem;margin:0 auto;padding:1rem}\
.box{background:#fff;border-radius:12px;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}\
h1{font-size:1.35rem;margin:0 0 1rem}\
.summary{display:flex;justify-content:space-between;align-items:flex-end;gap:1rem;margin-bottom:1rem;padding-bottom:1rem;border-bottom:1px solid #e3e5e8}\
.label,.note,.ref{color:#5a6170;font-size:.875rem}\
.amount{font-size:1.6rem;font-weight:600}\
label{display:block;margin:.75rem 0 .25rem;font-weight:500}\
input{width:100%;font-size:1.1rem;padding:.7rem;border:1px solid #b8bdc7;border-radius:8px}\
input[aria-invalid=true]{border-color:#b3261e}\
.row{display:flex;gap:.75rem}.row>div{flex:1}\
button,.button{display:block;width:100%;margin-top:1rem;padding:.85rem;font-size:1.1rem;border:0;border-radius:8px;background:#1d6b3a;color:#fff;text-align:center;text-decoration:none;cursor:pointer}\
button.reject{background:#fff;color:#b3261e;border:1px solid #b3261e}\
.banks button{background:#fff;color:#16181d;border:1px solid #b8bdc7;text-align:left}\
.errors{background:#fdecea;color:#b3261e;padding:.75rem;border-radius:8px}\
.field-error{color:#b3261e;font-size:.875rem;margin:.25rem 0 0}\
.ok{color:#1d6b3a}.bad{color:#b3261e}\
img.qr{display:block;margin:1rem auto;width:100%;max-width:16rem;image-rendering:pixelated}\
a{color:#1a56b8}";

/// Only inline styles and `data:` images: no script runs on these pages.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
                   frame-ancestors 'none'; base-uri 'none'";

/// A whole HTML document around `body`.
pub fn shell(t: &Texts, title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang=(t.lang) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="robots" content="noindex, nofollow";
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body { main { div.box { (body) } } }
        }
    }
}

/// The amount and a short reference of the operation, at the top of each page.
pub fn summary(lang: Lang, op: &Operation) -> Markup {
    let t = lang.texts();
    html! {
        div.summary {
            div {
                div.label { (t.amount) }
                div.amount { (lang.money(op.amount(), op.currency())) }
            }
            div.ref { (t.reference) " " code { (short_ref(op.id())) } }
        }
    }
}

/// The first eight hex digits of the id: enough for a payer to quote, not a secret.
pub fn short_ref(id: OperationId) -> String {
    id.to_string()
        .chars()
        .take(8)
        .collect::<String>()
        .to_uppercase()
}

/// An HTML page answer in `lang`.
pub fn page(status: StatusCode, lang: Lang, markup: Markup) -> HttpResponse {
    html_answer(status, CSP, lang.texts().lang, "Accept-Language", markup)
}

/// `303 See Other` to `location`: after a form post the browser then GETs it.
pub fn see_other(location: &str) -> HttpResponse {
    see_other_under(CSP, location)
}

#[cfg(test)]
pub(crate) mod tests {
    use actix_web::http::header;

    use super::*;

    #[test]
    fn short_ref_is_eight_upper_case_hex_digits() {
        let id = OperationId::parse("6f1c2a4e-1d2b-4c5d-8e9f-001122334455").expect("uuid");
        assert_eq!(short_ref(id), "6F1C2A4E");
    }

    #[test]
    fn shell_is_a_mobile_page_in_the_language_with_escaped_text() {
        let html = shell(
            Lang::Ru.texts(),
            "<script>x</script>",
            html! { p { "a & b" } },
        )
        .into_string();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains(r#"<html lang="ru">"#));
        assert!(html.contains(r#"name="viewport""#));
        assert!(html.contains("&lt;script&gt;x&lt;/script&gt;"));
        assert!(html.contains("a &amp; b"));
        assert!(!html.contains("<script"));
    }

    /// A header of an answer as text ("" if absent).
    pub(crate) fn header_of(response: &HttpResponse, name: header::HeaderName) -> &str {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    #[test]
    fn page_answers_carry_the_protective_headers() {
        let response = page(StatusCode::OK, Lang::En, html! { p { "x" } });
        assert_eq!(header_of(&response, header::CACHE_CONTROL), "no-store");
        assert_eq!(header_of(&response, header::REFERRER_POLICY), "no-referrer");
        assert_eq!(header_of(&response, header::CONTENT_LANGUAGE), "en");
        assert_eq!(
            header_of(&response, header::CONTENT_TYPE),
            "text/html; charset=utf-8"
        );
        let redirect = see_other("https://shop.example/ok?a=1");
        assert_eq!(redirect.status(), StatusCode::SEE_OTHER);
        assert_eq!(
            header_of(&redirect, header::LOCATION),
            "https://shop.example/ok?a=1"
        );
        assert_eq!(header_of(&redirect, header::REFERRER_POLICY), "no-referrer");
    }
}
