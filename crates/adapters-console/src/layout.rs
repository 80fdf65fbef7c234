//! The console's page frame (head, footer, the shell of pages before a session), its style
//! sheet, the pieces pages share and the headers of every answer. The signed-in operator's
//! shell is `super::shell`'s.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use domain::console::{Need, Role};
use domain::Status;
use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::i18n::{texts, Texts};
use super::paths::LOGIN;
use super::Problem;
use web_edge::html::{html_answer, see_other_under};
use web_edge::Lang;

/// One inline style sheet, dense for people who read tables all day; the palette of the
/// hosted pages.
const CSS: &str = "\
*{box-sizing:border-box}\
body{margin:0;font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;background:#f2f3f5;color:#16181d}\
header.top{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem 1rem;background:#16181d;color:#fff;padding:.4rem 1rem}\
header.top .brand{font-weight:600;margin-right:.5rem}\
header.top nav{display:flex;flex-wrap:wrap;gap:.1rem}\
header.top nav a{color:#d7dae0;text-decoration:none;padding:.3rem .6rem;border-radius:6px}\
header.top nav a.on,header.top nav a:hover{background:#2f343d;color:#fff}\
header.top .who{margin-left:auto;display:flex;align-items:center;gap:.6rem;color:#d7dae0}\
header.top .who form{margin:0}\
header.top .who button{background:#2f343d;color:#fff;border:1px solid #4a505b;padding:.25rem .6rem;margin:0}\
main{padding:1rem;max-width:110rem;margin:0 auto}\
footer{padding:.5rem 1rem 1.5rem;color:#5a6170;font-size:.8rem;text-align:center}\
h1{font-size:1.3rem;margin:.2rem 0 .8rem}\
h2{font-size:1.05rem;margin:1.2rem 0 .5rem}\
.box{background:#fff;border-radius:8px;padding:.8rem 1rem;box-shadow:0 1px 3px rgba(0,0,0,.12);margin-bottom:1rem}\
.narrow{max-width:24rem;margin:3rem auto}\
.tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:.6rem;margin-bottom:1rem}\
.tile{background:#fff;border-radius:8px;padding:.6rem .8rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}\
.tile .n{font-size:1.4rem;font-weight:600}.tile .l{color:#5a6170;font-size:.8rem}\
.tile.warn .n{color:#9a5b00}.tile.bad .n{color:#b3261e}\
table{border-collapse:collapse;width:100%;background:#fff;font-size:.85rem}\
th,td{padding:.3rem .5rem;border-bottom:1px solid #e3e5e8;text-align:left;vertical-align:top}\
th{background:#f7f8fa;font-weight:600;white-space:nowrap}\
tbody tr:hover{background:#f7f9fc}\
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
td.mono,code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.8rem}\
.scroll{overflow-x:auto}\
.badge{display:inline-block;padding:.05rem .45rem;border-radius:999px;font-size:.75rem;font-weight:600;white-space:nowrap}\
.b-ok{background:#e3f4e8;color:#1d6b3a}.b-bad{background:#fdecea;color:#b3261e}\
.b-wait{background:#fff4dc;color:#8a5300}.b-off{background:#eceef1;color:#5a6170}.b-info{background:#e5edfb;color:#1a56b8}\
form.inline{display:inline-flex;gap:.3rem;align-items:center;margin:0 .2rem .2rem 0}\
form.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end}\
form.filters label{display:flex;flex-direction:column;font-size:.75rem;color:#5a6170;gap:.1rem}\
input,select{font:inherit;padding:.25rem .4rem;border:1px solid #b8bdc7;border-radius:6px;background:#fff}\
input.short{width:6rem}\
button,.button{font:inherit;padding:.3rem .7rem;border:0;border-radius:6px;background:#1d6b3a;color:#fff;cursor:pointer;text-decoration:none;display:inline-block}\
button.danger{background:#b3261e}button.plain,.button.plain{background:#fff;color:#1a56b8;border:1px solid #b8bdc7}\
form.signin label{display:block;margin:.6rem 0 .2rem;font-weight:500}\
form.signin input{width:100%;font-size:1rem;padding:.5rem}\
form.signin button{width:100%;margin-top:1rem;padding:.6rem;font-size:1rem}\
.flash{padding:.5rem .8rem;border-radius:6px;margin:0 0 .8rem}\
.flash.ok{background:#e3f4e8;color:#1d6b3a}.flash.bad{background:#fdecea;color:#b3261e}\
.muted{color:#5a6170}.nowrap{white-space:nowrap}\
dl.fields{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}\
dl.fields dt{color:#5a6170}dl.fields dd{margin:0;word-break:break-all}\
.pager{margin:.6rem 0;display:flex;gap:.6rem}\
svg{max-width:100%;height:auto;background:#fff}\
.legend{display:flex;flex-wrap:wrap;gap:.8rem;font-size:.8rem;margin:.3rem 0}\
.legend i{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.3rem;vertical-align:-1px}\
a{color:#1a56b8}";

/// No script at all; inline styles and SVG; forms post to the console only.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
                   form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

pub(crate) fn head(t: &Texts, title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            meta name="robots" content="noindex, nofollow";
            title { (title) " · " (t.brand) }
            style { (PreEscaped(CSS)) }
        }
    }
}

pub(crate) fn footer(t: &Texts, zone: Option<&str>) -> Markup {
    html! {
        footer {
            (t.brand)
            @if let Some(zone) = zone { " · " (t.times_in) " " strong { (zone) } }
        }
    }
}

/// A small page without navigation (sign-in, errors before a session).
pub(crate) fn bare_shell(lang: Lang, title: &str, body: Markup, zone: Option<&str>) -> Markup {
    let t = texts(lang);
    html! {
        (DOCTYPE)
        html lang=(t.lang) {
            (head(t, title))
            body {
                main { div.box.narrow { (body) } }
                (footer(t, zone))
            }
        }
    }
}

/// An HTML answer in `lang`, with the console's headers.
pub(crate) fn respond(status: StatusCode, lang: Lang, markup: Markup) -> HttpResponse {
    html_answer(
        status,
        CSP,
        texts(lang).lang,
        "Accept-Language, Cookie",
        markup,
    )
}

/// `303 See Other`: after a form the browser GETs `location`.
pub(crate) fn see_other(location: &str) -> HttpResponse {
    see_other_under(CSP, location)
}

/// A failure as a page.
pub(crate) fn problem_page(
    status: StatusCode,
    lang: Lang,
    problem: &Problem,
    zone: Option<&str>,
) -> HttpResponse {
    let t = texts(lang);
    let (title, body) = match problem {
        Problem::BadRequest(message) => (
            t.bad_request_title,
            html! { p { (t.bad_request_hint) } p { code { (message) } } },
        ),
        Problem::Forbidden { role, need } => (
            t.forbidden_title,
            html! {
                p { (t.forbidden_hint) " " strong { (role_name(t, *role)) } "." }
                p { (t.forbidden_needs) " " strong { (role_name(t, needed_role(*need))) } "." }
            },
        ),
        Problem::BadToken => (t.bad_token_title, html! { p { (t.bad_token_hint) } }),
        Problem::SignedOut => (
            t.signed_out_title,
            html! { p { a href=(LOGIN) { (t.signin_again) } } },
        ),
        Problem::NotFound => (t.not_found_title, html! { p { (t.not_found_hint) } }),
        Problem::Unavailable(_) => (t.unavailable_title, html! { p { (t.unavailable_hint) } }),
        Problem::Busy => (t.unavailable_title, html! { p { (t.busy_hint) } }),
        Problem::Unaudited { correlation } => (
            t.unaudited_title,
            html! { p { (t.unaudited_hint) " " code { (correlation) } } },
        ),
        Problem::Internal { correlation } => (
            t.internal_title,
            html! { p { (t.internal_hint) " " code { (correlation) } } },
        ),
    };
    let body = html! {
        h1 { (title) }
        (body)
        p { a href="/admin" { (t.back_to_console) } }
    };
    respond(status, lang, bare_shell(lang, title, body, zone))
}

/// A role's name in the operator's language.
pub(crate) fn role_name(t: &Texts, role: Role) -> &'static str {
    match role {
        Role::Viewer => t.role_viewer,
        Role::Operator => t.role_operator,
        Role::Admin => t.role_admin,
    }
}

/// The least role that may do what `need` asks.
fn needed_role(need: Need) -> Role {
    match need {
        Need::Read => Role::Viewer,
        Need::Act => Role::Operator,
        Need::Administer => Role::Admin,
    }
}

/// A status as a coloured badge: its name and the API's number.
pub(crate) fn status_badge(t: &Texts, status: Status) -> Markup {
    let (class, name) = match status {
        Status::Approved => ("badge b-ok", t.status_approved),
        Status::Declined => ("badge b-bad", t.status_declined),
        Status::Processing => ("badge b-wait", t.status_processing),
    };
    html! { span class=(class) title=(status.name()) { (name) } }
}

/// The status of the API's number (1, 2, 3) as a badge; anything else as it is.
pub(crate) fn status_code_badge(t: &Texts, code: u8) -> Markup {
    match code {
        1 => status_badge(t, Status::Approved),
        2 => status_badge(t, Status::Declined),
        3 => status_badge(t, Status::Processing),
        other => html! { span.badge.b-off { (other) } },
    }
}

/// Enabled or disabled, as a badge.
pub(crate) fn enabled_badge(t: &Texts, enabled: bool) -> Markup {
    if enabled {
        html! { span.badge.b-ok { (t.enabled) } }
    } else {
        html! { span.badge.b-off { (t.disabled) } }
    }
}

/// A direction in the operator's language.
pub(crate) fn direction_name(t: &Texts, direction: domain::Direction) -> &'static str {
    match direction {
        domain::Direction::Deposit => t.deposit,
        domain::Direction::Withdrawal => t.withdrawal,
    }
}

/// A tariff's direction in the operator's language.
pub(crate) fn fee_direction_name(t: &Texts, direction: domain::fee::FeeDirection) -> &'static str {
    match direction {
        domain::fee::FeeDirection::Deposit => t.deposit,
        domain::fee::FeeDirection::Withdrawal => t.withdrawal,
        domain::fee::FeeDirection::Refund => t.col_refund,
    }
}

/// A list's table: `empty` (muted) when there are no rows, else the header cells `head`
/// and the rows `rows` in a table that scrolls sideways on a narrow screen.
pub(crate) fn rows_table(no_rows: bool, empty: &str, head: Markup, rows: Markup) -> Markup {
    html! {
        @if no_rows {
            p.muted { (empty) }
        } @else {
            div.scroll { table {
                thead { tr { (head) } }
                tbody { (rows) }
            } }
        }
    }
}

/// A flash message (after an action), good or bad.
pub(crate) fn flash(message: Option<(bool, &str)>) -> Markup {
    html! {
        @if let Some((good, text)) = message {
            p class=(if good { "flash ok" } else { "flash bad" }) role="status" { (text) }
        }
    }
}

/// A money amount in minor units as the API writes it (`1234.50`, `1500` in JPY), with its
/// currency.
pub(crate) fn money(minor: i64, currency: domain::Currency) -> String {
    format!("{} {currency}", domain::format_minor(minor, currency))
}
