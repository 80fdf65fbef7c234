//! `GET /admin`: today's figures, the approval rate, today's fee income, the health figures,
//! the last ledger check and the charts. Built from the per-minute counters, the fee income
//! entries of today and `health` only: it never scans operations. `POST /admin/ledger/verify` runs the ledger check now.

use std::collections::BTreeMap;

use actix_web::HttpRequest;
use domain::console::{Actor, FigureKey, LedgerCheck, Need, Overview};
use domain::{Currency, Direction, Timestamp};
use maud::{html, Markup};
use serde_json::json;

use super::actions::{audit, back, flash_of};
use crate::auth::{Posted, Signed};
use crate::i18n::{texts, Texts};
use crate::layout::{direction_name, flash, money, respond, rows_table, status_code_badge};
use crate::paths::OVERVIEW;
use crate::shell::Nav;
use crate::shell::{action_button, shell};
use crate::svg;
use crate::Answer;

/// A day, in milliseconds.
const DAY_MS: i64 = 24 * 3600 * 1000;

pub(crate) async fn show(signed: Signed, req: HttpRequest) -> Answer {
    let state = &signed.state;
    let now = state.now();
    let today = state.zone().today_start(now);
    let from = Timestamp::from_millis(today.millis().min(now.millis() - DAY_MS));
    let counts = signed
        .ask(state.store().minute_counts(from, now.plus_seconds(60)))
        .await?;
    let health = signed
        .ask(state.store().health(now.plus_millis(-DAY_MS)))
        .await?;
    let earned: BTreeMap<Currency, i64> = signed
        .ask(state.store().fee_income(today))
        .await?
        .into_iter()
        .collect();
    let overview = Overview::build(&counts, health, today, now);
    let t = texts(signed.lang);
    let body = html! {
        h1 { (t.nav_overview) }
        (flash(flash_of(&req, signed.lang)))
        (tiles(&signed, t, &overview, &earned))
        div.box {
            h2 { (t.today_since) " " (state.zone().format(today)) }
            (by_direction(t, &overview.today))
            h2 { (t.today_detail) }
            (detail(t, &overview.today))
        }
        div.box {
            h2 { (t.chart_per_minute) }
            (svg::per_minute(t, state.zone(), now, &overview.per_minute))
            h2 { (t.chart_approval) }
            (svg::approval_by_method(t, state.zone(), now, &overview.approval_by_method))
        }
    };
    Ok(respond(
        actix_web::http::StatusCode::OK,
        signed.lang,
        shell(&signed, Nav::Overview, t.nav_overview, body),
    ))
}

/// A rate as a percentage with one decimal, or a dash.
fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "—".to_string(), |r| format!("{:.1}%", r * 100.0))
}

/// The tiles; `earned`: what each currency's fee account earned today.
fn tiles(
    signed: &Signed,
    t: &Texts,
    overview: &Overview,
    earned: &BTreeMap<Currency, i64>,
) -> Markup {
    let health = &overview.health;
    let total: i64 = overview.today.values().map(|(count, _)| count).sum();
    let tile = |class: &'static str, value: String, label: &'static str| {
        html! { div class=(format!("tile {class}")) { div.n { (value) } div.l { (label) } } }
    };
    let flag = |n: i64, class: &'static str| if n > 0 { class } else { "" };
    let zone = signed.state.zone();
    html! {
        div.tiles {
            (tile("", total.to_string(), t.tile_today))
            (tile("", percent(overview.approval_rate), t.tile_approval))
            (tile("", sums(earned), t.tile_fee_income))
            (tile(flag(health.callbacks_pending, "warn"), health.callbacks_pending.to_string(), t.tile_callbacks_pending))
            (tile(flag(health.callbacks_held, "warn"), health.callbacks_held.to_string(), t.tile_callbacks_held))
            (tile(flag(health.callbacks_failed, "bad"), health.callbacks_failed.to_string(), t.tile_callbacks_failed))
            (tile(flag(health.stuck_processing, "warn"), health.stuck_processing.to_string(), t.tile_stuck))
            (tile(flag(health.open_discrepancies, "bad"), health.open_discrepancies.to_string(), t.tile_discrepancies))
            div class=(format!("tile {}", health.last_check.as_ref().map_or("warn", |c| flag(c.mismatches, "bad")))) {
                @match &health.last_check {
                    Some(check) => {
                        div.n { (check.mismatches) }
                        div.l {
                            (t.tile_ledger) " " (zone.format(check.at)) " · " (check.actor.as_str())
                        }
                    }
                    None => {
                        div.n { "—" }
                        div.l { (t.tile_ledger_never) }
                    }
                }
                @if signed.role.allows(Need::Act) {
                    (action_button(signed, "/admin/ledger/verify", t.verify_now, &[], false))
                }
            }
        }
    }
}

