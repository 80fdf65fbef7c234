//! `GET /admin/providers`: the acquirers (never their credentials) and every live serving
//! process's circuits. Admins enable and disable acquirers.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use domain::circuit::CircuitState;
use domain::console::Need;
use domain::operator::{ProviderChanges, ProviderError};
use domain::provider::{AcquirerProvider, ProviderName};
use maud::{html, Markup};

use super::actions::{flash_of, toggled};
use crate::auth::{Posted, Signed};
use crate::i18n::{texts, Texts};
use crate::layout::{enabled_badge, flash, respond, rows_table};
use crate::shell::Nav;
use crate::shell::{action_button, shell};
use crate::{Answer, Failure, Problem};

const LIST: &str = "/admin/providers";

/// A process counts as live when it reported within this many seconds.
pub(crate) const LIVE_WITHIN_SECONDS: i64 = 15;

pub(crate) async fn list(signed: Signed, req: HttpRequest) -> Answer {
    let state = &signed.state;
    let providers = signed.ask(state.ports.operator.providers()).await?;
    let processes = signed
        .ask(
            state
                .ports
                .processes
                .processes(state.now().plus_seconds(-LIVE_WITHIN_SECONDS)),
        )
        .await?;
    let t = texts(signed.lang);
    let zone = state.zone();
    let admin = signed.role.allows(Need::Administer);
    let body = html! {
        h1 { (t.nav_providers) }
        (flash(flash_of(&req, signed.lang)))
        div.box {
            (rows_table(providers.is_empty(), t.no_acquirers, html! {
                th { (t.col_name) } th { "URL" } th.num { (t.timeout) } th { (t.col_state) }
                @for process in &processes { th { (t.circuit) " " code { (short(&process.id)) } } }
                @if admin { th { (t.col_actions) } }
            }, html! {
                @for provider in &providers {
                    tr {
                        td { (provider.name.as_str()) }
                        td.mono {
                            (provider.url.as_str())
                            @if provider.allow_insecure { " " span.badge.b-wait { (t.insecure) } }
                        }
                        td.num { (provider.timeout.as_millis()) " ms" }
                        td { (enabled_badge(t, provider.enabled)) }
                        @for process in &processes {
                            td {
                                @match process.circuits.iter().find(|c| c.provider == provider.name.as_str()) {
                                    Some(circuit) => (circuit_badge(t, zone, circuit.state)),
                                    None => span.muted { (t.not_called) },
                                }
                            }
                        }
                        @if admin {
                            td {
                                @let base = format!("{LIST}/{}", provider.name.as_str());
                                @if provider.enabled {
                                    (action_button(&signed, &format!("{base}/disable"), t.disable, &[], true))
                                } @else {
                                    (action_button(&signed, &format!("{base}/enable"), t.enable, &[], false))
                                }
                            }
                        }
                    }
                }
            }))
        }
        div.box {
            h2 { (t.processes) }
            (rows_table(processes.is_empty(), t.no_processes, html! { th { "id" } th { (t.version) } th { (t.started) } th { (t.seen) } th { (t.circuits) } }, html! {
                @for process in &processes {
                    tr {
                        td.mono { (process.id) }
                        td { (process.version) }
                        td.nowrap { (zone.format(process.started_at)) }
                        td.nowrap { (zone.format(process.seen_at)) }
                        td {
                            @if process.circuits.is_empty() { span.muted { "—" } }
                            @for circuit in &process.circuits {
                                div { (circuit.provider) " " (circuit_badge(t, zone, circuit.state)) }
                            }
                        }
                    }
                }
            }))
        }
    };
    Ok(respond(
        StatusCode::OK,
        signed.lang,
        shell(&signed, Nav::Providers, t.nav_providers, body),
    ))
}

/// The first 8 characters of a process id (a column heading).
fn short(id: &str) -> String {
    id.chars().take(8).collect()
}

fn circuit_badge(t: &Texts, zone: &crate::Zone, state: CircuitState) -> Markup {
    match state {
        CircuitState::Closed { failures } => html! {
            span.badge.b-ok { (t.circuit_closed) }
            @if failures > 0 { " " span.muted { (failures) " " (t.failures) } }
        },
        CircuitState::Open { until } => html! {
            span.badge.b-bad { (t.circuit_open) } " " span.muted { (t.until) " " (zone.format(until)) }
        },
        CircuitState::HalfOpen { trial } => html! {
            span.badge.b-wait { (t.circuit_half_open) }
            @if trial { " " span.muted { (t.trial_running) } }
        },
    }
}

/// The acquirer a path names, as stored now; unknown or malformed is 404.
async fn find(signed: &Signed, text: &str) -> Result<AcquirerProvider, Failure> {
    let name = ProviderName::parse(text).map_err(|_| signed.fail(Problem::NotFound))?;
    signed
        .ask_found(signed.state.ports.operator.provider(name.as_str()))
        .await
}

async fn set_enabled(posted: Posted, path: web::Path<String>, enabled: bool) -> Answer {
    posted.need(Need::Administer)?;
    let signed = &posted.signed;
    let provider = find(signed, &path).await?;
    let changes = ProviderChanges {
        enabled: Some(enabled),
        ..ProviderChanges::default()
    };
    let updated = match signed
        .state
        .ports
        .operator
        .update_provider(provider.name.as_str(), changes)
        .await
    {
        Ok(updated) => updated,
        Err(ProviderError::Unknown(_)) => return Err(signed.fail(Problem::NotFound)),
        Err(invalid @ (ProviderError::Invalid { .. } | ProviderError::NameTaken(_))) => {
            return Err(signed.fail(Problem::BadRequest(invalid.to_string())))
        }
        Err(ProviderError::Store(e)) => return Err(signed.fail(e)),
    };
    let name = updated.name.as_str();
    toggled(
        &posted,
        "provider",
        name,
        provider.enabled,
        updated.enabled,
        LIST,
    )
    .await
}

/// `POST /admin/providers/{name}/enable` (admin).
pub(crate) async fn enable(posted: Posted, path: web::Path<String>) -> Answer {
    set_enabled(posted, path, true).await
}

/// `POST /admin/providers/{name}/disable` (admin).
pub(crate) async fn disable(posted: Posted, path: web::Path<String>) -> Answer {
    set_enabled(posted, path, false).await
}
