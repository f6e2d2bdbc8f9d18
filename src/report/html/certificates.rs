//! Each machine's birth certificate as the run read it (`nvml::certify`'s evidence): a row per
//! machine with its GPUs, versions and figures, and what drifted since the certificate the
//! history kept for it, drift first.

use std::fmt::Write as _;

use serde_json::Value;

use super::escape::html;
use crate::report::{Report, shown_number};

/// `name version, ...` of a map of texts or numbers.
fn pairs(map: &Value) -> String {
    map.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| match v {
                    Value::Number(n) => {
                        format!("{k} {}", n.as_f64().map(shown_number).unwrap_or_default())
                    }
                    Value::String(s) => format!("{k} {s}"),
                    other => format!("{k} {other}"),
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// The section; empty when the run certified no machine.
pub(super) fn certificates(report: &Report) -> String {
    let mut kept: Vec<&Value> = report
        .evidence
        .iter()
        .filter(|e| e.kind == "node_certificate")
        .map(|e| &e.data)
        .collect();
    if kept.is_empty() {
        return String::new();
    }
    let drifted = |d: &Value| d["drift"].as_array().is_some_and(|a| !a.is_empty());
    kept.sort_by_key(|d| !drifted(d));
    let mut out = String::from(
        "<h2 id=\"certificates\">Birth certificates</h2>\n<table class=\"certificates\"><thead><tr><th>node</th><th>machine</th><th>GPUs</th><th>versions</th><th>figures</th><th>since the certificate kept</th></tr></thead><tbody>\n",
    );
    for data in kept {
        let c = &data["certificate"];
        let since = match (data["first"].as_bool(), data["since_run"].as_u64()) {
            (Some(true), _) | (_, None) => "first certificate".to_string(),
            (_, Some(run)) => {
                let drift: Vec<&str> = data["drift"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|d| d["says"].as_str())
                    .collect();
                if drift.is_empty() {
                    format!("as in run {run}")
                } else {
                    format!("drifted since run {run}: {}", drift.join("; "))
                }
            }
        };
        let gpus = c["gpus"].as_array().map_or(0, Vec::len);
        let _ = writeln!(
            out,
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{gpus}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if drifted(data) { "drifted" } else { "same" },
            html(c["node"].as_str().unwrap_or_default()),
            html(c["machine"].as_str().unwrap_or_default()),
            html(&pairs(&c["versions"])),
            html(&pairs(&c["figures"])),
            html(&since)
        );
    }
    out.push_str("</tbody></table>\n");
    out
}
