//! The overview's charts as inline SVG drawn on the server (no script): operations per minute
//! over the last hour, stacked by status, and each method's approval rate per hour over the
//! last 24 hours.

use std::collections::BTreeMap;

use domain::{Direction, PaymentMethod, Timestamp};
use maud::{html, Markup};

use super::i18n::Texts;
use super::zone::Zone;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 200.0;
const LEFT: f64 = 44.0;
const RIGHT: f64 = 8.0;
const TOP: f64 = 10.0;
const BOTTOM: f64 = 24.0;

/// The statuses' colours: approved, declined, processing.
const STATUS_COLOURS: [&str; 3] = ["#2e8b57", "#c0392b", "#e0a100"];

/// One colour per method, in [`PaymentMethod::ALL`] order.
const METHOD_COLOURS: [&str; 6] = [
    "#1a56b8", "#2e8b57", "#8e44ad", "#e67e22", "#c0392b", "#16a085",
];

fn plot_width() -> f64 {
    WIDTH - LEFT - RIGHT
}

fn plot_height() -> f64 {
    HEIGHT - TOP - BOTTOM
}

/// The start of the minute `ago` minutes before `now`'s.
fn minute_start(now: Timestamp, ago: i64) -> Timestamp {
    let minute = now.millis().div_euclid(60_000) - ago;
    Timestamp::from_millis(minute * 60_000)
}

/// The smallest 1, 2 or 5 times a power of ten at least `n` (at least 1).
fn nice_ceiling(n: i64) -> i64 {
    let mut step = 1i64;
    loop {
        for factor in [1, 2, 5] {
            if step.saturating_mul(factor) >= n {
                return step.saturating_mul(factor);
            }
        }
        step = step.saturating_mul(10);
    }
}

fn num(x: f64) -> String {
    format!("{x:.1}")
}

/// Operations per minute over the last hour (60 bars, oldest first), each bar stacked
/// approved, declined, processing; a bar's title gives its minute and counts.
pub(crate) fn per_minute(t: &Texts, zone: &Zone, now: Timestamp, minutes: &[[i64; 3]]) -> Markup {
    let top = nice_ceiling(
        minutes
            .iter()
            .map(|m| m.iter().sum::<i64>())
            .max()
            .unwrap_or(0),
    );
    let slot = plot_width() / minutes.len().max(1) as f64;
    let bar = (slot * 0.8).max(1.0);
    let scale = plot_height() / top as f64;
    let names = [t.status_approved, t.status_declined, t.status_processing];
    let count = minutes.len() as i64;
    html! {
        svg.chart role="img" aria-label=(t.chart_per_minute) viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) width=(WIDTH) height=(HEIGHT) xmlns="http://www.w3.org/2000/svg" {
            (grid(&[(0.0, "0".to_string()), (0.5, half(top)), (1.0, top.to_string())]))
            @for (i, counts) in minutes.iter().enumerate() {
                @let x = LEFT + i as f64 * slot + (slot - bar) / 2.0;
                @let at = minute_start(now, count - 1 - i as i64);
                g.bar {
                    title {
                        (zone.hour_minute(at)) " — "
                        @for (k, name) in names.iter().enumerate() {
                            @if k > 0 { ", " }
                            (name) ": " (counts[k])
                        }
                    }
                    @let mut base = TOP + plot_height();
                    @for (k, value) in counts.iter().enumerate() {
                        @if *value > 0 {
                            @let h = *value as f64 * scale;
                            @let y = { base -= h; base };
                            rect x=(num(x)) y=(num(y)) width=(num(bar)) height=(num(h)) fill=(STATUS_COLOURS[k]) {}
                        }
                    }
                }
            }
            @for i in [0usize, 15, 30, 45, 59] {
                @if i < minutes.len() {
                    text x=(num(LEFT + (i as f64 + 0.5) * slot)) y=(num(HEIGHT - 6.0)) font-size="11" text-anchor=(anchor(i, minutes.len())) fill="#5a6170" {
                        (zone.hour_minute(minute_start(now, count - 1 - i as i64)))
                    }
                }
            }
        }
        div.legend {
            @for (k, name) in names.iter().enumerate() {
                span { i style=(format!("background:{}", STATUS_COLOURS[k])) {} (name) }
            }
        }
    }
}

