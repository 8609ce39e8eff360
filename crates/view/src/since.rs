//! Reading the `since` argument: an RFC 3339 time, a date and time or a time of day on the
//! computer's clock, or a duration back (`10m`, `2h`, `1d`). Anything else is an error that names
//! the forms, so an agent can correct itself. `"last"` and `"cursor:<value>"` name a place
//! after lines already shown ([`since_place`]); the session's cursors say where that is.

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, Duration, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

use crate::ViewError;

/// The longest duration back `since` accepts: no phone keeps logs longer, and it keeps the
/// arithmetic far from overflow.
const LONGEST_BACK: Duration = Duration::days(366);

/// Reads `since`. `None` or blank is the task's start; a time of day is today's on the
/// computer's clock (`local`), or yesterday's when today's is still to come.
pub fn parse_since(
    given: Option<&str>,
    now: OffsetDateTime,
    local: UtcOffset,
    task_start: OffsetDateTime,
) -> Result<OffsetDateTime, ViewError> {
    let Some(text) = given.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(task_start);
    };
    if let Ok(time) = OffsetDateTime::parse(text, &Rfc3339) {
        return Ok(time);
    }
    if let Some(back) = parse_duration(text) {
        return Ok(now - back);
    }
    if let Some(date_time) = parse_date_time(text) {
        return Ok(date_time.assume_offset(local));
    }
    if let Some(time_of_day) = parse_time_of_day(text) {
        let today = now.to_offset(local).date();
        let candidate = PrimitiveDateTime::new(today, time_of_day).assume_offset(local);
        if candidate > now
            && let Some(yesterday) = today.previous_day()
        {
            return Ok(PrimitiveDateTime::new(yesterday, time_of_day).assume_offset(local));
        }
        return Ok(candidate);
    }
    Err(ViewError::Since {
        given: text.to_owned(),
    })
}

/// A `since` that names a place after lines already shown, not a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SincePlace {
    /// `"last"`: after the last line this task was shown of this app on this phone.
    Last,
    /// `"cursor:<value>"`: after the last line of the result that returned the cursor.
    Cursor(String),
}

/// Reads `since` as a place (`last`, `cursor:<value>`), or `None` when it is a time (or left
/// out), for [`parse_since`].
pub fn since_place(given: Option<&str>) -> Option<SincePlace> {
    let text = given.map(str::trim)?;
    if text.eq_ignore_ascii_case("last") {
        return Some(SincePlace::Last);
    }
    text.strip_prefix("cursor:")
        .map(|value| SincePlace::Cursor(value.trim().to_owned()))
}

/// `10m`, `2h`, `1d`, `30s`: a whole number and a unit.
fn parse_duration(text: &str) -> Option<Duration> {
    let unit = text.chars().last()?;
    let number = &text[..text.len() - unit.len_utf8()];
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) || number.len() > 9 {
        return None;
    }
    let n: i64 = number.parse().ok()?;
    let back = match unit {
        's' => Duration::seconds(n),
        'm' => Duration::minutes(n),
        'h' => Duration::hours(n),
        'd' => Duration::days(n),
        _ => return None,
    };
    (back <= LONGEST_BACK).then_some(back)
}

fn parse_date_time(text: &str) -> Option<PrimitiveDateTime> {
    let text = text.replacen('T', " ", 1);
    let (date, time) = text.split_once(' ')?;
    let date = Date::parse(date.trim(), format_description!("[year]-[month]-[day]")).ok()?;
    let time = parse_time_of_day(time.trim())?;
    Some(PrimitiveDateTime::new(date, time))
}

fn parse_time_of_day(text: &str) -> Option<Time> {
    Time::parse(
        text,
        format_description!("[hour]:[minute]:[second].[subsecond]"),
    )
    .or_else(|_| Time::parse(text, format_description!("[hour]:[minute]:[second]")))
    .or_else(|_| Time::parse(text, format_description!("[hour]:[minute]")))
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::{datetime, offset};

    const NOW: OffsetDateTime = datetime!(2026-11-30 12:00:00 UTC);
    const START: OffsetDateTime = datetime!(2026-11-30 11:30:00 UTC);

    fn parse(text: &str) -> Result<OffsetDateTime, ViewError> {
        parse_since(Some(text), NOW, offset!(+1), START)
    }

    #[test]
    fn places_are_told_from_times() {
        assert_eq!(since_place(Some(" last ")), Some(SincePlace::Last));
        assert_eq!(
            since_place(Some("cursor:c-12ab")),
            Some(SincePlace::Cursor("c-12ab".into()))
        );
        assert_eq!(since_place(Some("10m")), None);
        assert_eq!(since_place(None), None);
    }

    #[test]
    fn no_since_is_the_task_start() {
        assert_eq!(parse_since(None, NOW, offset!(+1), START), Ok(START));
        assert_eq!(parse("  "), Ok(START));
    }

    #[test]
    fn rfc3339_times_are_taken_as_they_are() {
        assert_eq!(
            parse("2026-11-30T10:00:00Z"),
            Ok(datetime!(2026-11-30 10:00 UTC))
        );
        assert_eq!(
            parse("2026-11-30T10:00:00.5+02:00"),
            Ok(datetime!(2026-11-30 10:00:00.5 +02:00))
        );
    }

    #[test]
    fn dates_and_times_of_day_are_on_the_computers_clock() {
        assert_eq!(
            parse("2026-11-30 10:00"),
            Ok(datetime!(2026-11-30 10:00 +01:00))
        );
        assert_eq!(
            parse("2026-11-30T10:00:05"),
            Ok(datetime!(2026-11-30 10:00:05 +01:00))
        );
        // 12:00 UTC is 13:00 on a +01:00 clock: 12:30 is today, 14:00 is still to come (yesterday).
        assert_eq!(parse("12:30"), Ok(datetime!(2026-11-30 12:30 +01:00)));
        assert_eq!(parse("14:00"), Ok(datetime!(2026-11-29 14:00 +01:00)));
        assert_eq!(
            parse("12:30:15.250"),
            Ok(datetime!(2026-11-30 12:30:15.25 +01:00))
        );
    }

    #[test]
    fn durations_go_back_from_now() {
        assert_eq!(parse("10m"), Ok(NOW - Duration::minutes(10)));
        assert_eq!(parse("2h"), Ok(NOW - Duration::hours(2)));
        assert_eq!(parse("1d"), Ok(NOW - Duration::days(1)));
        assert_eq!(parse("45s"), Ok(NOW - Duration::seconds(45)));
    }

    #[test]
    fn anything_else_is_an_error_that_names_what_was_given() {
        for bad in [
            "yesterday",
            "10",
            "m",
            "-5m",
            "10x",
            "99999999999d",
            "400d",
            "25:00",
            "2026-13-01 10:00",
            "10m ago",
            "1h30m",
        ] {
            let error = parse(bad).expect_err(bad);
            assert_eq!(
                error,
                ViewError::Since {
                    given: bad.to_owned()
                },
                "{bad}"
            );
        }
    }
}
