//! Times as text: Unix seconds ⇄ RFC 3339 UTC (`2026-11-29T12:00:00Z`), in the
//! proleptic Gregorian calendar. The calendar arithmetic is `jiff`'s; nothing here
//! reads a clock or a time-zone database (every time is UTC).

use std::ops::Range;

use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::Offset;

/// Seconds in 400 Gregorian years (146 097 days): the calendar repeats with this
/// period, weekdays and leap days included.
const ERA_SECS: i64 = 146_097 * 86_400;

/// A time [`parse_time`] does not understand; its text says what is accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a time like 2026-11-29T12:00:00Z, 2026-11-29 or Unix seconds")]
pub struct TimeError(pub String);

/// Unix seconds → `YYYY-MM-DDTHH:MM:SSZ` (UTC).
///
/// Defined for every `i64`. Years before 1 or after 9999 keep the arithmetic
/// going rather than failing: the year is written with at least four digits,
/// with a `-` sign when it is negative (`-001-…` is the year 2 BC).
pub fn rfc3339(unix_secs: i64) -> String {
    // jiff's timestamps span the years -9999..=9999. Every time is written as one
    // in [1970, 2370) with the same month, day and time of day, 400·`eras` years
    // earlier: so the whole `i64` range is covered, through one code path.
    let eras = unix_secs.div_euclid(ERA_SECS);
    let ts = Timestamp::from_second(unix_secs.rem_euclid(ERA_SECS))
        .expect("a time within 400 years after 1970 is in jiff's range");
    let dt = Offset::UTC.to_datetime(ts);
    let year = i64::from(dt.year()) + 400 * eras;
    format!(
        "{year:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second()
    )
}

