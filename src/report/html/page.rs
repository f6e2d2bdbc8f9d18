//! The page: one HTML file with its style and its one small script inline (nothing fetched:
//! it opens from a CI artifact or an email), readable with JavaScript off.

use std::fmt::Write as _;

use super::escape::html;
use super::{certificates, changes, evidence, metrics, repair, spend, timeline};
use crate::report::{DeferStatus, Outcome, Report, RunStatus, SummaryContext, readable_millis};

const STYLE: &str = r#"
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:16px;color:#1b1f24}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px;border-bottom:1px solid #d0d7de}
.status{display:inline-block;padding:2px 8px;border-radius:4px;color:#fff;font-weight:600}
.status.passed{background:#1a7f37}.status.failed,.status.error{background:#cf222e}.status.interrupted{background:#bc4c00}
.facts{color:#57606a}.left-behind{border:2px solid #cf222e;background:#ffebe9;padding:8px 12px;border-radius:6px;color:#82071e}
.problem{border-left:4px solid #cf222e;background:#fff8f8;padding:6px 12px;margin:8px 0}
pre{background:#f6f8fa;padding:8px;white-space:pre-wrap;word-break:break-word}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #eaeef2;padding:4px 6px;text-align:left;vertical-align:top}
tr.failed td,tr.change.failed td,tr.change.refused td{background:#fff0ee}
.timelines{display:grid;grid-template-columns:1fr;gap:12px}figure{margin:0}figcaption{font-weight:600}
.gantt .label{font-size:11px;fill:#1b1f24}.gantt .axis{font-size:10px;fill:#57606a}.gantt .mark{fill:#cf222e;font-size:12px}
.bar.passed{fill:#2da44e}.bar.failed{fill:#cf222e}.bar.interrupted{fill:#bc4c00}
.bar.cleanup.passed{fill:#8250df}.bar.cleanup.left{fill:#bc4c00}.bar.failing{stroke:#82071e;stroke-width:2}
.trend polyline{fill:none;stroke:#0969da;stroke-width:1.5}.trend circle{fill:#0969da}.trend circle.this{fill:#cf222e}
.values{font-size:11px;color:#57606a}.tag{font-size:12px;color:#57606a}
section.nccl.error h3,section.nccl.hang h3,tr.verdict.isolate td,tr.verdict.reboot td,tr.drifted td{color:#cf222e}
td.busbw{font-weight:600}.error{color:#cf222e;font-size:12px}
table.changes td:nth-child(4){min-width:160px}
"#;

/// Marks the page as read by a browser with scripts on, and lets a bar bring its step's
/// row into view; everything else is in the markup.
const SCRIPT: &str = r##"
document.body.dataset.script = "ran";
var rows = document.querySelectorAll("#steps tbody tr");
document.querySelectorAll(".gantt rect[data-row]").forEach(function (bar) {
  bar.addEventListener("click", function () {
    var row = rows[Number(bar.dataset.row)];
    if (row) { row.scrollIntoView({ block: "center" }); }
  });
});
"##;

/// `1 step`, `22 steps`.
fn counted(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn status_word(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Passed => "passed",
        RunStatus::Failed => "failed",
        RunStatus::Error => "error",
        RunStatus::Interrupted => "interrupted",
    }
}

/// The cleanups that did not finish, at the top: what the run may have left behind.
fn left_behind(report: &Report) -> String {
    let left = report.left_behind();
    if left.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<section class=\"left-behind\" id=\"left-behind\"><strong>Something may be left behind:</strong><ul>\n",
    );
    for defer in left {
        let why = match defer.status {
            DeferStatus::Failed => defer.error.as_deref().unwrap_or("failed"),
            DeferStatus::CutShort => "cut short",
            _ => "did not run",
        };
        let by_hand = defer
            .undo
            .as_deref()
            .map(|u| format!(" By hand: <code>{}</code>", html(u)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<li>cleanup <strong>{}</strong>: {}{by_hand}</li>",
            html(&defer.name),
            html(why)
        );
    }
    out.push_str("</ul></section>\n");
    out
}

/// The steps that failed where they failed (not their parents), and the run's own error with
/// its causes.
fn what_went_wrong(report: &Report) -> String {
    let failed: Vec<_> = report
        .flat_steps()
        .into_iter()
        .filter(|(_, s)| s.failed_here())
        .collect();
    if failed.is_empty() && report.error.is_none() {
        return String::new();
    }
    let mut out = String::from("<h2 id=\"what-went-wrong\">What went wrong</h2>\n");
    for (path, step) in &failed {
        let _ = writeln!(
            out,
            "<div class=\"problem failing-step\"><strong>{}</strong><pre>{}</pre></div>",
            html(&path.join(" > ")),
            html(step.error.as_deref().unwrap_or("interrupted"))
        );
    }
    // Where it was raised: the file and line, the line itself with a caret under the column.
    if let Some(at) = &report.error_at {
        let _ = write!(
            out,
            "<div class=\"problem source\" id=\"error-at\"><code>{}:{}:{}</code>",
            html(&at.file),
            at.line,
            at.column
        );
        if let Some(source) = &at.source {
            let gutter = at.line.to_string();
            let caret: String = source
                .chars()
                .take(at.column.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            let _ = write!(
                out,
                "<pre class=\"source-line\">{gutter} | {}\n{} | {caret}^</pre>",
                html(source),
                " ".repeat(gutter.len())
            );
        }
        for caller in at.called_from.iter().rev() {
            let _ = write!(out, "<div class=\"tag\">called from {}</div>", html(caller));
        }
        out.push_str("</div>\n");
    }
    // The run's own error, where it says more than the failing step already did.
    let said = |e: &str| failed.iter().any(|(_, s)| s.error.as_deref() == Some(e));
    if let Some(error) = report.error.as_deref().filter(|e| !said(e)) {
        let _ = write!(out, "<div class=\"problem\"><pre>{}</pre>", html(error));
        if !report.error_detail.is_empty() {
            out.push_str("<p>Caused by:</p><ol>");
            for cause in &report.error_detail {
                let _ = write!(out, "<li>{}</li>", html(cause));
            }
            out.push_str("</ol>");
        }
        out.push_str("</div>\n");
    }
    out
}

/// Every step as a table row: the timeline's numbers in text.
fn steps_table(report: &Report) -> String {
    let mut out = String::from(
        "<table id=\"steps\"><thead><tr><th>step</th><th>status</th><th>started</th><th>on its clock</th><th>wall</th></tr></thead><tbody>\n",
    );
    for (path, step) in report.flat_steps() {
        let status = match step.status {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Interrupted => "interrupted",
        };
        let _ = writeln!(
            out,
            "<tr class=\"{status}\"><td>{}</td><td>{status}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            html(&path.join(" > ")),
            readable_millis(step.start_ms),
            readable_millis(step.virtual_ms),
            readable_millis(step.wall_ms)
        );
    }
    out.push_str("</tbody></table>\n");
    out
}

/// runbook's own version and those the run's evidence names: NCCL and nccl-tests from each
/// all-reduce, the NVIDIA driver and CUDA from each GPU node's health (each distinct one once,
/// so a fleet of two drivers shows both).
fn versions(report: &Report) -> String {
    let mut seen: Vec<(&str, String)> = Vec::new();
    let fields: [(&str, &str, &str); 4] = [
        ("nccl", "nccl_version", "NCCL"),
        ("nccl", "tests_version", "nccl-tests"),
        ("gpu_health", "driver_version", "NVIDIA driver"),
        ("gpu_health", "cuda_version", "CUDA"),
    ];
    for (kind, field, name) in fields {
        for evidence in report.evidence.iter().filter(|e| e.kind == kind) {
            if let Some(version) = evidence.data[field].as_str()
                && !seen.iter().any(|(n, v)| *n == name && v == version)
            {
                seen.push((name, version.to_string()));
            }
        }
    }
    let mut out = format!("runbook {}", env!("CARGO_PKG_VERSION"));
    for (name, version) in seen {
        let _ = write!(out, ", {name} {version}");
    }
    out
}

/// Parameters (secrets already masked in the report), guards, and where the run came from.
fn about(report: &Report, context: &SummaryContext) -> String {
    let mut rows = vec![
        ("runbook", report.runbook.clone()),
        ("clock", report.clock.to_string()),
        ("versions", versions(report)),
    ];
    if let Some(id) = &report.run_id {
        rows.push(("run id", id.clone()));
    }
    if let Some(number) = context.history_run {
        rows.push(("history run", number.to_string()));
    }
    if let Some(target) = &context.target {
        rows.push(("target", target.clone()));
    }
    if let Some(commit) = &context.commit {
        rows.push(("commit", commit.clone()));
    }
    if !report.guards.is_empty() {
        rows.push((
            "guards",
            serde_json::to_string(&report.guards).unwrap_or_default(),
        ));
    }
    if let Some(spent) = report.spent_usd {
        rows.push(("spent", format!("${spent:.4}")));
    }
    let mut out = String::from("<table class=\"about\"><tbody>\n");
    for (key, value) in rows {
        let _ = writeln!(out, "<tr><th>{key}</th><td>{}</td></tr>", html(&value));
    }
    if let Some(parameters) = report.parameters.as_object() {
        for (key, value) in parameters {
            let shown = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let _ = writeln!(
                out,
                "<tr><th>--set {}</th><td><code>{}</code></td></tr>",
                html(key),
                html(&shown)
            );
        }
    }
    out.push_str("</tbody></table>\n");
    out
}

/// The page's one script as its CSP names it (`sha256-...`): the browser runs that script and
/// no other, so markup that escaped the escaping still could not run.
fn script_hash() -> String {
    use base64::Engine as _;
    use sha2::{Digest as _, Sha256};
    let digest = Sha256::digest(SCRIPT.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

pub fn to_html(report: &Report, context: &SummaryContext) -> String {
    let status = status_word(report.status);
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src '{}'; img-src data:\">\
         <title>{} {status}</title><style>{STYLE}</style></head>\n<body data-status=\"{status}\">\n",
        script_hash(),
        html(&report.runbook)
    );
    let steps = report.flat_steps().len();
    let _ = writeln!(
        out,
        "<header><h1><code>{}</code> <span class=\"status {status}\">{status}</span></h1>\
         <div class=\"facts\">{} wall · {} on its clock ({}) · {} · {} · {}</div></header>",
        html(&report.runbook),
        readable_millis(report.wall_ms),
        readable_millis(report.virtual_ms),
        report.clock,
        counted(steps, "step"),
        counted(report.defers.len(), "cleanup"),
        counted(report.changes.len(), "change"),
    );
    out.push_str(&left_behind(report));
    out.push_str(&what_went_wrong(report));
    out.push_str("<h2 id=\"timeline\">Timeline</h2>\n");
    out.push_str(&timeline::timeline(report));
    out.push_str("<h2 id=\"changes\">Changes</h2>\n");
    out.push_str(&changes::changes(report));
    out.push_str("<h2 id=\"metrics\">Metrics</h2>\n");
    out.push_str(&metrics::metrics(report, context));
    out.push_str(&evidence::evidence(report));
    out.push_str(&certificates::certificates(report));
    out.push_str(&repair::repair(report));
    if !report.spend.is_empty() {
        out.push_str("<h2 id=\"spend\">Spend</h2>\n");
        out.push_str(&spend::spend(report));
    }
    out.push_str("<h2>Steps</h2>\n");
    out.push_str(&steps_table(report));
    out.push_str("<h2 id=\"about\">Run</h2>\n");
    out.push_str(&about(report, context));
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csp_lets_the_pages_one_script_run_by_its_hash_and_no_inline_script_else() {
        let page = to_html(
            &Report::empty(RunStatus::Passed),
            &SummaryContext::default(),
        );
        let csp = page
            .split("Content-Security-Policy\" content=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("a CSP");
        assert!(!csp.contains("script-src 'unsafe-inline'"), "{csp}");
        let script = page
            .split("<script>")
            .nth(1)
            .and_then(|rest| rest.split("</script>").next())
            .expect("the script");
        assert_eq!(script, SCRIPT);
        assert_eq!(page.matches("<script>").count(), 1);
        assert!(
            csp.contains(&format!("script-src '{}'", script_hash())),
            "{csp}"
        );
        // The hash of a known text, as `openssl dgst -sha256 -binary | base64` gives it.
        let empty = {
            use base64::Engine as _;
            use sha2::Digest as _;
            base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(b""))
        };
        assert_eq!(empty, "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
    }
}
