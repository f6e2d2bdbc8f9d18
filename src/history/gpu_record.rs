//! Each GPU node's verdicts across runs, by machine (the instance id where the run knew it,
//! else the node name, which EKS reuses): what escalation reads ("the same Xid survived two
//! reboots") and what `runbook history gpu` shows.

use rusqlite::params;

use super::error::HistoryError;
use super::rows::VerdictRow;
use super::store::LocalHistory;
use crate::report::Report;

/// One node's verdict in an earlier run.
#[derive(Debug, Clone, PartialEq)]
pub struct PastVerdict {
    pub run: u64,
    /// Unix seconds when that run finished.
    pub finished: f64,
    pub node: String,
    pub machine: String,
    pub verdict: String,
    /// The node's health as the run judged it (`nvml::judge`'s answer).
    pub health: serde_json::Value,
}

/// The run's GPU health verdicts (its `gpu_health` evidence), as the record keeps them.
pub(super) fn verdict_rows(report: &Report) -> Vec<VerdictRow> {
    report
        .evidence
        .iter()
        .filter(|e| e.kind == "gpu_health")
        .map(|evidence| {
            let health = &evidence.data;
            let node = health["node"].as_str().unwrap_or_default();
            VerdictRow {
                node: node.to_string(),
                machine: health["instance"].as_str().unwrap_or(node).to_string(),
                verdict: health["verdict"].as_str().unwrap_or_default().to_string(),
                health: kept_health(health).to_string(),
            }
        })
        .collect()
}

/// What of a judged health the record keeps: all of it but the checks that passed, which are
/// most of its size (a HEALTHY g5 node's health is about 10 KB, 30 passed checks with their
/// sources) and which nothing reads back: escalation looks for findings at REBOOT or worse,
/// the record's table prints the reasons.
fn kept_health(health: &serde_json::Value) -> serde_json::Value {
    let mut kept = health.clone();
    if let Some(findings) = kept["findings"].as_array_mut() {
        findings.retain(|f| f["verdict"] != "HEALTHY");
    }
    kept
}

impl LocalHistory {
    /// The verdicts of `who` (a machine, or a node name) since `since` (unix seconds), newest
    /// first.
    pub fn gpu_record(&self, who: &str, since: f64) -> Result<Vec<PastVerdict>, HistoryError> {
        let conn = self.connection();
        let mut statement = conn.prepare_cached(
            "SELECT run, finished, node, machine, verdict, health FROM gpu_verdicts
             WHERE (machine = ?1 OR node = ?1) AND finished >= ?2
             ORDER BY finished DESC, run DESC",
        )?;
        let rows = statement.query_map(params![who, since], |row| {
            let health: String = row.get(5)?;
            Ok(PastVerdict {
                run: u64::try_from(row.get::<_, i64>(0)?).unwrap_or_default(),
                finished: row.get(1)?,
                node: row.get(2)?,
                machine: row.get(3)?,
                verdict: row.get(4)?,
                health: serde_json::from_str(&health).unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}

/// The record as `runbook history gpu` prints it: a line per run, newest first, with what did
/// not pass.
pub fn gpu_record_table(who: &str, record: &[PastVerdict]) -> String {
    if record.is_empty() {
        return format!("no GPU verdicts kept for {who}\n");
    }
    let mut out = format!(
        "{:>5}  {:<20}  {:<8}  {:<21}  why\n",
        "run", "finished (UTC)", "verdict", "machine"
    );
    for past in record {
        let finished = crate::clock::dates::rfc3339_utc(past.finished as i64);
        let reasons: Vec<&str> = past.health["reasons"]
            .as_array()
            .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        out.push_str(&format!(
            "{:>5}  {:<20}  {:<8}  {:<21}  {}\n",
            past.run,
            finished,
            past.verdict,
            past.machine,
            if reasons.is_empty() {
                "-".to_string()
            } else {
                reasons.join("; ")
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_record_keeps_what_did_not_pass() {
        let health = json!({"node": "n", "verdict": "REBOOT", "reasons": ["REBOOT: xid"],
            "findings": [
                {"check": "xid", "verdict": "REBOOT", "gpu_uuid": "GPU-a"},
                {"check": "ecc", "verdict": "HEALTHY", "gpu_uuid": "GPU-a"},
                {"check": "power", "verdict": "MONITOR", "gpu_uuid": "GPU-a"}]});
        let kept = kept_health(&health);
        let checks: Vec<&str> = kept["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["check"].as_str())
            .collect();
        assert_eq!(checks, ["xid", "power"]);
        assert_eq!(kept["reasons"], health["reasons"]);
    }
}
