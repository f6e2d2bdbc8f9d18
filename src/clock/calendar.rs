//! Dates from Unix seconds and back (UTC, proleptic Gregorian), for timestamps written by the
//! host and the twin alike.

/// 2026-01-01T00:00:00Z: where a virtual clock's time zero falls on the calendar.
pub const VIRTUAL_EPOCH_UNIX_SECONDS: i64 = 1_767_225_600;

/// `(year, month, day, hour, minute, second)` of a Unix instant.
pub fn utc(unix_seconds: i64) -> (i64, i64, i64, i64, i64, i64) {
    let (days, rem) = (
        unix_seconds.div_euclid(86_400),
        unix_seconds.rem_euclid(86_400),
    );
    let (year, month, day) = civil_from_days(days);
    (year, month, day, rem / 3600, rem % 3600 / 60, rem % 60)
}

/// RFC 3339 of a Unix instant: `2026-01-01T00:09:24Z`.
pub fn rfc3339_utc(unix_seconds: i64) -> String {
    let (year, month, day, hour, minute, second) = utc(unix_seconds);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
}

/// Unix seconds of `2026-01-01T00:09:24Z` (a UTC RFC 3339 time, fractions of a second
/// ignored); None when it is not one.
pub fn parse_rfc3339_utc(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let shape = b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && b[16] == b':'
        && matches!(b[b.len() - 1], b'Z' | b'z');
    if !shape {
        return None;
    }
    let num = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    seconds(
        num(0..4)?,
        num(5..7)?,
        num(8..10)?,
        (num(11..13)?, num(14..16)?, num(17..19)?),
    )
}

/// Unix seconds of a UTC date and time of day, when each is in its range.
fn seconds(
    year: i64,
    month: i64,
    day: i64,
    (hour, minute, second): (i64, i64, i64),
) -> Option<i64> {
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || !(0..=23).contains(&hour)
        || !(0..=59).contains(&minute)
        || !(0..=60).contains(&second)
    {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// ISO 8601 basic form (`20260101T000924Z`): a timestamp a Kubernetes label value can hold.
pub fn iso_basic_utc(unix_seconds: i64) -> String {
    let (year, month, day, hour, minute, second) = utc(unix_seconds);
    format!("{year:04}{month:02}{day:02}T{hour:02}{minute:02}{second:02}Z")
}

// Howard Hinnant's civil-date algorithms.
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Unix seconds of an ISO 8601 basic UTC time (`20260101T000924Z`, SigV4's `X-Amz-Date`);
/// None when it is not one.
pub fn parse_iso_basic_utc(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| {
        let part = text.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse::<i64>().ok())
            .flatten()
    };
    seconds(
        num(0..4)?,
        num(4..6)?,
        num(6..8)?,
        (num(9..11)?, num(11..13)?, num(13..15)?),
    )
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
            days_from_civil(2026, 1, 1) * 86_400,
            VIRTUAL_EPOCH_UNIX_SECONDS
        );
    }

    #[test]
    fn rfc3339_reads_back_what_it_writes() {
        let t = VIRTUAL_EPOCH_UNIX_SECONDS + 86_400 * 335 + 3_723;
        assert_eq!(parse_rfc3339_utc(&rfc3339_utc(t)), Some(t));
        assert_eq!(
            parse_rfc3339_utc("2026-12-03T06:00:00.123Z"),
            Some(parse_rfc3339_utc("2026-12-03T06:00:00Z").unwrap())
        );
        for bad in [
            "2026-13-01T00:00:00Z",
            "2026-12-03 06:00",
            "yesterday",
            "2026-12-03T06:00:00+09:00",
        ] {
            assert_eq!(parse_rfc3339_utc(bad), None, "{bad}");
        }
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
