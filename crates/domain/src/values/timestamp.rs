use std::fmt;

use time::{format_description::well_known::Rfc3339, OffsetDateTime};

/// A moment in UTC with millisecond precision, stored as milliseconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    pub const fn from_millis(millis: i64) -> Self {
        Self(millis)
    }

    pub fn millis(self) -> i64 {
        self.0
    }

    /// This moment plus `seconds`.
    pub fn plus_seconds(self, seconds: i64) -> Self {
        Self(self.0.saturating_add(seconds.saturating_mul(1000)))
    }

    pub fn plus_millis(self, millis: i64) -> Self {
        Self(self.0.saturating_add(millis))
    }

    /// Whole seconds from `now` until this moment, never negative.
    pub fn seconds_after(self, now: Timestamp) -> i64 {
        let left = self.0 - now.0;
        if left <= 0 {
            0
        } else {
            (left + 999) / 1000
        }
    }

    /// The moment an RFC 3339 date and time names (`2026-11-21T10:00:00Z`,
    /// `2026-11-21T13:00:00.250+03:00`), rounded up to the millisecond, so that as a bound
    /// of a range (`>= from`, `< to`) it takes exactly the moments at or after the text;
    /// refused otherwise.
    pub fn parse_rfc3339(text: &str) -> Result<Timestamp, crate::ValueError> {
        let refused = || crate::ValueError::new("must be an RFC 3339 date and time");
        let at = OffsetDateTime::parse(text, &Rfc3339).map_err(|_| refused())?;
        let nanos = at.unix_timestamp_nanos();
        let millis = nanos.div_euclid(1_000_000) + i128::from(nanos.rem_euclid(1_000_000) > 0);
        i64::try_from(millis).map(Timestamp).map_err(|_| refused())
    }

    /// RFC 3339 in UTC with whole seconds, e.g. `2026-11-21T10:00:00Z`.
    pub fn to_rfc3339(self) -> String {
        let seconds = self.0.div_euclid(1000);
        OffsetDateTime::from_unix_timestamp(seconds)
            .ok()
            .and_then(|t| t.format(&Rfc3339).ok())
            .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_string())
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl Timestamp {
    /// The UTC calendar (year, month) of this moment, for card expiry checks.
    pub fn year_month(self) -> (u16, u8) {
        OffsetDateTime::from_unix_timestamp(self.0.div_euclid(1000))
            .map(|t| (u16::try_from(t.year()).unwrap_or(0), u8::from(t.month())))
            .unwrap_or((1970, 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_rfc3339_in_utc() {
        assert_eq!(
            Timestamp::from_millis(1_795_255_200_999).to_rfc3339(),
            "2026-11-21T10:00:00Z"
        );
        assert_eq!(
            Timestamp::from_millis(0).to_rfc3339(),
            "1970-01-01T00:00:00Z"
        );
    }

    #[test]
    fn rfc3339_text_is_read_to_the_millisecond_in_any_offset() {
        let at = |text| Timestamp::parse_rfc3339(text).map(Timestamp::millis);
        assert_eq!(at("2026-11-21T10:00:00Z"), Ok(1_795_255_200_000));
        assert_eq!(at("2026-11-21T13:00:00.999+03:00"), Ok(1_795_255_200_999));
        assert_eq!(
            at("2026-11-21T10:00:00.0005Z"),
            Ok(1_795_255_200_001),
            "rounded up"
        );
        assert_eq!(at("1969-12-31T23:59:59.9995Z"), Ok(0));
        for bad in [
            "",
            "2026-11-21",
            "2026-11-21T10:00:00",
            "10:00:00Z",
            "yesterday",
        ] {
            assert!(at(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn remaining_seconds_round_up_and_stop_at_zero() {
        let now = Timestamp::from_millis(10_000);
        assert_eq!(Timestamp::from_millis(10_001).seconds_after(now), 1);
        assert_eq!(now.plus_seconds(600).seconds_after(now), 600);
        assert_eq!(Timestamp::from_millis(9_000).seconds_after(now), 0);
    }
}
