//! The verdict on a parsed nccl-tests log and the one-line summary that explains it.

use super::model::{NcclReport, Status};

/// Longest quoted log line in a summary, so the summary stays one readable line.
const QUOTE_CHARS: usize = 160;
/// A cause may say what it means as well (the network's causes do), so it may run longer.
const CAUSE_CHARS: usize = 260;

/// Sets `status`, `ok` and `summary` from what was parsed.
pub(crate) fn conclude(report: &mut NcclReport) {
    let wrong: Vec<u64> = report
        .rows
        .iter()
        .filter(|r| r.out_of_place.wrong.unwrap_or(0) > 0 || r.in_place.wrong.unwrap_or(0) > 0)
        .map(|r| r.size)
        .collect();
    let out_of_bounds_failed = report.out_of_bounds_ok == Some(false);
    report.status = if !wrong.is_empty() || out_of_bounds_failed || !report.errors.is_empty() {
        Status::Error
    } else if report.avg_busbw.is_some() {
        Status::Ok
    } else {
        Status::Incomplete
    };
    report.ok = report.status == Status::Ok;

    let mut parts: Vec<String> = Vec::new();
    match report.status {
        Status::Ok => {
            parts.extend(report.collective.clone());
            parts.extend(topology(report));
            parts.extend(gpus(report));
            parts.extend(sizes(report));
        }
        Status::Error => {
            if let Some(first) = wrong.first() {
                parts.push(format!(
                    "{} {} with #wrong > 0 (first at {})",
                    wrong.len(),
                    plural(wrong.len(), "row"),
                    format_bytes(*first)
                ));
            }
            if out_of_bounds_failed {
                let count = report.out_of_bounds.map_or("?".into(), |n| n.to_string());
                parts.push(format!("out of bounds values: {count} FAILED"));
            }
            if let Some(cause) = report.causes.first() {
                parts.push(format!("cause: {}", cut(cause, CAUSE_CHARS)));
            }
            if let Some(last) = report.errors.last() {
                let lines = plural(report.errors.len(), "error line");
                parts.push(format!(
                    "{} {lines}, last: {}",
                    report.errors.len(),
                    quote(last)
                ));
            }
            parts.extend(topology(report));
        }
        Status::Incomplete => {
            parts.push("no '# Avg bus bandwidth' line".into());
            if let Some(cause) = report.causes.first() {
                parts.push(format!("cause: {}", cut(cause, CAUSE_CHARS)));
            }
            parts.extend(topology(report));
            parts.push(match report.rows.last() {
                None => "no result rows".into(),
                Some(last) => format!(
                    "{} result {}, last size {}",
                    report.rows.len(),
                    plural(report.rows.len(), "row"),
                    format_bytes(last.size)
                ),
            });
        }
    }
    if let Some(avg) = report.avg_busbw {
        parts.push(format!("avg busbw {avg:.2} GB/s"));
    }
    if let Some(last) = report.warnings.last() {
        let lines = plural(report.warnings.len(), "NCCL WARN line");
        parts.push(format!(
            "{} {lines}, last: {}",
            report.warnings.len(),
            quote(last)
        ));
    }
    report.summary = format!("{}: {}", report.status.as_str(), parts.join(", "));
}

/// `16 ranks on 2 hosts`, or whichever half is known.
fn topology(report: &NcclReport) -> Option<String> {
    let hosts = match report.hosts.len() {
        0 => None,
        1 => Some("1 host".to_string()),
        n => Some(format!("{n} hosts")),
    };
    match (report.nranks, hosts) {
        (Some(n), Some(hosts)) => Some(format!("{n} ranks on {hosts}")),
        (Some(n), None) => Some(format!("{n} ranks")),
        (None, hosts) => hosts,
    }
}

/// `8 GPUs (A100-SXM4-40GB)`, from the rank list.
fn gpus(report: &NcclReport) -> Option<String> {
    (!report.ranks.is_empty()).then(|| {
        format!(
            "{} GPUs ({})",
            report.ranks.len(),
            report.devices.join(", ")
        )
    })
}

/// `25 sizes 8 B..128 MiB`.
fn sizes(report: &NcclReport) -> Option<String> {
    let mut sizes: Vec<u64> = report.rows.iter().map(|r| r.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let (first, last) = (sizes.first()?, sizes.last()?);
    Some(if first == last {
        format!("1 size {}", format_bytes(*first))
    } else {
        format!(
            "{} sizes {}..{}",
            sizes.len(),
            format_bytes(*first),
            format_bytes(*last)
        )
    })
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        noun.to_string()
    } else {
        format!("{noun}s")
    }
}

fn quote(line: &str) -> String {
    cut(line, QUOTE_CHARS)
}

fn cut(line: &str, chars: usize) -> String {
    if line.chars().count() <= chars {
        line.to_string()
    } else {
        let cut: String = line.chars().take(chars).collect();
        format!("{cut}...")
    }
}

/// Binary units as nccl-tests sizes are powers of two: `8 B`, `128 MiB`, `1.5 KiB`.
pub(crate) fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_sizes() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(8), "8 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(134_217_728), "128 MiB");
        assert_eq!(format_bytes(8_589_934_592), "8 GiB");
    }

    #[test]
    fn long_lines_are_cut() {
        let long = "x".repeat(500);
        assert_eq!(quote(&long).len(), QUOTE_CHARS + 3);
        assert_eq!(quote("short"), "short");
    }
}
