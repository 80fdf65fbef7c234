//! The console's time zone: every time it shows, "today" and the date-range filter are in it.
//!
//! The IANA database is compiled in (jiff's `tzdb-bundle-always`), so a zone name works the
//! same on a machine without `/usr/share/zoneinfo`.

use std::fmt;

use domain::statement::Day;
use domain::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;

/// A named time zone (`UTC`, `Europe/Moscow`, ...).
#[derive(Clone)]
pub struct Zone {
    name: String,
    tz: TimeZone,
}

impl fmt::Debug for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Zone({})", self.name)
    }
}

impl Default for Zone {
    fn default() -> Self {
        Self::utc()
    }
}

impl Zone {
    /// `UTC`, the default.
    pub fn utc() -> Zone {
        Zone {
            name: "UTC".to_string(),
            tz: TimeZone::UTC,
        }
    }

    /// The zone with this IANA name, e.g. `Europe/Moscow` or `UTC`; an unknown name is an
    /// error that says so.
    pub fn parse(name: &str) -> Result<Zone, String> {
        let name = name.trim();
        if name.is_empty() {
            return Err("the console's time zone must be named, e.g. UTC or Europe/Moscow".into());
        }
        let tz = TimeZone::get(name).map_err(|_| {
            format!(
                "{name:?} is not a time zone name of the IANA database (e.g. UTC, Europe/Moscow)"
            )
        })?;
        let name = tz.iana_name().unwrap_or(name).to_string();
        Ok(Zone { name, tz })
    }

    /// The zone's name, as shown on every page.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Midnight of `now`'s day in this zone (the start of "today").
    pub fn today_start(&self, now: Timestamp) -> Timestamp {
        let zoned = instant(now).to_zoned(self.tz.clone());
        match zoned.start_of_day() {
            Ok(start) => Timestamp::from_millis(start.timestamp().as_millisecond()),
            // Only at the very edges of jiff's range (years -9999 and 9999).
            Err(_) => now,
        }
    }

    /// `2026-11-23 14:05:09`, in this zone.
    pub fn format(&self, ts: Timestamp) -> String {
        instant(ts)
            .to_zoned(self.tz.clone())
            .strftime("%Y-%m-%d %H:%M:%S")
            .to_string()
    }

    /// `2026-11-23`: the local date of `ts` in this zone.
    pub fn date(&self, ts: Timestamp) -> String {
        instant(ts)
            .to_zoned(self.tz.clone())
            .strftime("%Y-%m-%d")
            .to_string()
    }

    /// `14:05`, in this zone (chart labels).
    pub fn hour_minute(&self, ts: Timestamp) -> String {
        instant(ts)
            .to_zoned(self.tz.clone())
            .strftime("%H:%M")
            .to_string()
    }

    /// A date-range input as a local time in this zone: `YYYY-MM-DD` (midnight),
    /// `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS` (what `<input type=date>` and
    /// `<input type=datetime-local>` send). A local time that a clock change skips is moved
    /// forward by the gap's length; one that occurs twice is the earlier.
    pub fn parse_local(&self, text: &str) -> Result<Timestamp, String> {
        let refused =
            || format!("{text:?} is not a date (YYYY-MM-DD) or a date and time (YYYY-MM-DDTHH:MM)");
        let civil = civil(text).ok_or_else(refused)?;
        let at = self.tz.to_timestamp(civil).map_err(|_| refused())?;
        Ok(Timestamp::from_millis(at.as_millisecond()))
    }

    /// The local calendar days from `from` to `to` (`YYYY-MM-DD`, both included), each with
    /// the instants it runs between in this zone (a day of a clock change is 23 or 25 hours
    /// long). Refused: a malformed or impossible date, `to` before `from`, or more than
    /// `most` days.
    pub fn days(&self, from: &str, to: &str, most: usize) -> Result<Vec<Day>, String> {
        let date = |text: &str| {
            civil(text)
                .filter(|_| text.len() == 10)
                .map(|t| t.date())
                .ok_or_else(|| format!("{text:?} is not a date (YYYY-MM-DD)"))
        };
        let (first, last) = (date(from)?, date(to)?);
        if last < first {
            return Err(format!("{to} is before {from}"));
        }
        let start = |d: jiff::civil::Date| {
            d.to_zoned(self.tz.clone())
                .map(|z| Timestamp::from_millis(z.timestamp().as_millisecond()))
                .map_err(|e| format!("{d}: {e}"))
        };
        let mut days = Vec::new();
        let mut day = first;
        while day <= last {
            if days.len() == most {
                return Err(format!("a statement covers at most {most} days"));
            }
            let next = day.tomorrow().map_err(|e| format!("{day}: {e}"))?;
            days.push(Day {
                date: day.to_string(),
                start: start(day)?,
                end: start(next)?,
            });
            day = next;
        }
        Ok(days)
    }

