//! A run as a Markdown summary for a CI job's page (`--summary`, `$GITHUB_STEP_SUMMARY`): how
//! it ended, what failed and why, its metrics with their bounds, baselines and trends, and its
//! steps. Kept under [`MAX_SUMMARY_BYTES`]: GitHub refuses a step summary over 1 MiB.

use std::fmt::Write as _;

use super::{
    BaselineVerdict, DeferRecord, DeferStatus, MetricRecord, Outcome, Report, RunStatus,
    StepRecord, runs_named, shown_number, sparkline,
};

/// GitHub's limit for one step's summary is 1 MiB; this leaves room for other steps' output.
pub const MAX_SUMMARY_BYTES: usize = 512 * 1024;

/// What the history adds to a summary: the run's number, and each metric's recent values.
#[derive(Debug, Default, Clone)]
pub struct SummaryContext {
    /// This run's number in the history.
    pub history_run: Option<u64>,
    /// For each of the report's metrics (same order), its values in the runs before this one
    /// and this one, oldest first.
    pub trends: Vec<Vec<f64>>,
    /// What the run ran against (`lab twin (deployed)`, a cluster), when known.
    pub target: Option<String>,
    /// The commit the runbook came from, when known.
    pub commit: Option<String>,
}

pub fn to_markdown_summary(report: &Report, context: &SummaryContext) -> String {
    let mut out = String::new();
    let steps = report.flat_steps();
    write_headline(&mut out, report, context, steps.len());
    write_what_went_wrong(&mut out, report, &steps);
    if !report.metrics.is_empty() {
        write_metrics(&mut out, report, context);
    }
    write_steps(&mut out, &steps);
    out
}

/// How the run ended, then one line of facts: its times, steps, cleanups and names.
fn write_headline(out: &mut String, report: &Report, context: &SummaryContext, steps: usize) {
    let verdict = match report.status {
        RunStatus::Passed => "passed",
        RunStatus::Failed => "failed",
        RunStatus::Error => "stopped on a script error",
        RunStatus::Interrupted => "was interrupted",
    };
    let _ = writeln!(out, "### `{}` {verdict}\n", code(&report.runbook));
    let mut facts = vec![
        format!("{} wall", readable_millis(report.wall_ms)),
        format!(
            "{} on its clock ({})",
            readable_millis(report.virtual_ms),
            report.clock
        ),
        format!("{steps} steps"),
    ];
    if !report.defers.is_empty() {
        let n = report.defers.len();
        facts.push(format!("{n} cleanup{}", if n == 1 { "" } else { "s" }));
    }
    if let Some(id) = &report.run_id {
        facts.push(format!("run `{id}`"));
    }
    if let Some(number) = context.history_run {
        facts.push(format!("history run {number}"));
    }
    let _ = writeln!(out, "{}\n", facts.join(" · "));
}

/// The failed steps (or the run's error when no step failed) and the cleanups that may have
/// left something behind; nothing when all went well.
fn write_what_went_wrong(out: &mut String, report: &Report, steps: &[(Vec<&str>, &StepRecord)]) {
    let failed: Vec<_> = steps.iter().filter(|(_, s)| s.failed_here()).collect();
    let left_behind = report.left_behind();
    if failed.is_empty() && report.error.is_none() && left_behind.is_empty() {
        return;
    }
    out.push_str("#### What went wrong\n\n");
    for (path, step) in &failed {
        let error = step
            .error
            .as_deref()
            .map(first_line)
            .unwrap_or("interrupted");
        let _ = writeln!(
            out,
            "- **{}**: {}",
            escape(&path.join(" > ")),
            escape(error)
        );
    }
    if failed.is_empty()
        && let Some(error) = &report.error
    {
        let _ = writeln!(out, "- {}", escape(first_line(error)));
    }
    for defer in left_behind {
        write_left_behind(out, defer);
    }
    out.push('\n');
}

/// A cleanup that did not finish, and the command that does it by hand when there is one.
fn write_left_behind(out: &mut String, defer: &DeferRecord) {
    let why = match defer.status {
        DeferStatus::Failed => defer.error.as_deref().map(first_line).unwrap_or("failed"),
        DeferStatus::CutShort => "cut short",
        _ => "did not run",
    };
    let _ = writeln!(
        out,
        "- cleanup **{}** {}: something may be left behind",
        escape(&defer.name),
        escape(why)
    );
    if let Some(undo) = &defer.undo {
        let _ = writeln!(out, "  - by hand: `{}`", undo.replace('`', "'"));
    }
}

