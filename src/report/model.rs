//! The report of one run: what ran, in which order, how long it took, and how it ended.

use serde::{Deserialize, Serialize};

use super::MetricRecord;

/// How a whole run ended. The top-level error maps it to an exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Passed,
    Failed,
    /// The runbook itself is broken: parse error, unknown function, bad parameter.
    Error,
    Interrupted,
}

/// How one step or cleanup ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Failed,
    Interrupted,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepRecord {
    pub name: String,
    pub status: Outcome,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When it started, from the start of the run: on the run's clock, and in wall time
    /// (0 in reports written before they were kept).
    #[serde(default)]
    pub start_ms: u64,
    #[serde(default)]
    pub start_wall_ms: u64,
    pub virtual_ms: u64,
    pub wall_ms: u64,
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeferRecord {
    pub name: String,
    pub status: DeferStatus,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How to undo by hand what the cleanup was for, as its `defer` said.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undo: Option<String>,
    /// When it started, from the start of the run (0 for one that never ran).
    #[serde(default)]
    pub start_ms: u64,
    #[serde(default)]
    pub start_wall_ms: u64,
    pub virtual_ms: u64,
    pub wall_ms: u64,
}

/// One mutating call the run made or was stopped from making, in the order they came.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChangeRecord {
    #[serde(flatten)]
    pub change: crate::guard::Change,
    pub outcome: ChangeOutcome,
    /// The steps open when it was made (outermost first), or the cleanup that made it.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub step: Vec<String>,
    /// Made by a cleanup rather than by a step.
    #[serde(default)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cleanup: bool,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeOutcome {
    /// Sent; its answer has not come (the run was stopped while it was in flight).
    Sent,
    Done,
    Failed,
    /// A guard stopped it before it was sent.
    Refused,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeferStatus {
    Passed,
    Failed,
    /// Not run: a second Ctrl-C aborted the run first.
    Skipped,
    /// Started and had sent calls when a second Ctrl-C aborted it: half done.
    CutShort,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotOutcome {
    New,
    Matched,
    Mismatched,
    Updated,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SnapshotRecord {
    pub name: String,
    pub outcome: SnapshotOutcome,
    pub path: String,
}

/// What a GPU primitive measured, kept for the report's readers (the HTML page draws it): an
/// NCCL run's table (`nccl`: #{ summary, status, network, rows }) or a node's health verdict
/// (`gpu_health`: #{ node, verdict, reasons, findings }), with the step it ran in.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Evidence {
    pub kind: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step: Vec<String>,
    pub data: serde_json::Value,
}

/// The JSON report written by `--report`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub runbook: String,
    /// The run's journal id: `runbook recover ID` after a kill.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub status: RunStatus,
    /// Read back as `virtual`: a view of a kept run sets it from the JSON with [`clock_name`].
    #[serde(skip_deserializing, default = "virtual_clock")]
    pub clock: &'static str,
    pub parameters: serde_json::Value,
    pub steps: Vec<StepRecord>,
    pub defers: Vec<DeferRecord>,
    pub snapshots: Vec<SnapshotRecord>,
    /// What the run measured with `metric()`, in the order it did.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<MetricRecord>,
    /// The limits on what the run could change (`--read-only`, `--max-gpu-nodes`, `--allow`,
    /// `--max-cost-usd`).
    /// Not read back from a kept report (a view of a past run shows none).
    #[serde(skip_deserializing)]
    #[serde(skip_serializing_if = "crate::guard::Guards::is_empty")]
    pub guards: crate::guard::Guards,
    /// What the resources the run started cost (`--max-cost-usd` runs), in dollars.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spent_usd: Option<f64>,
    /// When each resource the run started cost what per hour: its spend over the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spend: Vec<crate::guard::SpendRate>,
    /// NCCL tables and GPU health verdicts, in the order they were measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    /// TCP connections the run opened to each API: `kubernetes` (requests), `kubernetes_exec`
    /// (exec's upgrades, a connection each), `aws` (every service and the credential chain).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub connections: std::collections::BTreeMap<String, u64>,
    /// Every mutating call, made or refused, in order.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ChangeRecord>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What lies under the error's one line (a client error's causes, outermost first), as
    /// `--verbose` prints them.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub error_detail: Vec<String>,
    /// Where the error was raised: the file, line and column, the source line, and the
    /// calls that led there (innermost last).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_at: Option<ErrorAt>,
    pub virtual_ms: u64,
    pub wall_ms: u64,
}

/// A script position of the run's error, with its source line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorAt {
    pub file: String,
    pub line: usize,
    pub column: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub called_from: Vec<String>,
}

impl StepRecord {
    /// Whether the run failed here, not only in a step inside it (its children all passed).
    pub fn failed_here(&self) -> bool {
        self.status != Outcome::Passed && self.steps.iter().all(|c| c.status == Outcome::Passed)
    }
}

impl Report {
    /// Every step, depth first, with its path from the top (`["verify", "nodes"]`).
    pub fn flat_steps(&self) -> Vec<(Vec<&str>, &StepRecord)> {
        fn walk<'a>(
            steps: &'a [StepRecord],
            prefix: &mut Vec<&'a str>,
            out: &mut Vec<(Vec<&'a str>, &'a StepRecord)>,
        ) {
            for step in steps {
                prefix.push(&step.name);
                out.push((prefix.clone(), step));
                walk(&step.steps, prefix, out);
                prefix.pop();
            }
        }
        let mut out = Vec::new();
        walk(&self.steps, &mut Vec::new(), &mut out);
        out
    }

    /// The cleanups that did not finish (failed, cut short or never run): what the run may
    /// have left behind.
    pub fn left_behind(&self) -> Vec<&DeferRecord> {
        self.defers
            .iter()
            .filter(|d| d.status != DeferStatus::Passed)
            .collect()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serializes")
    }
}

fn virtual_clock() -> &'static str {
    "virtual"
}

/// The clock's name as a report wrote it (`real`, else `virtual`).
pub fn clock_name(written: &str) -> &'static str {
    if written == "real" { "real" } else { "virtual" }
}

#[cfg(test)]
impl Report {
    /// A report of `r.rhai` with nothing in it, for the renderers' tests to fill in.
    pub(crate) fn empty(status: RunStatus) -> Self {
        Self {
            runbook: "r.rhai".into(),
            run_id: None,
            status,
            clock: "virtual",
            parameters: serde_json::json!({}),
            steps: vec![],
            defers: vec![],
            snapshots: vec![],
            metrics: vec![],
            guards: crate::guard::Guards::default(),
            spent_usd: None,
            changes: vec![],
            evidence: vec![],
            error: None,
            error_detail: vec![],
            error_at: None,
            spend: Vec::new(),
            connections: Default::default(),
            virtual_ms: 0,
            wall_ms: 0,
        }
    }
}
