//! `runbook history trend METRIC`: a metric's values run by run, one series per step and
//! labels it was measured with, each with its baseline's word on it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::report::{BaselineVerdict, MetricRecord, shown_number, sparkline};

/// The values of one metric that belong together: same runbook, step and labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub runbook: String,
    pub step: String,
    pub labels: String,
    pub unit: Option<String>,
    /// (run number, value, ok, what the baseline said), oldest first.
    pub points: Vec<(u64, f64, bool, Option<String>)>,
}

/// Groups `rows` (as [`super::History::metric_history`] answers them) into series.
pub fn series(rows: Vec<(u64, String, MetricRecord)>) -> Vec<Series> {
    let mut by_key: BTreeMap<(String, String, String), Series> = BTreeMap::new();
    for (run, runbook, record) in rows {
        let step = record.step.join(" > ");
        let labels = record.label_key();
        let entry = by_key
            .entry((runbook.clone(), step.clone(), labels.clone()))
            .or_insert_with(|| Series {
                runbook,
                step,
                labels,
                unit: record.unit.clone(),
                points: Vec::new(),
            });
        let said = record.baseline.as_ref().map(|b| match b.verdict {
            BaselineVerdict::Worse => format!(
                "worse than the median {} of {}",
                b.median.map(shown_number).unwrap_or_default(),
                crate::report::runs_named(&b.compared)
            ),
            BaselineVerdict::Within => format!(
                "within the median {}",
                b.median.map(shown_number).unwrap_or_default()
            ),
            BaselineVerdict::TooFewRuns => "too few runs for a baseline".into(),
            BaselineVerdict::NoHistory => "no history".into(),
        });
        entry.points.push((run, record.value, record.ok, said));
    }
    by_key.into_values().collect()
}

/// The series as text: a heading per series (with a sparkline when `sparklines`, on a
/// terminal), then a line per run.
pub fn trend_text(metric: &str, series: &[Series], sparklines: bool) -> String {
    let mut out = String::new();
    for s in series {
        let unit = s
            .unit
            .as_deref()
            .map(|u| format!(" ({u})"))
            .unwrap_or_default();
        let labels = if s.labels.is_empty() {
            String::new()
        } else {
            format!(" {{{}}}", s.labels)
        };
        let step = if s.step.is_empty() {
            "the run itself".to_string()
        } else {
            format!("step {}", s.step)
        };
        let _ = write!(out, "{metric}{labels}{unit} in {}, {step}", s.runbook);
        if sparklines {
            let values: Vec<f64> = s.points.iter().map(|p| p.1).collect();
            let _ = write!(out, ": {}", sparkline(&values));
        }
        out.push('\n');
        for (run, value, ok, said) in &s.points {
            let mark = if *ok { ' ' } else { '!' };
            let _ = writeln!(
                out,
                "  {run:>5} {mark} {:>10}  {}",
                shown_number(*value),
                said.as_deref().unwrap_or("")
            );
        }
    }
    out.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(value: f64, ok: bool, step: &str) -> MetricRecord {
        MetricRecord {
            name: "busbw".into(),
            value,
            unit: Some("GB/s".into()),
            better: None,
            labels: Default::default(),
            step: vec![step.into()],
            min: None,
            max: None,
            baseline: None,
            ok,
        }
    }

    #[test]
    fn one_series_per_step_with_failures_marked() {
        let rows = vec![
            (1, "d.rhai".to_string(), record(0.5, true, "a")),
            (1, "d.rhai".to_string(), record(9.0, true, "b")),
            (2, "d.rhai".to_string(), record(0.25, false, "a")),
        ];
        let series = series(rows);
        assert_eq!(series.len(), 2);
        let text = trend_text("busbw", &series, true);
        assert!(
            text.starts_with("busbw (GB/s) in d.rhai, step a: █▁\n"),
            "{text}"
        );
        assert!(text.contains("\n      2 !       0.25\n"), "{text}");
        assert!(!trend_text("busbw", &series, false).contains('█'));
    }
}
