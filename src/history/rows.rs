//! A finished run as the history's rows: the run's own, a row per metric, per step, per GPU
//! verdict and per machine's birth certificate. Both stores (the local SQLite file, the shared PostgreSQL) keep these same rows.

use serde::Serialize;

use super::store::NewRun;
use crate::report::{Outcome, StepRecord};

#[derive(Debug, Serialize)]
pub(super) struct MetricRow {
    pub step: String,
    pub name: String,
    pub labels: String,
    pub record: String,
    pub value: f64,
    pub ok: bool,
}

#[derive(Debug, Serialize)]
pub(super) struct StepRow {
    pub path: String,
    pub status: String,
    pub wall_ms: i64,
    pub virtual_ms: i64,
}

#[derive(Debug, Serialize)]
pub(super) struct VerdictRow {
    pub node: String,
    pub machine: String,
    pub verdict: String,
    pub health: String,
}

pub(super) struct RunRows {
    pub run_id: String,
    pub status: String,
    pub wall_ms: i64,
    pub virtual_ms: i64,
    pub failed_step: Option<String>,
    pub error: Option<String>,
    pub report: String,
    pub metrics: Vec<MetricRow>,
    pub steps: Vec<StepRow>,
    pub verdicts: Vec<VerdictRow>,
    pub certificates: Vec<super::certificates::CertificateRow>,
}

/// Integers as the databases keep them: signed.
pub(super) fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn word<T: Serialize>(value: T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

pub(super) fn rows_of(run: &NewRun<'_>) -> RunRows {
    let report = run.report;
    RunRows {
        run_id: report.run_id.clone().unwrap_or_default(),
        status: word(report.status),
        wall_ms: int(report.wall_ms),
        virtual_ms: int(report.virtual_ms),
        failed_step: failed_step(&report.steps),
        error: report.error.clone(),
        report: report.to_json(),
        metrics: report
            .metrics
            .iter()
            .map(|m| MetricRow {
                step: m.step.join(" > "),
                name: m.name.clone(),
                labels: m.label_key(),
                record: serde_json::to_string(m).unwrap_or_default(),
                value: m.value,
                ok: m.ok,
            })
            .collect(),
        steps: report
            .flat_steps()
            .into_iter()
            .map(|(path, s)| StepRow {
                path: path.join(" > "),
                status: word(s.status),
                wall_ms: int(s.wall_ms),
                virtual_ms: int(s.virtual_ms),
            })
            .collect(),
        verdicts: super::gpu_record::verdict_rows(report),
        certificates: super::certificates::certificate_rows(report),
    }
}

/// The innermost failing step of a run, `outer > inner`.
fn failed_step(steps: &[StepRecord]) -> Option<String> {
    let failed = steps.iter().find(|s| s.status != Outcome::Passed)?;
    Some(match failed_step(&failed.steps) {
        Some(inner) => format!("{} > {inner}", failed.name),
        None => failed.name.clone(),
    })
}
