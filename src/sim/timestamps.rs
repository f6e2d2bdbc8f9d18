//! Wall-clock timestamps for virtual time: the twin's world starts at a fixed instant, so the
//! same runbook always sees the same `creationTimestamp`s.

use std::time::Duration;

use crate::clock::dates::format_utc;

/// 2026-01-01T00:00:00Z, the twin's virtual time zero.
pub(crate) const EPOCH_UNIX_SECONDS: i64 = crate::clock::dates::VIRTUAL_EPOCH_UNIX_SECONDS;

/// RFC 3339 (`2026-01-01T00:09:24Z`) of a virtual instant.
pub(crate) fn rfc3339(virtual_time: Duration) -> String {
    rfc3339_unix(EPOCH_UNIX_SECONDS + i64::try_from(virtual_time.as_secs()).unwrap_or(0))
}

/// RFC 3339 of Unix seconds.
pub(crate) fn rfc3339_unix(secs: i64) -> String {
    crate::clock::dates::rfc3339_utc(secs)
}

/// `ctime` form (`Mon Nov 30 04:43:45 2026`) of a virtual instant, as nvidia-smi prints it.
pub(crate) fn ctime(virtual_time: Duration) -> String {
    format_utc("%a %b %e %H:%M:%S %Y", unix_seconds(virtual_time))
}

/// Unix seconds of a virtual instant.
pub(crate) fn unix_seconds(virtual_time: Duration) -> i64 {
    EPOCH_UNIX_SECONDS + i64::try_from(virtual_time.as_secs()).unwrap_or(0)
}

/// Parses what [`rfc3339`] writes back into virtual time (None before the epoch or malformed).
pub(crate) fn parse_rfc3339(text: &str) -> Option<Duration> {
    let secs = crate::clock::dates::parse_rfc3339_utc(text)?;
    u64::try_from(secs - EPOCH_UNIX_SECONDS)
        .ok()
        .map(Duration::from_secs)
}

/// kubectl's AGE column: `87s`, `3m`, `2m5s`, `5h`, `3d`.
pub(crate) fn human_age(age: Duration) -> String {
    let s = age.as_secs();
    match s {
        0..=119 => format!("{s}s"),
        120..=599 if !s.is_multiple_of(60) => format!("{}m{}s", s / 60, s % 60),
        120..=10_799 => format!("{}m", s / 60),
        10_800..=172_799 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_and_offsets_format_and_parse() {
        assert_eq!(rfc3339(Duration::ZERO), "2026-01-01T00:00:00Z");
        assert_eq!(rfc3339(Duration::from_secs(564)), "2026-01-01T00:09:24Z");
        assert_eq!(
            rfc3339(Duration::from_secs(86_400 * 59)),
            "2026-03-01T00:00:00Z"
        );
        assert_eq!(
            parse_rfc3339("2026-01-01T00:09:24Z"),
            Some(Duration::from_secs(564))
        );
        assert_eq!(parse_rfc3339("2025-12-31T23:59:59Z"), None);
    }

    #[test]
    fn ages_read_like_kubectl() {
        assert_eq!(human_age(Duration::from_secs(87)), "87s");
        assert_eq!(human_age(Duration::from_secs(125)), "2m5s");
        assert_eq!(human_age(Duration::from_secs(180)), "3m");
        assert_eq!(human_age(Duration::from_secs(4 * 3600)), "4h");
    }
}
