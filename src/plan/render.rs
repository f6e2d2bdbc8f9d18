//! A plan for a terminal: steps and their changes, the cleanups', then how it ends and costs.

use std::fmt::Write;

use super::model::{Plan, PlannedStep};
use crate::clock::format_duration;
use crate::report::{ChangeOutcome, RunStatus};

pub fn to_text(plan: &Plan) -> String {
    let mut out = format!("plan of {} on {}\n", plan.runbook, plan.target);
    let count = plan.changes().count();
    if count == 0 {
        out.push_str("\nno changes: every call it makes only reads\n");
    }
    section(&mut out, "changes", &plan.steps);
    section(&mut out, "changes its cleanups make", &plan.cleanups);
    let ended = match plan.status {
        RunStatus::Passed => "passes".to_string(),
        RunStatus::Failed => "fails".to_string(),
        RunStatus::Error => "stops on a script error".to_string(),
        RunStatus::Interrupted => "was interrupted".to_string(),
    };
    let refused = plan
        .changes()
        .filter(|c| c.outcome == ChangeOutcome::Refused)
        .count();
    let made = count - refused;
    let _ = write!(
        out,
        "\nit {ended} after {} (virtual), making {made} change{}",
        format_duration(std::time::Duration::from_millis(plan.virtual_ms)),
        if made == 1 { "" } else { "s" }
    );
    if refused > 0 {
        let _ = write!(out, "; the guards refuse {refused}");
    }
    out.push('\n');
    if let Some(error) = &plan.error {
        let _ = writeln!(out, "  where: {error}");
    }
    if !plan.cost.is_empty() {
        let _ = writeln!(out, "cost while it runs: ${:.2}", plan.cost_usd);
        for line in &plan.cost {
            let _ = writeln!(
                out,
                "  {:<28} {:<14} {:>7.3} h  ${:.3}",
                line.resource, line.kind, line.hours, line.usd
            );
        }
    }
    out
}

fn section(out: &mut String, title: &str, steps: &[PlannedStep]) {
    if steps.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{title}:");
    for step in steps {
        let _ = writeln!(out, "  {}", step.step);
        for record in &step.changes {
            let mut notes = Vec::new();
            if let Some(resource) = &record.change.resource {
                notes.push(resource.clone());
            }
            if let Some(nodes) = record.change.gpu_nodes {
                notes.push(format!(
                    "{nodes} GPU node{}",
                    if nodes == 1 { "" } else { "s" }
                ));
            }
            match record.outcome {
                ChangeOutcome::Failed => notes.push("fails".into()),
                ChangeOutcome::Refused => notes.push("refused by a guard".into()),
                ChangeOutcome::Sent => notes.push("unanswered".into()),
                ChangeOutcome::Done => {}
            }
            let _ = writeln!(out, "    {}  [{}]", record.change.action, notes.join(", "));
        }
    }
}
