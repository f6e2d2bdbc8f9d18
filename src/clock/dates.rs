//! Dates from Unix seconds and back (UTC), for timestamps written by the host and the twin
//! alike, through jiff: RFC 3339 and the ISO 8601 basic form, read and written; a date that is
//! not on the calendar (`2026-02-31`) is refused, not rolled over into the next month.

use jiff::Timestamp;
use jiff::fmt::strtime;

/// 2026-01-01T00:00:00Z: where a virtual clock's time zero falls on the calendar.
pub const VIRTUAL_EPOCH_UNIX_SECONDS: i64 = 1_767_225_600;

/// The instant of Unix seconds, clamped to what a calendar holds (years -9999 to 9999).
fn instant(unix_seconds: i64) -> Timestamp {
    let seconds = unix_seconds.clamp(Timestamp::MIN.as_second(), Timestamp::MAX.as_second());
    Timestamp::from_second(seconds).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// `unix_seconds` written with a strftime `format` in UTC.
pub fn format_utc(format: &str, unix_seconds: i64) -> String {
    strtime::format(format, instant(unix_seconds)).unwrap_or_default()
}

/// RFC 3339 of a Unix instant: `2026-01-01T00:09:24Z`.
pub fn rfc3339_utc(unix_seconds: i64) -> String {
    format_utc("%Y-%m-%dT%H:%M:%SZ", unix_seconds)
}

/// Unix seconds of an RFC 3339 time (`2026-01-01T00:09:24Z`, `2026-01-01T09:09:24+09:00`;
/// fractions of a second dropped); None when it is not one, or names a day the month lacks.
pub fn parse_rfc3339_utc(text: &str) -> Option<i64> {
    text.parse::<Timestamp>().ok().map(Timestamp::as_second)
}

/// ISO 8601 basic form (`20260101T000924Z`): a timestamp a Kubernetes label value can hold.
pub fn iso_basic_utc(unix_seconds: i64) -> String {
    format_utc("%Y%m%dT%H%M%SZ", unix_seconds)
}

/// Unix seconds of an ISO 8601 basic UTC time (`20260101T000924Z`, SigV4's `X-Amz-Date`);
/// None when it is not one.
pub fn parse_iso_basic_utc(text: &str) -> Option<i64> {
    // Exactly this shape: strptime would also take fewer digits in a field.
    let shape = text.len() == 16
        && text.bytes().enumerate().all(|(i, b)| match i {
            8 => b == b'T',
            15 => b == b'Z',
            _ => b.is_ascii_digit(),
        });
    if !shape {
        return None;
    }
    let parsed = strtime::parse("%Y%m%dT%H%M%SZ", text).ok()?;
    let civil = parsed.to_datetime().ok()?;
    civil
        .to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|zoned| zoned.timestamp().as_second())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_virtual_epoch_and_a_label_safe_form() {
        assert_eq!(
            rfc3339_utc(VIRTUAL_EPOCH_UNIX_SECONDS),
            "2026-01-01T00:00:00Z"
        );
        assert_eq!(
            iso_basic_utc(VIRTUAL_EPOCH_UNIX_SECONDS + 564),
            "20260101T000924Z"
        );
        assert_eq!(
            parse_rfc3339_utc("2026-01-01T00:00:00Z"),
            Some(VIRTUAL_EPOCH_UNIX_SECONDS)
        );
    }

    #[test]
    fn rfc3339_reads_back_what_it_writes_and_takes_offsets() {
        let t = VIRTUAL_EPOCH_UNIX_SECONDS + 86_400 * 335 + 3_723;
        assert_eq!(parse_rfc3339_utc(&rfc3339_utc(t)), Some(t));
        assert_eq!(
            parse_rfc3339_utc("2026-12-03T06:00:00.123Z"),
            parse_rfc3339_utc("2026-12-03T06:00:00Z")
        );
        assert_eq!(
            parse_rfc3339_utc("2026-12-03T15:00:00+09:00"),
            parse_rfc3339_utc("2026-12-03T06:00:00Z")
        );
        for bad in ["2026-13-01T00:00:00Z", "2026-12-03 06:00", "yesterday"] {
            assert_eq!(parse_rfc3339_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_day_the_month_does_not_have_is_refused() {
        // The hand-written calendar this replaced read 2026-02-31 as 3 March.
        for bad in [
            "2026-02-31T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2025-02-29T00:00:00Z",
        ] {
            assert_eq!(parse_rfc3339_utc(bad), None, "{bad}");
        }
        assert!(parse_rfc3339_utc("2028-02-29T00:00:00Z").is_some());
        assert_eq!(parse_iso_basic_utc("20260231T000000Z"), None);
    }

    #[test]
    fn iso_basic_round_trips_and_refuses_other_shapes() {
        assert_eq!(
            parse_iso_basic_utc(&iso_basic_utc(1_767_225_600)),
            Some(1_767_225_600)
        );
        assert_eq!(parse_iso_basic_utc("20150830T123600Z"), Some(1_440_938_160));
        for bad in [
            "2015-08-30T12:36:00Z",
            "20151330T123600Z",
            "2015083OT123600Z",
            "20150830T1236Z",
        ] {
            assert_eq!(parse_iso_basic_utc(bad), None, "{bad}");
        }
    }
}