/// A time given on a command line → Unix seconds. Accepted:
///
/// * Unix seconds: whatever `i64`'s `FromStr` accepts (`1795953600`, `-86400`).
/// * A date, `YYYY-MM-DD`, meaning its midnight UTC.
/// * RFC 3339 UTC as [`crate::plan::is_rfc3339_utc`] accepts it,
///   `YYYY-MM-DDTHH:MM:SS[.fraction]Z`; the fraction is dropped.
///
/// The fields are checked for range only, not against the calendar: the month
/// must be 1–12, the day 1–31, the hour 0–23, the minute 0–59 and the second
/// 0–60, and an out-of-calendar value counts on (`2026-02-30` is 2026-03-02, and
/// the leap second `23:59:60` is midnight of the next day, as in Unix time).
pub fn parse_time(s: &str) -> Result<i64, TimeError> {
    if let Ok(n) = s.parse::<i64>() {
        return Ok(n);
    }
    let bad = || TimeError(s.to_owned());
    // A field is the integer at a fixed byte range (on the full form
    // `is_rfc3339_utc` has checked they are all digits).
    let num = |r: Range<usize>| s.get(r).and_then(|x| x.parse::<i64>().ok()).ok_or_else(bad);
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if s.get(4..5) != Some("-")
        || s.get(7..8) != Some("-")
        || !(1..=12).contains(&m)
        || !(1..=31).contains(&d)
    {
        return Err(bad());
    }
    // Midnight of the month's first day, then whole days: four bytes hold a
    // year in -999..=9999, well inside jiff's calendar.
    let month = i16::try_from(y)
        .ok()
        .and_then(|y| Date::new(y, i8::try_from(m).ok()?, 1).ok())
        .and_then(|first| Offset::UTC.to_timestamp(first.at(0, 0, 0, 0)).ok())
        .ok_or_else(bad)?;
    let mut t = month.as_second() + (d - 1) * 86_400;
    if s.len() > 10 {
        if !crate::plan::is_rfc3339_utc(s) {
            return Err(bad());
        }
        t += num(11..13)? * 3600 + num(14..16)? * 60 + num(17..19)?;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known answers, each checked both ways.
    const VECTORS: &[(i64, &str)] = &[
        (0, "1970-01-01T00:00:00Z"),
        (-1, "1969-12-31T23:59:59Z"),
        (-86_400, "1969-12-31T00:00:00Z"),
        (951_782_400, "2000-02-29T00:00:00Z"),
        (951_868_799, "2000-02-29T23:59:59Z"),
        (1_795_910_400, "2026-11-29T00:00:00Z"),
        (1_795_953_600, "2026-11-29T12:00:00Z"),
        (1_796_083_200, "2026-12-01T00:00:00Z"),
        (4_107_542_399, "2100-02-28T23:59:59Z"),
        (4_107_542_400, "2100-03-01T00:00:00Z"),
        (-2_208_988_800, "1900-01-01T00:00:00Z"),
        (-62_135_596_800, "0001-01-01T00:00:00Z"),
        (-62_162_121_600, "0000-02-29T00:00:00Z"),
        (-62_167_219_200, "0000-01-01T00:00:00Z"),
        (253_402_300_799, "9999-12-31T23:59:59Z"),
    ];

    #[test]
    fn known_answers_both_ways() {
        for &(t, text) in VECTORS {
            assert_eq!(rfc3339(t), text, "{t}");
            assert_eq!(parse_time(text), Ok(t), "{text}");
            assert_eq!(parse_time(&t.to_string()), Ok(t));
        }
        assert_eq!(parse_time("2026-11-29"), Ok(1_795_910_400));
        assert_eq!(parse_time("1969-12-31"), Ok(-86_400));
        assert_eq!(parse_time("2026-11-29T12:00:00.25Z"), Ok(1_795_953_600));
    }

    /// Texts read back as the seconds they were written from, across the years
    /// a four-digit field holds.
    #[test]
    fn round_trips() {
        let (first, last) = (parse_time("0000-01-01").unwrap(), 253_402_300_799);
        let step = 7_777_777; // about 90 days, odd: every time of day comes up
        for t in (first..=last).step_by(step) {
            assert_eq!(parse_time(&rfc3339(t)), Ok(t), "{t}");
        }
    }

    /// Beyond jiff's years the text keeps counting, as the hand-written
    /// algorithm it replaces did: every `i64` has one.
    #[test]
    fn every_i64_formats() {
        assert_eq!(rfc3339(-62_167_219_201), "-001-12-31T23:59:59Z");
        assert_eq!(rfc3339(-62_198_755_200), "-001-01-01T00:00:00Z");
        assert_eq!(rfc3339(253_402_300_800), "10000-01-01T00:00:00Z");
        assert_eq!(rfc3339(i64::MAX), "292277026596-12-04T15:30:07Z");
        assert_eq!(rfc3339(i64::MIN), "-292277022657-01-27T08:29:52Z");
        // 400 years on, the same text but for the year.
        for t in [-ERA_SECS - 1, -1, 0, 951_782_400, ERA_SECS - 1] {
            let (a, b) = (rfc3339(t), rfc3339(t + ERA_SECS));
            let year = |s: &str| s[..s.len() - 16].parse::<i64>().unwrap();
            assert_eq!(year(&b), year(&a) + 400, "{a} {b}");
            assert_eq!(a[a.len() - 16..], b[b.len() - 16..]);
        }
    }

    #[test]
    fn what_is_rejected() {
        for bad in [
            "",
            "yesterday",
            "2026-13-01",
            "2026-00-10",
            "2026-11-00",
            "2026-11-32",
            "2026-11--1",
            "2026/11/29",
            "2026-11-2",
            "2026-11-29T",
            "2026-11-29T12:00",
            "2026-11-29T12:00:00",
            "2026-11-29 12:00:00Z",
            "2026-11-29T24:00:00Z",
            "2026-11-29T12:60:00Z",
            "2026-11-29T12:00:61Z",
            "2026-11-29T12:00:00+01:00",
            "2026-11-29T12:00:00.Z",
            "2026-11-29T12:00:00z",
            "2026-11-29Z",
            "+026-11-29T12:00:00Z",
            " 2026-11-29",
            "99999999999999999999",
            "2026-1\u{e9}-2",
        ] {
            let err = parse_time(bad).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "`{bad}` is not a time like 2026-11-29T12:00:00Z, 2026-11-29 or Unix seconds"
                )
            );
        }
    }

    /// What the hand-written parser accepted beyond the calendar is still
    /// accepted, with the same value.
    #[test]
    fn out_of_calendar_fields_count_on() {
        // A leap second is the next second (Unix time has none).
        assert_eq!(parse_time("2016-12-31T23:59:60Z"), Ok(1_483_228_800));
        assert_eq!(rfc3339(1_483_228_800), "2017-01-01T00:00:00Z");
        assert_eq!(parse_time("2026-02-30"), parse_time("2026-03-02"));
        assert_eq!(
            parse_time("2026-04-31T01:00:00Z"),
            parse_time("2026-05-01T01:00:00Z")
        );
        // A fraction is dropped, not rounded.
        assert_eq!(parse_time("1970-01-01T00:00:00.999Z"), Ok(0));
        assert_eq!(parse_time("1969-12-31T23:59:59.5Z"), Ok(-1));
        // A bare date's fields are read as integers, sign included.
        assert_eq!(parse_time("-001-01-01"), Ok(-62_198_755_200));
        assert_eq!(parse_time("2026-+1-+1"), parse_time("2026-01-01"));
        assert_eq!(parse_time("+0"), Ok(0));
    }
}
