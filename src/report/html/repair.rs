//! A repair drill's page section (`nvml::record_repair`'s evidence): what repair was expected
//! to do, each broken node's stages with when each was seen after the injection, its budget
//! and whether it kept it, and the timeline of what the drill saw (conditions, cordons,
//! actions, nodes back).

use std::fmt::Write as _;

use serde_json::Value;

use super::escape::html;
use crate::report::Report;

/// `+93 s`; without a time `never` for a stage that missed, `-` for one with none (a check).
fn seen(at: &Value, kept: bool) -> String {
    match at.as_f64() {
        Some(s) => format!("+{} s", s.round()),
        None if kept => "-".to_string(),
        None => "never".to_string(),
    }
}

fn stages(out: &mut String, node: &Value) {
    let _ = writeln!(
        out,
        "<h3>{}</h3>\n<table class=\"repair\"><thead><tr><th>stage</th><th>seen</th><th>budget</th><th>kept</th><th>what</th></tr></thead><tbody>",
        html(node["node"].as_str().unwrap_or_default())
    );
    for stage in node["stages"].as_array().into_iter().flatten() {
        let ok = stage["ok"].as_bool() == Some(true);
        let _ = writeln!(
            out,
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if ok { "kept" } else { "missed" },
            html(stage["stage"].as_str().unwrap_or_default()),
            seen(&stage["at"], ok),
            html(stage["budget"].as_str().unwrap_or("-")),
            if ok { "yes" } else { "no" },
            html(stage["says"].as_str().unwrap_or_default())
        );
    }
    out.push_str("</tbody></table>\n");
}

/// The section; empty when the run drilled no repair.
pub(super) fn repair(report: &Report) -> String {
    let drills: Vec<&Value> = report
        .evidence
        .iter()
        .filter(|e| e.kind == "repair_drill")
        .map(|e| &e.data)
        .collect();
    let mut out = String::new();
    for drill in drills {
        out.push_str("<h2 id=\"repair\">Repair drill</h2>\n");
        let _ = writeln!(
            out,
            "<p>{}</p>",
            html(drill["expected"].as_str().unwrap_or_default())
        );
        for node in drill["nodes"].as_array().into_iter().flatten() {
            stages(&mut out, node);
        }
        out.push_str("<h3>What the drill saw</h3>\n<table class=\"repair-timeline\"><thead><tr><th>after the injection</th><th>node</th><th>what</th></tr></thead><tbody>\n");
        for event in drill["events"].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                seen(&event["at"], true),
                html(event["node"].as_str().unwrap_or_default()),
                html(event["what"].as_str().unwrap_or_default())
            );
        }
        out.push_str("</tbody></table>\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_stage_shows_when_it_was_seen_and_whether_it_kept_its_budget() {
        let drill = json!({
            "expected": "Replace 10m after AcceleratedHardwareReady False",
            "nodes": [{"node": "ip-a", "stages": [
                {"stage": "condition", "at": 15.0, "budget": "1m", "ok": true, "says": "NvidiaXID79Error"},
                {"stage": "back", "at": null, "budget": "20m", "ok": false, "says": "no node Ready again"},
            ]}],
            "events": [{"at": 15.0, "node": "ip-a", "what": "AcceleratedHardwareReady False"}],
        });
        let mut report = crate::report::Report::empty(crate::report::RunStatus::Passed);
        report.evidence.push(crate::report::Evidence {
            kind: "repair_drill".into(),
            step: vec!["verdict".into()],
            data: drill,
        });
        let page = repair(&report);
        assert!(
            page.contains(
                "<tr class=\"kept\"><td>condition</td><td>+15 s</td><td>1m</td><td>yes</td>"
            ),
            "{page}"
        );
        assert!(
            page.contains(
                "<tr class=\"missed\"><td>back</td><td>never</td><td>20m</td><td>no</td>"
            ),
            "{page}"
        );
        assert!(
            page.contains("<td>ip-a</td><td>AcceleratedHardwareReady False</td>"),
            "{page}"
        );
        assert!(
            repair(&crate::report::Report::empty(
                crate::report::RunStatus::Passed
            ))
            .is_empty()
        );
    }
}