    /// The days from `from` to `to` as [`Zone::days`] gives them, a refusal naming the field
    /// at fault with why: `from` when it is not a date, else `to` (not a date, before `from`,
    /// or more than `most` days on).
    pub fn days_between(
        &self,
        from: &str,
        to: &str,
        most: usize,
    ) -> Result<Vec<Day>, (&'static str, String)> {
        self.days(from, from, 1).map_err(|why| ("from", why))?;
        self.days(from, to, most).map_err(|why| ("to", why))
    }
}

/// The jiff instant of a timestamp (clamped to jiff's range, years -9999 to 9999).
fn instant(ts: Timestamp) -> jiff::Timestamp {
    let millis = ts.millis().clamp(
        jiff::Timestamp::MIN.as_millisecond(),
        jiff::Timestamp::MAX.as_millisecond(),
    );
    jiff::Timestamp::from_millisecond(millis).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

/// `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS`, every field in range.
fn civil(text: &str) -> Option<DateTime> {
    let bytes = text.as_bytes();
    let shape = |pattern: &[u8]| {
        bytes.len() == pattern.len()
            && bytes.iter().zip(pattern).all(|(b, p)| match p {
                b'9' => b.is_ascii_digit(),
                other => b == other,
            })
    };
    let number = |range: std::ops::Range<usize>| text.get(range)?.parse::<i16>().ok();
    let (hour, minute, second) = if shape(b"9999-99-99") {
        (0, 0, 0)
    } else if shape(b"9999-99-99T99:99") {
        (number(11..13)?, number(14..16)?, 0)
    } else if shape(b"9999-99-99T99:99:99") {
        (number(11..13)?, number(14..16)?, number(17..19)?)
    } else {
        return None;
    };
    let small = |n: i16| i8::try_from(n).ok();
    DateTime::new(
        number(0..4)?,
        small(number(5..7)?)?,
        small(number(8..10)?)?,
        small(hour)?,
        small(minute)?,
        small(second)?,
        0,
    )
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-23T14:05:09Z.
    const AFTERNOON: Timestamp = Timestamp::from_millis(1_795_442_709_000);

    #[test]
    fn utc_today_starts_at_midnight_utc() {
        let zone = Zone::parse("UTC").expect("known");
        assert_eq!(zone.name(), "UTC");
        let start = zone.today_start(AFTERNOON);
        assert_eq!(start.to_rfc3339(), "2026-11-23T00:00:00Z");
        assert_eq!(
            zone.today_start(start),
            start,
            "midnight is its own day's start"
        );
        assert_eq!(
            zone.today_start(start.plus_millis(-1)).to_rfc3339(),
            "2026-11-22T00:00:00Z"
        );
    }

    #[test]
    fn moscow_today_starts_at_midnight_moscow_time() {
        let zone = Zone::parse("Europe/Moscow").expect("known");
        assert_eq!(zone.name(), "Europe/Moscow");
        // 14:05 UTC is 17:05 in Moscow (UTC+3): the day began at 21:00 UTC the day before.
        assert_eq!(
            zone.today_start(AFTERNOON).to_rfc3339(),
            "2026-11-22T21:00:00Z"
        );
        // 22:30 UTC is already 01:30 of the next day in Moscow.
        let late = Timestamp::from_millis(AFTERNOON.millis() + (8 * 3600 + 25 * 60) * 1000);
        assert_eq!(late.to_rfc3339(), "2026-11-23T22:30:09Z");
        assert_eq!(zone.today_start(late).to_rfc3339(), "2026-11-23T21:00:00Z");
        assert_eq!(zone.format(AFTERNOON), "2026-11-23 17:05:09");
        assert_eq!(zone.hour_minute(AFTERNOON), "17:05");
    }

    #[test]
    fn times_are_shown_in_the_zone() {
        assert_eq!(Zone::utc().format(AFTERNOON), "2026-11-23 14:05:09");
        let tokyo = Zone::parse("Asia/Tokyo").expect("known");
        assert_eq!(tokyo.format(AFTERNOON), "2026-11-23 23:05:09");
    }

    #[test]
    fn unknown_or_empty_names_are_refused() {
        for bad in ["", "  ", "Mars/Olympus", "Europe/Moskva", "UTC+3"] {
            assert!(Zone::parse(bad).is_err(), "{bad:?}");
        }
        assert!(Zone::parse("Nowhere/Land")
            .expect_err("unknown")
            .contains("Nowhere/Land"));
    }

    #[test]
    fn filter_inputs_are_local_times_in_the_zone() {
        let moscow = Zone::parse("Europe/Moscow").expect("known");
        let day = moscow.parse_local("2026-11-23").expect("a date");
        assert_eq!(day.to_rfc3339(), "2026-11-22T21:00:00Z");
        let minute = moscow
            .parse_local("2026-11-23T17:05")
            .expect("a date and time");
        assert_eq!(minute.to_rfc3339(), "2026-11-23T14:05:00Z");
        let second = moscow
            .parse_local("2026-11-23T17:05:09")
            .expect("with seconds");
        assert_eq!(second, AFTERNOON);
        let utc = Zone::utc().parse_local("2026-11-23T14:05").expect("valid");
        assert_eq!(utc.to_rfc3339(), "2026-11-23T14:05:00Z");
    }

    #[test]
    fn malformed_or_impossible_inputs_are_refused() {
        let zone = Zone::utc();
        for bad in [
            "",
            "2026-11-23 14:05",
            "2026-11-32",
            "2026-02-30",
            "2026-13-01",
            "2026-11-23T24:00",
            "2026-11-23T14:60",
            "26-11-23",
            "2026-1-23",
            "+2026-11-23",
            "2026-11-23T14:05Z",
            "yesterday",
        ] {
            assert!(zone.parse_local(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn days_run_from_local_midnight_to_local_midnight_both_dates_included() {
        let moscow = Zone::parse("Europe/Moscow").expect("known");
        let days = moscow
            .days("2026-11-30", "2026-12-01", 366)
            .expect("two days");
        let shown: Vec<(String, String, String)> = days
            .iter()
            .map(|d| (d.date.clone(), d.start.to_rfc3339(), d.end.to_rfc3339()))
            .collect();
        assert_eq!(
            shown,
            vec![
                (
                    "2026-11-30".into(),
                    "2026-11-29T21:00:00Z".into(),
                    "2026-11-30T21:00:00Z".into()
                ),
                (
                    "2026-12-01".into(),
                    "2026-11-30T21:00:00Z".into(),
                    "2026-12-01T21:00:00Z".into()
                ),
            ]
        );
        // Berlin's spring day is 23 hours long.
        let berlin = Zone::parse("Europe/Berlin").expect("known");
        let spring = berlin.days("2026-03-29", "2026-03-29", 1).expect("one day");
        assert_eq!(
            spring[0].end.millis() - spring[0].start.millis(),
            23 * 3_600_000
        );
        assert_eq!(
            Zone::utc()
                .days("2026-12-31", "2027-01-01", 366)
                .expect("two")
                .len(),
            2
        );
    }

    #[test]
    fn bad_day_ranges_are_refused() {
        let utc = Zone::utc();
        assert!(
            utc.days("2026-12-02", "2026-12-01", 366).is_err(),
            "backwards"
        );
        assert!(
            utc.days("2026-12-01T00:00", "2026-12-01", 366).is_err(),
            "a time"
        );
        assert!(
            utc.days("2026-02-30", "2026-03-01", 366).is_err(),
            "no such date"
        );
        assert!(
            utc.days("2026-01-01", "2027-01-02", 366).is_err(),
            "367 days"
        );
        assert_eq!(
            utc.days("2026-01-01", "2026-12-31", 365).map(|d| d.len()),
            Ok(365)
        );
    }

    #[test]
    fn a_refused_day_range_names_its_field() {
        let moscow = Zone::parse("Europe/Moscow").expect("known");
        assert_eq!(moscow.date(AFTERNOON), "2026-11-23");
        assert_eq!(Zone::utc().date(Timestamp::from_millis(0)), "1970-01-01");
        let named = |from, to| {
            moscow
                .days_between(from, to, 31)
                .map_err(|(field, _)| field)
        };
        assert_eq!(named("2026-11-31", "2026-11-01"), Err("from"));
        assert_eq!(named("2026-11-02", "2026-11-01"), Err("to"));
        assert_eq!(named("2026-11-01", "tomorrow"), Err("to"));
        assert_eq!(named("2026-11-01", "2026-12-02"), Err("to"));
        assert_eq!(named("2026-11-01", "2026-12-01").map(|d| d.len()), Ok(31));
    }

    #[test]
    fn a_skipped_local_time_is_taken_after_the_gap() {
        // Berlin skipped 02:00-03:00 on 2026-03-29.
        let berlin = Zone::parse("Europe/Berlin").expect("known");
        let at = berlin.parse_local("2026-03-29T02:30").expect("in the gap");
        assert_eq!(at.to_rfc3339(), "2026-03-29T01:30:00Z");
    }
}
