//! A CronJob's schedule as the API server checks it: `validateScheduleFormat` hands it to
//! robfig/cron v3's `ParseStandard` and prints that parser's error (parser.go: the field
//! count, `getRange`'s bounds, `mustParseInt`, the descriptors), so the twin parses the same
//! way and words its errors the same.

/// One field's bounds and its names (months and weekdays), as parser.go's `bounds`.
struct Bounds {
    min: i64,
    max: i64,
    names: &'static [&'static str],
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const WEEKDAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// Minute, hour, day of month, month, day of week: the standard parser's five fields.
const FIELDS: [Bounds; 5] = [
    Bounds {
        min: 0,
        max: 59,
        names: &[],
    },
    Bounds {
        min: 0,
        max: 23,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 31,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 12,
        names: &MONTHS,
    },
    Bounds {
        min: 0,
        max: 6,
        names: &WEEKDAYS,
    },
];

/// The descriptors `parseDescriptor` knows besides `@every`.
const DESCRIPTORS: [&str; 7] = [
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
];

/// Go's `strconv.Atoi` error for `text`.
fn atoi_error(text: &str) -> String {
    let reason = if text
        .trim_start_matches(['-', '+'])
        .chars()
        .all(|c| c.is_ascii_digit())
        && !text.trim_start_matches(['-', '+']).is_empty()
    {
        "value out of range"
    } else {
        "invalid syntax"
    };
    format!("strconv.Atoi: parsing {text:?}: {reason}")
}

/// `mustParseInt` (Rust's integer parsing takes what `strconv.Atoi` takes: a sign, digits).
fn int(text: &str) -> Result<i64, String> {
    let number: i64 = text
        .parse()
        .map_err(|_| format!("failed to parse int from {text}: {}", atoi_error(text)))?;
    if number < 0 {
        return Err(format!("negative number ({number}) not allowed: {text}"));
    }
    Ok(number)
}

/// `parseIntOrName`.
fn int_or_name(text: &str, bounds: &Bounds) -> Result<i64, String> {
    let lower = text.to_lowercase();
    match bounds.names.iter().position(|n| *n == lower) {
        // January is 1, Sunday 0: each list starts at its field's minimum.
        Some(i) => Ok(i as i64 + bounds.min),
        None => int(text),
    }
}

/// `getRange`: `*`, `N`, `N-M`, each with an optional `/step`.
fn range(expr: &str, bounds: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_and_high.len() == 1;
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (bounds.min, bounds.max)
    } else {
        let start = int_or_name(low_and_high[0], bounds)?;
        let end = match low_and_high.len() {
            1 => start,
            2 => int_or_name(low_and_high[1], bounds)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        (start, end)
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = int(range_and_step[1])?;
            // "N/step" means "N-max/step".
            if single {
                end = bounds.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            bounds.min
        ));
    }
    if end > bounds.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            bounds.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

/// Go's `time.ParseDuration`, enough to tell a duration from something else.
fn go_duration(text: &str) -> bool {
    let mut rest = text.strip_prefix(['-', '+']).unwrap_or(text);
    if rest == "0" {
        return true;
    }
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 || rest[..digits] == *"." {
            return false;
        }
        rest = &rest[digits..];
        let unit = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"]
            .into_iter()
            .find(|u| rest.starts_with(u));
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
    }
    true
}

/// `cron.ParseStandard(schedule)`'s error, if any.
pub(crate) fn parse_error(schedule: &str) -> Option<String> {
    let mut spec = schedule;
    if spec.is_empty() {
        return Some("empty spec string".into());
    }
    // A leading TZ= or CRON_TZ= names the location; the rest is the schedule.
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let end = spec.find(' ').unwrap_or(spec.len());
        spec = spec[end..].trim();
    }
    if let Some(descriptor) = spec.strip_prefix('@').map(|_| spec) {
        if DESCRIPTORS.contains(&descriptor) {
            return None;
        }
        if let Some(every) = descriptor.strip_prefix("@every ") {
            return (!go_duration(every)).then(|| {
                format!("failed to parse duration {descriptor}: time: invalid duration {every:?}")
            });
        }
        return Some(format!("unrecognized descriptor: {descriptor}"));
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (field, bounds) in fields.iter().zip(&FIELDS) {
        for expr in field.split(',') {
            if let Err(why) = range(expr, bounds) {
                return Some(why);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robfig_crons_words_for_each_mistake() {
        for good in [
            "0 * * * *",
            "*/15 0-6 1,15 jan-mar MON-FRI",
            "5/10 * ? * *",
            "@hourly",
            "@every 1h30m",
            "TZ=UTC 0 * * * *",
        ] {
            assert_eq!(parse_error(good), None, "{good}");
        }
        for (bad, error) in [
            ("61 * * * *", "end of range (61) above maximum (59): 61"),
            ("* 24 * * *", "end of range (24) above maximum (23): 24"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            ("* * * * 7", "end of range (7) above maximum (6): 7"),
            (
                "5-1 * * * *",
                "beginning of range (5) beyond end of range (1): 5-1",
            ),
            (
                "*/0 * * * *",
                "step of range should be a positive number: */0",
            ),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
            ("1/2/3 * * * *", "too many slashes: 1/2/3"),
            (
                "x * * * *",
                "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax",
            ),
            ("0 * * *", "expected exactly 5 fields, found 4: [0 * * *]"),
            ("@fortnightly", "unrecognized descriptor: @fortnightly"),
            (
                "@every soon",
                "failed to parse duration @every soon: time: invalid duration \"soon\"",
            ),
        ] {
            assert_eq!(parse_error(bad).as_deref(), Some(error), "{bad}");
        }
    }
}
