//! What the GPU primitives measured: each NCCL run's table by message size, out of place and
//! in place as nccl-tests prints it, and each GPU node's health verdict with its findings per
//! GPU.

use std::fmt::Write as _;

use serde_json::Value;

use super::escape::html;
use crate::report::{Evidence, Report, shown_number};

fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map(shown_number).unwrap_or_default(),
        other => other.to_string(),
    }
}

fn nccl_run(out: &mut String, evidence: &Evidence) {
    let data = &evidence.data;
    let status = text(&data["status"]);
    let _ = writeln!(
        out,
        "<section class=\"nccl {}\"><h3>{} <span class=\"tag\">{}</span></h3><p>{}</p>",
        html(&status),
        html(&evidence.step.join(" > ")),
        html(&status),
        html(&text(&data["summary"]))
    );
    let rows = data["rows"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if rows.is_empty() {
        out.push_str("<p>No result rows.</p></section>\n");
        return;
    }
    out.push_str(
        "<table class=\"nccl-rows\"><thead><tr><th rowspan=\"2\">size (B)</th><th rowspan=\"2\">type</th>\
         <th colspan=\"3\">out of place</th><th colspan=\"3\">in place</th></tr>\
         <tr><th>time (µs)</th><th>algbw (GB/s)</th><th>busbw (GB/s)</th><th>time (µs)</th><th>algbw (GB/s)</th><th>busbw (GB/s)</th></tr></thead><tbody>\n",
    );
    for row in rows {
        let perf = |place: &str| {
            let p = &row[place];
            format!(
                "<td>{}</td><td>{}</td><td class=\"busbw\">{}</td>",
                text(&p["time_us"]),
                text(&p["algbw"]),
                text(&p["busbw"])
            )
        };
        let _ = writeln!(
            out,
            "<tr class=\"nccl-row\"><td>{}</td><td>{}</td>{}{}</tr>",
            text(&row["size"]),
            html(&text(&row["type"])),
            perf("out_of_place"),
            perf("in_place")
        );
    }
    out.push_str("</tbody></table></section>\n");
}

fn health_table(out: &mut String, verdicts: &[&Evidence]) {
    out.push_str(
        "<table class=\"verdicts\"><thead><tr><th>node</th><th>verdict</th><th>why</th><th>findings that did not pass (check, GPU, observed, threshold)</th></tr></thead><tbody>\n",
    );
    for evidence in verdicts {
        let data = &evidence.data;
        let verdict = text(&data["verdict"]);
        let reasons: Vec<String> = data["reasons"]
            .as_array()
            .into_iter()
            .flatten()
            .map(text)
            .collect();
        let all = data["findings"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let passed = all.iter().filter(|f| f["verdict"] == "HEALTHY").count();
        let mut findings: Vec<String> = all
            .iter()
            .filter(|f| f["verdict"] != "HEALTHY")
            .map(|f| {
                format!(
                    "{} ({}){}: {} {}",
                    text(&f["check"]),
                    text(&f["verdict"]),
                    if f["gpu"].is_null() {
                        String::new()
                    } else {
                        format!(" GPU {}", text(&f["gpu"]))
                    },
                    text(&f["observed"]),
                    text(&f["threshold"])
                )
            })
            .collect();
        if passed > 0 {
            findings.push(format!("{passed} checks passed"));
        }
        let _ = writeln!(
            out,
            "<tr class=\"verdict {}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            html(&verdict.to_lowercase()),
            html(&text(&data["node"])),
            html(&verdict),
            html(&reasons.join("; ")),
            html(&findings.join("; "))
        );
    }
    out.push_str("</tbody></table>\n");
}

/// Both sections; empty when the run measured neither.
pub(super) fn evidence(report: &Report) -> String {
    let mut out = String::new();
    let nccl: Vec<&Evidence> = report
        .evidence
        .iter()
        .filter(|e| e.kind == "nccl")
        .collect();
    if !nccl.is_empty() {
        out.push_str("<h2 id=\"nccl\">NCCL bus bandwidth by message size</h2>\n");
        for run in nccl {
            nccl_run(&mut out, run);
        }
    }
    let verdicts: Vec<&Evidence> = report
        .evidence
        .iter()
        .filter(|e| e.kind == "gpu_health")
        .collect();
    if !verdicts.is_empty() {
        out.push_str("<h2 id=\"gpu-health\">GPU health</h2>\n");
        health_table(&mut out, &verdicts);
    }
    out
}
