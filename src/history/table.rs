//! The history as people read it: one line per run, newest first, in aligned columns.

use super::store::RunRow;
use crate::clock::dates::rfc3339_utc;
use crate::report::{MetricRecord, readable_millis};

/// The flaky steps under the table: what passed and failed on one commit and target.
pub fn flaky_lines(flaky: &[super::FlakyStep]) -> String {
    if flaky.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nflaky (passed and failed on the same commit and target):\n");
    for f in flaky {
        let commit: String = f.commit.chars().take(12).collect();
        let runs: Vec<String> = f.runs.iter().map(u64::to_string).collect();
        out.push_str(&format!(
            "  {} > {}: passed {}, failed {} on commit {commit} against {} (runs {})\n",
            f.runbook,
            f.step,
            f.passed,
            f.failed,
            f.target,
            runs.join(", ")
        ));
    }
    out
}

/// How many of a run's metrics its line shows; `--json` has them all.
const METRICS_SHOWN: usize = 4;

/// The table of `runs` (newest first, as [`super::History::recent`] answers them).
pub fn runs_table(runs: &[RunRow]) -> String {
    let header = [
        "RUN",
        "FINISHED (UTC)",
        "RUNBOOK",
        "STATUS",
        "WALL",
        "FAILED STEP",
        "METRICS",
    ];
    let rows: Vec<[String; 7]> = runs
        .iter()
        .map(|run| {
            [
                run.number.to_string(),
                finished(run.finished),
                run.runbook.clone(),
                run.status.clone(),
                readable_millis(run.wall_ms),
                run.failed_step.clone().unwrap_or_else(|| "-".into()),
                metrics(&run.metrics),
            ]
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let last = cells.len() - 1;
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i == last {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = line(&header.map(str::to_string));
    for row in &rows {
        out.push_str(&line(row));
    }
    out
}

/// `2026-12-02 13:40:01`.
fn finished(unix: f64) -> String {
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a Unix time in seconds fits an i64"
    )]
    let seconds = unix.floor() as i64;
    rfc3339_utc(seconds)
        .replace('T', " ")
        .trim_end_matches('Z')
        .to_string()
}

/// `nccl_avg_busbw=0.51 GB/s, gpu_count=2`, with `!` on a value that failed.
fn metrics(metrics: &[MetricRecord]) -> String {
    let mut shown: Vec<String> = metrics
        .iter()
        .take(METRICS_SHOWN)
        .map(|m| format!("{}{}={}", if m.ok { "" } else { "!" }, m.name, m.shown()))
        .collect();
    if metrics.len() > METRICS_SHOWN {
        shown.push(format!("+{} more", metrics.len() - METRICS_SHOWN));
    }
    if shown.is_empty() {
        "-".into()
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(number: u64, status: &str, failed: Option<&str>) -> RunRow {
        RunRow {
            number,
            run_id: format!("r{number}"),
            runbook: "runbooks/gpu-lab.rhai".into(),
            runbook_path: "/repo/runbooks/gpu-lab.rhai".into(),
            target: "twin".into(),
            parameters: "{}".into(),
            status: status.into(),
            started: 1_796_220_000.0,
            finished: 1_796_220_001.5,
            wall_ms: 402,
            virtual_ms: 1_239_000,
            failed_step: failed.map(str::to_string),
            error: None,
            commit: None,
            metrics: vec![MetricRecord {
                name: "nccl_avg_busbw".into(),
                value: 0.514,
                unit: Some("GB/s".into()),
                better: None,
                labels: Default::default(),
                step: vec![],
                min: None,
                max: None,
                baseline: None,
                ok: status == "passed",
            }],
        }
    }

    #[test]
    fn columns_line_up_and_failures_are_marked() {
        let table = runs_table(&[
            row(2, "failed", Some("NCCL > all-reduce")),
            row(1, "passed", None),
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("RUN  FINISHED (UTC)"), "{table}");
        let column = lines[0].find("STATUS").unwrap();
        assert_eq!(&lines[1][column..column + 6], "failed", "{table}");
        assert!(lines[1].ends_with("!nccl_avg_busbw=0.514 GB/s"), "{table}");
        assert!(lines[2].contains(" - "), "no failing step: {table}");
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(readable_millis(402), "402 ms");
        assert_eq!(readable_millis(12_345), "12.3 s");
        assert_eq!(readable_millis(245_000), "4 m 05 s");
    }
}
