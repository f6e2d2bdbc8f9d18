//! `runbook history diff A B`: what changed between two kept runs: how they ended, the steps
//! whose status changed (or that ran in one only), the metrics, and snapshot drift.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

/// The lines that say what differs between run `a` and run `b` (their reports as kept).
pub fn diff_text(a: (u64, &Value), b: (u64, &Value)) -> String {
    let (na, ra) = a;
    let (nb, rb) = b;
    let mut out = String::new();
    let status = |r: &Value| r["status"].as_str().unwrap_or("?").to_string();
    let _ = writeln!(
        out,
        "run {na} ({}) -> run {nb} ({})",
        status(ra),
        status(rb)
    );
    let _ = writeln!(
        out,
        "parameters: {}",
        if ra["parameters"] == rb["parameters"] {
            "the same".to_string()
        } else {
            format!("{} -> {}", ra["parameters"], rb["parameters"])
        }
    );
    section(&mut out, "steps", &changed_steps(ra, rb));
    section(&mut out, "metrics", &moved_metrics(ra, rb));
    section(&mut out, "snapshots", &snapshot_drift(ra, rb));
    out
}

/// The steps whose status changed, or that ran in one run only.
fn changed_steps(ra: &Value, rb: &Value) -> Vec<String> {
    let (sa, sb) = (steps(ra), steps(rb));
    let mut changed = Vec::new();
    for (path, (status_a, _)) in &sa {
        match sb.get(path) {
            Some((status_b, error)) if status_b != status_a => {
                let why = error
                    .as_deref()
                    .map(|e| format!(": {}", first_line(e)))
                    .unwrap_or_default();
                changed.push(format!("  {path}: {status_a} -> {status_b}{why}"));
            }
            None => changed.push(format!("  {path}: {status_a} -> not run")),
            _ => {}
        }
    }
    for (path, (status_b, _)) in &sb {
        if !sa.contains_key(path) {
            changed.push(format!("  {path}: not run -> {status_b}"));
        }
    }
    changed
}

/// The metrics whose value moved (by how much, and whether it failed), or that were measured
/// in one run only.
fn moved_metrics(ra: &Value, rb: &Value) -> Vec<String> {
    let (ma, mb) = (metrics(ra), metrics(rb));
    let mut moved = Vec::new();
    for (key, (value_a, shown_a, _)) in &ma {
        if let Some((value_b, shown_b, ok_b)) = mb.get(key) {
            if value_a != value_b {
                let change = if value_a.abs() > f64::EPSILON {
                    format!(" ({:+.1}%)", (value_b / value_a - 1.0) * 100.0)
                } else {
                    String::new()
                };
                let mark = if *ok_b { "" } else { ", failed" };
                moved.push(format!("  {key}: {shown_a} -> {shown_b}{change}{mark}"));
            }
        } else {
            moved.push(format!("  {key}: {shown_a} -> not measured"));
        }
    }
    for (key, (_, shown_b, _)) in &mb {
        if !ma.contains_key(key) {
            moved.push(format!("  {key}: not measured -> {shown_b}"));
        }
    }
    moved
}

/// The snapshots of run `b` whose outcome differs from run `a`'s, or that mismatched or were
/// updated.
fn snapshot_drift(ra: &Value, rb: &Value) -> Vec<String> {
    let (pa, pb) = (snapshots(ra), snapshots(rb));
    pb.iter()
        .filter(|(name, outcome)| {
            pa.get(*name) != Some(outcome) || matches!(outcome.as_str(), "mismatched" | "updated")
        })
        .map(|(name, outcome)| {
            format!(
                "  {name}: {} -> {outcome}",
                pa.get(name).map_or("absent", String::as_str)
            )
        })
        .collect()
}

fn section(out: &mut String, name: &str, lines: &[String]) {
    if lines.is_empty() {
        let _ = writeln!(out, "{name}: no change");
    } else {
        let _ = writeln!(out, "{name}:");
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
    }
}

/// Every step by its path: (status, error).
fn steps(report: &Value) -> BTreeMap<String, (String, Option<String>)> {
    fn walk(steps: &Value, prefix: &str, out: &mut BTreeMap<String, (String, Option<String>)>) {
        for step in steps.as_array().into_iter().flatten() {
            let name = step["name"].as_str().unwrap_or_default();
            let path = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix} > {name}")
            };
            let status = step["status"].as_str().unwrap_or("?").to_string();
            out.insert(
                path.clone(),
                (status, step["error"].as_str().map(str::to_string)),
            );
            walk(&step["steps"], &path, out);
        }
    }
    let mut out = BTreeMap::new();
    walk(&report["steps"], "", &mut out);
    out
}

/// Every metric by `name{labels} [step]`: (value, as shown, ok).
fn metrics(report: &Value) -> BTreeMap<String, (f64, String, bool)> {
    report["metrics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| serde_json::from_value::<crate::report::MetricRecord>(m.clone()).ok())
        .map(|m| {
            let labels = m.label_key();
            let labels = if labels.is_empty() {
                String::new()
            } else {
                format!("{{{labels}}}")
            };
            let key = format!("{}{labels} [{}]", m.name, m.step.join(" > "));
            (key, (m.value, m.shown(), m.ok))
        })
        .collect()
}

fn snapshots(report: &Value) -> BTreeMap<String, String> {
    report["snapshots"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| {
            Some((
                s["name"].as_str()?.to_string(),
                s["outcome"].as_str()?.to_string(),
            ))
        })
        .collect()
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_metrics_and_snapshots_that_changed() {
        let a = serde_json::json!({
            "status": "passed", "parameters": {"n": 2},
            "steps": [{"name": "nccl", "status": "passed", "steps": []}, {"name": "block", "status": "passed"}],
            "metrics": [{"name": "busbw", "value": 0.5, "unit": "GB/s", "step": ["nccl"], "ok": true}],
            "snapshots": [{"name": "rules", "outcome": "matched"}],
        });
        let b = serde_json::json!({
            "status": "failed", "parameters": {"n": 2},
            "steps": [{"name": "nccl", "status": "failed", "error": "metric `busbw` = 0.25 GB/s is worse\nmore"}],
            "metrics": [{"name": "busbw", "value": 0.25, "unit": "GB/s", "step": ["nccl"], "ok": false}],
            "snapshots": [{"name": "rules", "outcome": "mismatched"}],
        });
        let text = diff_text((7, &a), (8, &b));
        assert_eq!(
            text,
            "run 7 (passed) -> run 8 (failed)\nparameters: the same\nsteps:\n  block: passed -> not run\n  \
             nccl: passed -> failed: metric `busbw` = 0.25 GB/s is worse\nmetrics:\n  busbw [nccl]: 0.5 GB/s -> \
             0.25 GB/s (-50.0%), failed\nsnapshots:\n  rules: matched -> mismatched\n"
        );
        assert!(
            diff_text((1, &a), (2, &a))
                .contains("steps: no change\nmetrics: no change\nsnapshots: no change\n")
        );
    }
}
