//! A plan for a terminal: steps and their changes, the cleanups', then how it ends and costs.

use std::fmt::Write;

use super::model::{Plan, PlannedStep};
use crate::clock::format_duration;
use crate::report::{ChangeOutcome, RunStatus};

/// What a run would change, short enough to read before saying yes: each step with a few of
/// its changes, how it ends, the most GPU nodes it asks for, what it costs.
pub fn to_summary(plan: &Plan) -> String {
    const SHOWN: usize = 3;
    let mut out = format!("plan, rehearsed on {}:\n", plan.target);
    let groups = plan.steps.iter().chain(&plan.cleanups);
    for (index, step) in groups.enumerate() {
        let cleanup = index >= plan.steps.len();
        let actions: Vec<&str> = step
            .changes
            .iter()
            .take(SHOWN)
            .map(|c| c.change.action.as_str())
            .collect();
        let more = step.changes.len().saturating_sub(SHOWN);
        let _ = writeln!(
            out,
            "  {}{}: {}{}",
            if cleanup { "cleanup " } else { "" },
            step.step,
            actions.join("; "),
            if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            }
        );
    }
    if plan.steps.is_empty() && plan.cleanups.is_empty() {
        out.push_str("  no changes: every call it makes only reads\n");
    }
    let gpu_nodes = plan.changes().filter_map(|c| c.change.gpu_nodes).max();
    let _ = write!(
        out,
        "  it {} after {} (virtual), making {} changes",
        ending(plan.status),
        format_duration(std::time::Duration::from_millis(plan.virtual_ms)),
        plan.changes().count()
    );
    if let Some(nodes) = gpu_nodes {
        let _ = write!(out, ", up to {nodes} GPU nodes");
    }
    if !plan.cost.is_empty() {
        let _ = write!(
            out,
            "; cost while it runs ${:.2}, ${:.2} in what it starts{}",
            usd(plan.cost_usd),
            usd(plan.started_usd),
            budget(plan)
        );
        if plan.gpu_hours > 0.0 {
            let _ = write!(out, ", {:.1} GPU-hours", plan.gpu_hours);
        }
    }
    out.push('\n');
    if let Some(error) = &plan.error {
        let _ = writeln!(out, "  where: {error}");
    }
    out
}

/// A cost to print: never below zero, and never negative zero (a float sum of rates that
/// cancel out is `-0.0`, which `{:.2}` prints as `-0.00`).
fn usd(dollars: f64) -> f64 {
    dollars.max(0.0) + 0.0
}

/// ` (--max-cost-usd 5.00)` when the run has one.
fn budget(plan: &Plan) -> String {
    plan.max_cost_usd
        .map(|max| format!(" (--max-cost-usd {max})"))
        .unwrap_or_default()
}

fn ending(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Passed => "passes",
        RunStatus::Failed => "fails",
        RunStatus::Error => "stops on a script error",
        RunStatus::Interrupted => "was interrupted",
    }
}

pub fn to_text(plan: &Plan) -> String {
    let mut out = format!("plan of {} on {}\n", plan.runbook, plan.target);
    let count = plan.changes().count();
    if count == 0 {
        out.push_str("\nno changes: every call it makes only reads\n");
    }
    section(&mut out, "changes", &plan.steps);
    section(&mut out, "changes its cleanups make", &plan.cleanups);
    let ended = ending(plan.status);
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
        let _ = writeln!(
            out,
            "cost while it runs: ${:.2}, of which ${:.2} in what it starts{}",
            usd(plan.cost_usd),
            usd(plan.started_usd),
            budget(plan)
        );
        if plan.gpu_hours > 0.0 {
            let _ = writeln!(out, "GPU-hours while it runs: {:.1}", plan.gpu_hours);
        }
        // Columns as wide as their longest entry (a hybrid node's kind is `eks-hybrid-node/32vcpu`).
        let resource_width = plan
            .cost
            .iter()
            .map(|l| l.resource.len())
            .max()
            .unwrap_or(0)
            .max(28);
        let kind_width = plan
            .cost
            .iter()
            .map(|l| l.kind.len())
            .max()
            .unwrap_or(0)
            .max(14);
        for line in &plan.cost {
            let _ = writeln!(
                out,
                "  {:<resource_width$} {:<kind_width$} {:>7.3} h  ${:.3}{}",
                line.resource,
                line.kind,
                line.hours,
                usd(line.usd),
                if line.started {
                    "  (started by the run)"
                } else {
                    ""
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cost_that_sums_to_negative_zero_prints_as_zero() {
        assert_eq!(format!("${:.2}", usd(-0.0)), "$0.00");
        assert_eq!(format!("${:.2}", usd(-0.001)), "$0.00");
        assert_eq!(format!("${:.2}", usd(1.005 - 1.005)), "$0.00");
        assert_eq!(format!("${:.2}", usd(12.5)), "$12.50");
    }
}
