//! The payin page at `action.redirectUrl`: a card form (method `card`) or Confirm/Reject.

use std::time::Duration;

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use serde::Deserialize;

use crate::model::{Payment, Status};
use crate::rules::{Decision, TEST_CARDS};
use crate::sim::Sim;

/// How long the page waits for the first notification attempt before redirecting.
const NOTIFY_WAIT: Duration = Duration::from_secs(5);

/// Mounts `GET` and `POST /pay/{id}`.
pub fn routes(config: &mut web::ServiceConfig) {
    config.service(
        web::resource("/pay/{id}")
            .route(web::get().to(show))
            .route(web::post().to(choose)),
    );
}

/// Escapes text for HTML content and attribute values.
fn escape(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '&' => "&amp;".to_owned(),
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '"' => "&quot;".to_owned(),
            '\'' => "&#39;".to_owned(),
            other => other.to_string(),
        })
        .collect()
}

fn html(status: actix_web::http::StatusCode, title: &str, body: &str) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .body(format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
             <body><h1>{title}</h1>{body}</body></html>",
            title = escape(title)
        ))
}

fn amount_text(payment: &Payment) -> String {
    crate::money::show(payment.order.amount, &payment.order.currency)
}

/// The form for a waiting payin.
fn form(payment: &Payment) -> String {
    let action = format!("/pay/{}", escape(&payment.id));
    let summary = format!(
        "<p>Pay <strong>{}</strong> ({})</p>",
        escape(&amount_text(payment)),
        escape(&payment.order.method)
    );
    if payment.order.method == "card" {
        let cards: String = TEST_CARDS
            .iter()
            .map(|(pan, effect, _)| format!("<li><code>{pan}</code>: {effect}</li>"))
            .collect();
        format!(
            "{summary}<form method=\"post\" action=\"{action}\">\
             <label>Card number <input name=\"pan\" value=\"{first}\" inputmode=\"numeric\"></label>\
             <button name=\"decision\" value=\"confirm\">Pay</button>\
             <button name=\"decision\" value=\"reject\">Reject</button></form>\
             <p>Test cards:</p><ul>{cards}</ul>",
            first = TEST_CARDS[0].0
        )
    } else {
        format!(
            "{summary}<form method=\"post\" action=\"{action}\">\
             <button name=\"decision\" value=\"confirm\">Confirm</button>\
             <button name=\"decision\" value=\"reject\">Reject</button></form>"
        )
    }
}

async fn show(sim: web::Data<Sim>, id: web::Path<String>) -> HttpResponse {
    use actix_web::http::StatusCode;
    match sim.payment(&id) {
        None => html(StatusCode::NOT_FOUND, "Payment not found", ""),
        Some(payment) if payment.progress.status == Status::ActionRequired => {
            html(StatusCode::OK, "Acquirer sandbox payment", &form(&payment))
        }
        Some(payment) => html(
            StatusCode::OK,
            "Payment finished",
            &format!(
                "<p>Status: {}</p>",
                escape(&format!("{:?}", payment.progress.status))
            ),
        ),
    }
}

/// The posted choice.
#[derive(Debug, Deserialize)]
struct Choice {
    decision: String,
    pan: Option<String>,
}

/// Parses `confirm` or `reject`.
pub fn parse_decision(text: &str) -> Option<Decision> {
    match text {
        "confirm" => Some(Decision::Confirm),
        "reject" => Some(Decision::Reject),
        _ => None,
    }
}

async fn choose(
    sim: web::Data<Sim>,
    id: web::Path<String>,
    choice: web::Form<Choice>,
) -> HttpResponse {
    use actix_web::http::StatusCode;
    let Some(decision) = parse_decision(&choice.decision) else {
        return html(StatusCode::BAD_REQUEST, "Unknown choice", "");
    };
    let Some((result, notified)) = sim.complete_payin(&id, decision, choice.pan.as_deref()) else {
        return html(StatusCode::NOT_FOUND, "Payment not found", "");
    };
    // Notify first, then send the browser back: the merchant's return page then knows.
    let _ = tokio::time::timeout(NOTIFY_WAIT, notified).await;
    let payment = match result {
        Ok(payment) | Err(payment) => payment,
    };
    match payment.order.return_url {
        Some(url) => HttpResponse::SeeOther()
            .insert_header((header::LOCATION, url))
            .finish(),
        None => html(
            StatusCode::OK,
            "Payment finished",
            &format!(
                "<p>Status: {}</p>",
                escape(&format!("{:?}", payment.progress.status))
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn decisions_parse() {
        assert_eq!(parse_decision("confirm"), Some(Decision::Confirm));
        assert_eq!(parse_decision("reject"), Some(Decision::Reject));
        assert_eq!(parse_decision("maybe"), None);
    }
}