/// The metrics table, filling at most half the summary's room; the rest are counted.
fn write_metrics(out: &mut String, report: &Report, context: &SummaryContext) {
    out.push_str("#### Metrics\n\n| metric | step | value | bounds | baseline | trend |\n|---|---|---:|---|---|---|\n");
    let mut omitted = 0;
    for (i, metric) in report.metrics.iter().enumerate() {
        // Half the room for metrics, the rest for the steps.
        if out.len() > MAX_SUMMARY_BYTES / 2 {
            omitted += 1;
            continue;
        }
        let trend = context
            .trends
            .get(i)
            .filter(|t| t.len() > 1)
            .map(|t| sparkline(t))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| {}{} | {} | {}{} | {} | {} | {trend} |",
            escape(&metric.name),
            labels(metric),
            escape(&metric.step.join(" > ")),
            escape(&metric.shown()),
            if metric.ok { "" } else { " ❌" },
            bounds(metric),
            baseline(metric),
        );
    }
    if omitted > 0 {
        let _ = writeln!(out, "\n{omitted} more metrics are in the JSON report.");
    }
    out.push('\n');
}

/// The steps table, folded, as many rows as fit under [`MAX_SUMMARY_BYTES`]; the rest are
/// counted.
fn write_steps(out: &mut String, steps: &[(Vec<&str>, &StepRecord)]) {
    out.push_str("<details><summary>Steps</summary>\n\n| step | status | wall | on its clock |\n|---|---|---:|---:|\n");
    let mut rows = String::new();
    let mut cut = 0;
    for (path, step) in steps {
        let status = match step.status {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed ❌",
            Outcome::Interrupted => "interrupted",
        };
        let row = format!(
            "| {} | {status} | {} | {} |\n",
            escape(&path.join(" > ")),
            readable_millis(step.wall_ms),
            readable_millis(step.virtual_ms)
        );
        if out.len() + rows.len() + row.len() > MAX_SUMMARY_BYTES - 1024 {
            cut += 1;
        } else {
            rows.push_str(&row);
        }
    }
    out.push_str(&rows);
    if cut > 0 {
        let _ = writeln!(out, "\n{cut} more steps are in the JSON report.");
    }
    out.push_str("\n</details>\n");
}

pub(super) fn labels(metric: &MetricRecord) -> String {
    if metric.labels.is_empty() {
        return String::new();
    }
    let inner: Vec<String> = metric
        .labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!(" `{{{}}}`", inner.join(",").replace('`', "'"))
}

pub(super) fn bounds(metric: &MetricRecord) -> String {
    match (metric.min, metric.max) {
        (Some(min), Some(max)) => format!("{} to {}", shown_number(min), shown_number(max)),
        (Some(min), None) => format!("at least {}", shown_number(min)),
        (None, Some(max)) => format!("at most {}", shown_number(max)),
        (None, None) => String::new(),
    }
}

pub(super) fn baseline(metric: &MetricRecord) -> String {
    let Some(baseline) = &metric.baseline else {
        return String::new();
    };
    match baseline.verdict {
        BaselineVerdict::NoHistory => "no history kept".into(),
        BaselineVerdict::TooFewRuns => {
            format!("too few runs yet ({})", runs_named(&baseline.compared))
        }
        BaselineVerdict::Within | BaselineVerdict::Worse => {
            let median = baseline.median.map(shown_number).unwrap_or_default();
            let limit = baseline.limit.map(shown_number).unwrap_or_default();
            let change = match (baseline.median, baseline.verdict) {
                (Some(m), _) if m.abs() > f64::EPSILON => {
                    format!(", {:+.0}%", (metric.value / m - 1.0) * 100.0)
                }
                _ => String::new(),
            };
            format!(
                "median {median} of {}, limit {limit}{change}",
                runs_named(&baseline.compared)
            )
        }
    }
}

/// `402 ms`, `12.3 s`, `4 m 05 s`.
pub fn readable_millis(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{} m {:02} s", ms / 60_000, ms / 1000 % 60),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// Text for a Markdown table cell or list item: one line, no column break, and no HTML: a step
/// name, an error or a label that holds markup shows as text (GitHub renders the entities), so
/// a runbook's strings cannot add tags or comments to a CI job's page.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in shortened(text).chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            '&' => out.push_str("&amp;"),
            // No tag or comment can open without `<`; `>` stays, as the steps' `a > b` reads.
            '<' => out.push_str("&lt;"),
            c => out.push(c),
        }
    }
    out
}

/// Text inside a code span: HTML is inert there and entities would show as typed, so only the
/// backticks that would close the span early go, and the line breaks.
fn code(text: &str) -> String {
    shortened(text).replace('`', "'").replace(['\n', '\r'], " ")
}

/// At most 300 characters of `text`.
fn shortened(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().count() > 300 {
        (text.chars().take(299).collect::<String>() + "…").into()
    } else {
        text.into()
    }
}
