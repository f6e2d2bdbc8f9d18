//! A plan: the rehearsal's changes by step, how it ended, how long it took on the virtual
//! clock and what the resources it ran cost meanwhile.

use serde::Serialize;

use crate::lab::cost::CostReport;
use crate::report::{ChangeRecord, Report, RunStatus};

/// The changes one step (or one cleanup) made, in order.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedStep {
    /// `verify > nodes`, or the cleanup's name.
    pub step: String,
    pub changes: Vec<ChangeRecord>,
}

/// What a resource cost during the rehearsal: the meter after it, less the meter before.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostDelta {
    pub resource: String,
    pub kind: String,
    pub hours: f64,
    pub usd: f64,
    /// The run started it (the meter had no record of it before).
    pub started: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub runbook: String,
    /// Where it was rehearsed, in words.
    pub target: String,
    pub status: RunStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub virtual_ms: u64,
    pub steps: Vec<PlannedStep>,
    pub cleanups: Vec<PlannedStep>,
    pub cost: Vec<CostDelta>,
    pub cost_usd: f64,
    /// Of that, what the resources the run starts cost: what `--max-cost-usd` holds.
    pub started_usd: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// GPU-hours while it runs: each GPU instance's hours times its GPUs (the catalog's).
    pub gpu_hours: f64,
}

impl Plan {
    pub fn new(
        report: &Report,
        target: &str,
        before: Option<&CostReport>,
        after: Option<&CostReport>,
    ) -> Self {
        let (cleanups, steps): (Vec<&ChangeRecord>, Vec<&ChangeRecord>) =
            report.changes.iter().partition(|c| c.cleanup);
        let cost = match (before, after) {
            (Some(before), Some(after)) => cost_between(before, after),
            _ => Vec::new(),
        };
        let cents = |usd: f64| (usd * 100.0).round() / 100.0;
        let cost_usd = cents(cost.iter().map(|c| c.usd).sum::<f64>());
        let started_usd = cents(cost.iter().filter(|c| c.started).map(|c| c.usd).sum());
        let gpu_hours = cost
            .iter()
            .map(|c| c.hours * f64::from(crate::lab::gpu_catalog::gpus_of(&c.kind)))
            .sum();
        Self {
            runbook: report.runbook.clone(),
            target: target.to_string(),
            status: report.status,
            error: report.error.clone(),
            virtual_ms: report.virtual_ms,
            steps: grouped(&steps),
            cleanups: grouped(&cleanups),
            cost,
            cost_usd,
            started_usd,
            max_cost_usd: report.guards.max_cost_usd,
            gpu_hours,
        }
    }

    /// Every change the rehearsal made or was refused, steps' first.
    pub fn changes(&self) -> impl Iterator<Item = &ChangeRecord> {
        self.steps
            .iter()
            .chain(&self.cleanups)
            .flat_map(|s| &s.changes)
    }
}

/// Consecutive changes of the same step together, in the order they came.
fn grouped(changes: &[&ChangeRecord]) -> Vec<PlannedStep> {
    let mut groups: Vec<PlannedStep> = Vec::new();
    for change in changes {
        let step = if change.step.is_empty() {
            "(outside any step)".to_string()
        } else {
            change.step.join(" > ")
        };
        match groups.last_mut() {
            Some(last) if last.step == step => last.changes.push((*change).clone()),
            _ => groups.push(PlannedStep {
                step,
                changes: vec![(*change).clone()],
            }),
        }
    }
    groups
}

/// Per resource, what the meter added between the two readings; resources that cost nothing
/// meanwhile are left out.
fn cost_between(before: &CostReport, after: &CostReport) -> Vec<CostDelta> {
    after
        .lines
        .iter()
        .filter_map(|line| {
            let earlier = before.lines.iter().find(|b| b.resource == line.resource);
            let hours = line.hours - earlier.map_or(0.0, |b| b.hours);
            let usd = line.usd - earlier.map_or(0.0, |b| b.usd);
            (usd > 0.000_5 || hours > 0.000_5).then(|| CostDelta {
                resource: line.resource.clone(),
                kind: line.kind.clone(),
                hours: (hours * 1000.0).round() / 1000.0,
                usd: (usd * 1000.0).round() / 1000.0,
                started: earlier.is_none(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::Change;
    use crate::lab::cost::CostLine;
    use crate::report::ChangeOutcome;

    fn change(action: &str, step: &[&str], cleanup: bool) -> ChangeRecord {
        ChangeRecord {
            change: Change::new(action),
            outcome: ChangeOutcome::Done,
            step: step.iter().map(|s| s.to_string()).collect(),
            cleanup,
            error: None,
        }
    }

    fn meter(lines: &[(&str, f64, f64)]) -> CostReport {
        CostReport {
            currency: "USD",
            hours: 1.0,
            lines: lines
                .iter()
                .map(|(resource, hours, usd)| CostLine {
                    resource: resource.to_string(),
                    kind: "g5.xlarge".into(),
                    hours: *hours,
                    usd_per_hour: 1.0,
                    usd: *usd,
                    running: true,
                })
                .collect(),
            total_usd: 0.0,
            daily_rate_usd: 0.0,
            unpriced: vec![],
        }
    }

    #[test]
    fn changes_group_by_step_and_cleanups_stand_apart() {
        let mut report = crate::report::Report {
            virtual_ms: 60_000,
            ..crate::report::Report::empty(RunStatus::Passed)
        };
        report.changes = vec![
            change("scale to 2", &["GPU scale-up"], false),
            change("apply ns", &["GPU scale-up", "operator"], false),
            change("apply ds", &["GPU scale-up", "operator"], false),
            change("scale to 0", &["GPU node group back to 0"], true),
        ];
        let before = meter(&[("i-1", 0.0, 0.0), ("eks", 2.0, 0.2)]);
        let after = meter(&[("i-1", 0.5, 0.73), ("eks", 2.5, 0.25), ("i-2", 0.25, 0.36)]);
        let plan = Plan::new(&report, "the lab twin", Some(&before), Some(&after));
        let steps: Vec<(&str, usize)> = plan
            .steps
            .iter()
            .map(|s| (s.step.as_str(), s.changes.len()))
            .collect();
        assert_eq!(steps, [("GPU scale-up", 1), ("GPU scale-up > operator", 2)]);
        assert_eq!(plan.cleanups[0].step, "GPU node group back to 0");
        assert_eq!(plan.changes().count(), 4);
        assert_eq!(
            plan.cost
                .iter()
                .map(|c| c.resource.as_str())
                .collect::<Vec<_>>(),
            ["i-1", "eks", "i-2"]
        );
        assert_eq!(plan.cost_usd, 1.14);
        assert_eq!(plan.started_usd, 0.36, "i-2 is the only one it started");
    }
}