/// Where an axis label sits on its point: the last one ends there, so it stays inside.
fn anchor(i: usize, count: usize) -> &'static str {
    if i + 1 >= count {
        "end"
    } else {
        "middle"
    }
}

/// Half of `top`, as an axis label (`2.5` for 5).
fn half(top: i64) -> String {
    if top % 2 == 0 {
        (top / 2).to_string()
    } else {
        format!("{:.1}", top as f64 / 2.0)
    }
}

/// Horizontal grid lines at fractions of the plot's height, labelled on the left.
fn grid(lines: &[(f64, String)]) -> Markup {
    html! {
        @for (fraction, label) in lines {
            @let y = TOP + plot_height() * (1.0 - fraction);
            line x1=(num(LEFT)) x2=(num(WIDTH - RIGHT)) y1=(num(y)) y2=(num(y)) stroke="#e3e5e8" stroke-width="1" {}
            text x=(num(LEFT - 6.0)) y=(num(y + 4.0)) font-size="11" text-anchor="end" fill="#5a6170" { (label) }
        }
    }
}

/// Each direction and method's approval rate per hour over the last 24 hours (oldest first):
/// one line each (payouts dashed), broken where an hour had no final operation.
pub(crate) fn approval_by_method(
    t: &Texts,
    zone: &Zone,
    now: Timestamp,
    rates: &BTreeMap<(Direction, PaymentMethod), Vec<Option<f64>>>,
) -> Markup {
    let hours = rates.values().map(Vec::len).max().unwrap_or(24).max(2);
    let step = plot_width() / (hours - 1) as f64;
    let point = |i: usize, rate: f64| {
        (
            LEFT + i as f64 * step,
            TOP + plot_height() * (1.0 - rate.clamp(0.0, 1.0)),
        )
    };
    let colour = |(_, method): &(Direction, PaymentMethod)| {
        let index = PaymentMethod::ALL
            .iter()
            .position(|m| m == method)
            .unwrap_or(0);
        METHOD_COLOURS[index % METHOD_COLOURS.len()]
    };
    let dashes = |(direction, _): &(Direction, PaymentMethod)| match direction {
        Direction::Deposit => "none",
        Direction::Withdrawal => "6 3",
    };
    let label = |(direction, method): &(Direction, PaymentMethod)| {
        format!("{} {}", direction.as_str(), method.as_str())
    };
    // The start of hour bucket `i`: it covers the 60 minutes up to `(hours - 1 - i)` hours ago.
    let hour_start = |i: usize| minute_start(now, (hours - 1 - i) as i64 * 60 + 59);
    html! {
        @if rates.is_empty() {
            p.muted { (t.chart_no_final) }
        } @else {
            svg.chart role="img" aria-label=(t.chart_approval) viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) width=(WIDTH) height=(HEIGHT) xmlns="http://www.w3.org/2000/svg" {
                (grid(&[(0.0, "0%".to_string()), (0.5, "50%".to_string()), (1.0, "100%".to_string())]))
                @for (key, series) in rates {
                    g {
                        title { (label(key)) }
                        @for segment in segments(series) {
                            @if segment.len() == 1 {
                                @let (x, y) = point(segment[0].0, segment[0].1);
                                circle cx=(num(x)) cy=(num(y)) r="2.5" fill=(colour(key)) {}
                            } @else {
                                polyline fill="none" stroke=(colour(key)) stroke-width="2" stroke-dasharray=(dashes(key))
                                    points=(segment.iter().map(|(i, r)| { let (x, y) = point(*i, *r); format!("{},{}", num(x), num(y)) }).collect::<Vec<_>>().join(" ")) {}
                            }
                        }
                    }
                }
                @for i in [0usize, 6, 12, 18, hours - 1] {
                    @if i < hours {
                        text x=(num(LEFT + i as f64 * step)) y=(num(HEIGHT - 6.0)) font-size="11" text-anchor=(anchor(i, hours)) fill="#5a6170" {
                            (zone.hour_minute(hour_start(i)))
                        }
                    }
                }
            }
            div.legend {
                @for key in rates.keys() {
                    span { i style=(format!("background:{}", colour(key))) {} (label(key)) }
                }
            }
        }
    }
}

