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
}
