//! Human durations: `"9m24s"`, `"500ms"`, `"1h30m"`, `"2.5s"` in, the same shape out.

use std::time::Duration;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "invalid duration `{input}`: {reason} (write it like \"90s\", \"9m24s\", \"500ms\" or \"1h\")"
)]
pub struct DurationError {
    pub input: String,
    pub reason: &'static str,
}

/// Parses a duration made of `<number><unit>` parts, units `ms`, `s`, `m`, `h`, `d`.
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    let fail = |reason| DurationError {
        input: input.to_string(),
        reason,
    };
    let text = input.trim();
    if text.is_empty() {
        return Err(fail("it is empty"));
    }
    let mut total_ms: f64 = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if number_len == 0 {
            return Err(fail("expected a number"));
        }
        let number: f64 = rest[..number_len].parse().map_err(|_| fail("bad number"))?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let unit_ms = match &rest[..unit_len] {
            "ms" => 1.0,
            "s" => 1_000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            "d" => 86_400_000.0,
            "" => return Err(fail("a number needs a unit")),
            _ => return Err(fail("unknown unit")),
        };
        rest = &rest[unit_len..];
        total_ms += number * unit_ms;
    }
    if !total_ms.is_finite() || total_ms > 1e15 {
        return Err(fail("too large"));
    }
    Ok(Duration::from_micros((total_ms * 1_000.0).round() as u64))
}

/// Formats a duration the way [`parse_duration`] reads it, dropping zero parts.
pub fn format_duration(duration: Duration) -> String {
    let total_ms = duration.as_millis();
    if total_ms < 1_000 {
        return format!("{total_ms}ms");
    }
    let (hours, rest) = (total_ms / 3_600_000, total_ms % 3_600_000);
    let (minutes, rest) = (rest / 60_000, rest % 60_000);
    let (seconds, millis) = (rest / 1_000, rest % 1_000);
    let mut out = String::new();
    if hours > 0 {
        out.push_str(&format!("{hours}h"));
    }
    if minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    if seconds > 0 || millis > 0 {
        if millis > 0 {
            let frac = format!("{millis:03}");
            out.push_str(&format!("{seconds}.{}s", frac.trim_end_matches('0')));
        } else {
            out.push_str(&format!("{seconds}s"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_seed_timeline_shapes() {
        assert_eq!(parse_duration("9m24s"), Ok(Duration::from_secs(564)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("2.5s"), Ok(Duration::from_millis(2500)));
        assert_eq!(parse_duration(" 1d "), Ok(Duration::from_secs(86_400)));
    }

    #[test]
    fn rejects_what_is_not_a_duration() {
        for bad in ["", "10", "ten s", "5 parsecs", "5x", "m", "1.2.3s"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should not parse");
        }
        let err = parse_duration("5x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid duration `5x`: unknown unit (write it like \"90s\", \"9m24s\", \"500ms\" or \"1h\")"
        );
    }

    #[test]
    fn formats_round_trip() {
        for text in ["0ms", "500ms", "9m24s", "1h30m", "2.5s", "1h0m1s"] {
            let d = parse_duration(text).unwrap();
            assert_eq!(parse_duration(&format_duration(d)).unwrap(), d, "{text}");
        }
        assert_eq!(format_duration(Duration::from_secs(564)), "9m24s");
        assert_eq!(format_duration(Duration::from_millis(61_250)), "1m1.25s");
        assert_eq!(format_duration(Duration::from_secs(3601)), "1h1s");
    }
}