/// Sums per currency, written `12.00 RUB, 3.50 USD`.
fn sums(amounts: &BTreeMap<Currency, i64>) -> String {
    if amounts.is_empty() {
        return "—".to_string();
    }
    amounts
        .iter()
        .map(|(currency, minor)| money(*minor, *currency))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Today by direction and status: counts and sums per currency.
fn by_direction(t: &Texts, today: &BTreeMap<FigureKey, (i64, i64)>) -> Markup {
    let mut cells: BTreeMap<(Direction, u8), (i64, BTreeMap<Currency, i64>)> = BTreeMap::new();
    for (key, (count, amount)) in today {
        let cell = cells.entry((key.direction, key.status)).or_default();
        cell.0 += count;
        *cell.1.entry(key.currency).or_insert(0) += amount;
    }
    html! {
        div.scroll {
            table {
                thead { tr {
                    th { (t.col_direction) }
                    @for code in [1u8, 2, 3] { th.num colspan="2" { (status_code_badge(t, code)) } }
                } }
                tbody {
                    @for direction in Direction::ALL {
                        tr {
                            td { (direction_name(t, direction)) }
                            @for code in [1u8, 2, 3] {
                                @let cell = cells.get(&(direction, code));
                                td.num { (cell.map_or(0, |c| c.0)) }
                                td.num { (cell.map_or_else(|| "—".to_string(), |c| sums(&c.1))) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Today by direction, method, status and currency.
fn detail(t: &Texts, today: &BTreeMap<FigureKey, (i64, i64)>) -> Markup {
    rows_table(
        today.is_empty(),
        t.none_today,
        html! {
            th { (t.col_direction) } th { (t.col_method) } th { (t.col_status) }
            th.num { (t.col_count) } th.num { (t.col_amount) }
        },
        html! {
            @for (key, (count, amount)) in today {
                tr {
                    td { (direction_name(t, key.direction)) }
                    td { (key.method.as_str()) }
                    td { (status_code_badge(t, key.status)) }
                    td.num { (count) }
                    td.num { (money(*amount, key.currency)) }
                }
            }
        },
    )
}

/// `POST /admin/ledger/verify` (operator or above): runs the ledger check, records it with
/// the operator and the number of mismatches, audits it and goes back to the overview.
pub(crate) async fn verify(posted: Posted) -> Answer {
    posted.need(Need::Act)?;
    let signed = &posted.signed;
    let state = &signed.state;
    let report = signed.ask(state.ports.operator.verify_ledger()).await?;
    let count = i64::try_from(report.problems()).unwrap_or(i64::MAX);
    let check = LedgerCheck {
        at: state.now(),
        actor: Actor::operator(&signed.name),
        mismatches: count,
    };
    signed
        .ask(state.store().record_ledger_check(&check))
        .await?;
    audit(
        &posted,
        "ledger.verify",
        "ledger",
        None,
        Some(json!({ "mismatches": count })),
    )
    .await?;
    if count == 0 {
        Ok(back(OVERVIEW, true, "ledger_holds"))
    } else {
        tracing::warn!(mismatches = count, "the ledger check found mismatches");
        Ok(back(OVERVIEW, false, "ledger_mismatch"))
    }
}
