//! A run as Prometheus metrics in the text exposition format: what node_exporter's textfile
//! collector reads (`--metrics-file`) and what a Pushgateway takes (`--pushgateway`). Every
//! series is a gauge labelled with the runbook; a metric family is written once, with all its
//! series together, as the format requires.

use std::fmt::Write as _;

use super::{Outcome, Report, RunStatus};

/// One family: its name, help and samples (labels, value).
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(Labels, f64)>,
}

/// Label names a script's own metric labels may not use: the exposition gives them meaning.
pub const RESERVED_LABELS: &[&str] = &[
    "runbook", "name", "unit", "step", "status", "job", "instance",
];

/// The run's metrics; `finished` is the wall-clock Unix time it ended.
pub fn to_prometheus_text(report: &Report, finished: f64) -> String {
    render(&families(report, finished, true))
}

/// What a run pushes to a Pushgateway: its metrics for the group `runbook=<runbook>` (the
/// grouping key gives them that label, so the series here do not carry it, as the Pushgateway
/// requires), and on success `runbook_last_success_timestamp_seconds` alone, for a group of
/// its own that a failed run's push does not replace.
pub fn for_pushgateway(report: &Report, finished: f64) -> (String, Option<String>) {
    let (last, rest): (Vec<Family>, Vec<Family>) = families(report, finished, false)
        .into_iter()
        .partition(|f| f.name == LAST_SUCCESS);
    let last = (!last.is_empty()).then(|| render(&last));
    (render(&rest), last)
}

const LAST_SUCCESS: &str = "runbook_last_success_timestamp_seconds";

/// A sample's labels, in the order they are written.
type Labels = Vec<(String, String)>;

fn families(report: &Report, finished: f64, runbook_label: bool) -> Vec<Family> {
    let runbook: Labels = if runbook_label {
        vec![("runbook".to_string(), report.runbook.clone())]
    } else {
        Vec::new()
    };
    let mut families = run_families(report, finished, &runbook);
    families.extend(step_families(report, &runbook));
    families.extend(metric_families(report, &runbook));
    families
}

/// The run's own families: how it ended, how long it took, what it left behind.
fn run_families(report: &Report, finished: f64, runbook: &Labels) -> Vec<Family> {
    let passed = report.status == RunStatus::Passed;
    let gauge = |name, help, value| Family {
        name,
        help,
        samples: vec![(runbook.clone(), value)],
    };
    let mut families = vec![
        gauge(
            "runbook_run_success",
            "1 if the last run passed, 0 if it failed or was interrupted.",
            f64::from(u8::from(passed)),
        ),
        gauge(
            "runbook_run_duration_seconds",
            "Wall-clock time of the last run.",
            seconds(report.wall_ms),
        ),
        gauge(
            "runbook_run_virtual_duration_seconds",
            "Time of the last run on its own clock (virtual on the lab twin).",
            seconds(report.virtual_ms),
        ),
        gauge(
            "runbook_run_timestamp_seconds",
            "When the last run ended, as a Unix time.",
            finished,
        ),
        gauge(
            "runbook_cleanups_left_behind",
            "Cleanups of the last run that did not finish: what it may have left behind.",
            report.left_behind().len() as f64,
        ),
    ];
    if passed {
        families.push(gauge(
            LAST_SUCCESS,
            "When the last passing run ended, as a Unix time.",
            finished,
        ));
    }
    families
}

/// Each step's status (one series per status, 1 for the one it ended with) and duration.
fn step_families(report: &Report, runbook: &Labels) -> [Family; 2] {
    let mut status = Family {
        name: "runbook_step_status",
        help: "1 for the status each step of the last run ended with, 0 for the others.",
        samples: Vec::new(),
    };
    let mut duration = Family {
        name: "runbook_step_duration_seconds",
        help: "Wall-clock time of each step of the last run.",
        samples: Vec::new(),
    };
    for (path, step) in report.flat_steps() {
        let mut step_labels = runbook.clone();
        step_labels.push(("step".to_string(), path.join(" > ")));
        for (name, outcome) in [
            ("passed", Outcome::Passed),
            ("failed", Outcome::Failed),
            ("interrupted", Outcome::Interrupted),
        ] {
            let mut labels = step_labels.clone();
            labels.push(("status".to_string(), name.to_string()));
            status
                .samples
                .push((labels, f64::from(u8::from(step.status == outcome))));
        }
        duration.samples.push((step_labels, seconds(step.wall_ms)));
    }
    [status, duration]
}

/// The values the script measured and whether each was within bounds; none without metrics.
fn metric_families(report: &Report, runbook: &Labels) -> Vec<Family> {
    if report.metrics.is_empty() {
        return Vec::new();
    }
    let mut measured = Family {
        name: "runbook_metric",
        help: "A value the last run measured with metric(), by name.",
        samples: Vec::new(),
    };
    let mut within = Family {
        name: "runbook_metric_ok",
        help: "1 if a measured value was within its bounds and baseline, 0 if not.",
        samples: Vec::new(),
    };
    for metric in &report.metrics {
        let mut labels = runbook.clone();
        labels.push(("name".to_string(), metric.name.clone()));
        if let Some(unit) = &metric.unit {
            labels.push(("unit".to_string(), unit.clone()));
        }
        labels.push(("step".to_string(), metric.step.join(" > ")));
        labels.extend(metric.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
        within
            .samples
            .push((labels.clone(), f64::from(u8::from(metric.ok))));
        measured.samples.push((labels, metric.value));
    }
    vec![measured, within]
}

fn render(families: &[Family]) -> String {
    let mut out = String::new();
    for family in families.iter().filter(|f| !f.samples.is_empty()) {
        let _ = writeln!(out, "# HELP {} {}", family.name, family.help);
        let _ = writeln!(out, "# TYPE {} gauge", family.name);
        for (labels, value) in &family.samples {
            let labels: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
                .collect();
            if labels.is_empty() {
                let _ = writeln!(out, "{} {}", family.name, number(*value));
            } else {
                let _ = writeln!(
                    out,
                    "{}{{{}}} {}",
                    family.name,
                    labels.join(","),
                    number(*value)
                );
            }
        }
    }
    out
}

fn seconds(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

/// A sample value: integers without a fraction, `NaN` and `+Inf` as the format spells them.
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.to_string()
    } else {
        format!("{value}")
    }
}

/// A label value: backslash, double quote and newline escaped.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Prometheus' label name rule, less the `__` prefix it keeps for itself.
pub fn is_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with("__")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn label_names_follow_prometheus() {
        assert!(is_label_name("gpu_index"));
        assert!(!is_label_name("9lives"));
        assert!(!is_label_name("__name"));
        assert!(!is_label_name("a-b"));
    }

    #[test]
    fn values_are_written_as_the_format_reads_them() {
        assert_eq!(number(1.0), "1");
        assert_eq!(number(0.514), "0.514");
        assert_eq!(number(f64::INFINITY), "+Inf");
    }
}