/// The runs of consecutive known points of a series, as (index, rate).
fn segments(series: &[Option<f64>]) -> Vec<Vec<(usize, f64)>> {
    let mut runs: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut current: Vec<(usize, f64)> = Vec::new();
    for (i, rate) in series.iter().enumerate() {
        match rate {
            Some(rate) => current.push((i, *rate)),
            None if !current.is_empty() => runs.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        runs.push(current);
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::texts;
    use web_edge::Lang;

    #[test]
    fn axis_tops_are_round() {
        assert_eq!(nice_ceiling(0), 1);
        assert_eq!(nice_ceiling(1), 1);
        assert_eq!(nice_ceiling(3), 5);
        assert_eq!(nice_ceiling(7), 10);
        assert_eq!(nice_ceiling(11), 20);
        assert_eq!(nice_ceiling(201), 500);
    }

    #[test]
    fn gaps_split_a_series() {
        let series = [
            Some(0.5),
            Some(1.0),
            None,
            None,
            Some(0.0),
            None,
            Some(0.25),
        ];
        assert_eq!(
            segments(&series),
            vec![vec![(0, 0.5), (1, 1.0)], vec![(4, 0.0)], vec![(6, 0.25)]]
        );
        assert!(segments(&[None, None]).is_empty());
    }

    #[test]
    fn sixty_stacked_bars_with_their_minutes() {
        let now = Timestamp::from_millis(1_795_442_709_000); // 2026-11-23T14:05:09Z
        let mut minutes = vec![[0i64; 3]; 60];
        minutes[59] = [3, 1, 0];
        minutes[0] = [0, 0, 2];
        let svg = per_minute(texts(Lang::En), &Zone::utc(), now, &minutes).into_string();
        assert_eq!(
            svg.matches(r#"<g class="bar">"#).count(),
            60,
            "one group per minute"
        );
        assert_eq!(
            svg.matches("<rect").count(),
            3,
            "one rect per non-zero status"
        );
        assert!(svg.contains("<title>14:05 — Approved: 3, Declined: 1, Processing: 0</title>"));
        assert!(svg.contains("<title>13:06 — Approved: 0, Declined: 0, Processing: 2</title>"));
        // The tallest bar (4) reaches the top of the axis (5): 4/5 of the plot's 166 units.
        assert!(svg.contains(r##"height="99.6" fill="#2e8b57""##), "{svg}");
    }

    #[test]
    fn one_line_per_method_broken_at_gaps() {
        let now = Timestamp::from_millis(1_795_442_709_000);
        let mut rates = BTreeMap::new();
        let mut card = vec![None; 24];
        card[20] = Some(1.0);
        card[21] = Some(0.5);
        card[23] = Some(0.0);
        rates.insert((Direction::Deposit, PaymentMethod::Card), card);
        let svg = approval_by_method(texts(Lang::En), &Zone::utc(), now, &rates).into_string();
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert_eq!(svg.matches("<circle").count(), 1, "the lone last hour");
        assert!(svg.contains("<title>deposit card</title>"));
        let empty = approval_by_method(texts(Lang::En), &Zone::utc(), now, &BTreeMap::new());
        assert!(!empty.into_string().contains("<svg"));
    }
}
