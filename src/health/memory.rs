//! Escalation with memory: a node's verdicts in earlier runs (the history's GPU record, by
//! machine and GPU UUID) raise this run's. A REBOOT that comes back after `reboots` earlier
//! REBOOTs for the same check on the same GPU is ISOLATE (the reboots did not clear it), and a
//! node remediated `remediations` times within the window is ISOLATE whatever this run found.

use std::time::Duration;

use serde_json::Value;

use super::node_check::NodeHealth;
use super::verdict::{Finding, Verdict};

const GPUD: &str = "leptonai/gpud components/accelerator/nvidia/xid/threshold.go: hardware inspection once the same Xid survives 2 reboots";
const MULTIPLE: &str = "NVIDIA NVSentinel health-events analyzer, MultipleRemediations: 5 or more remediations of a node within 7 days is CONTACT_SUPPORT";

/// How far back the record counts, and how much of it escalates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Memory {
    /// Earlier REBOOTs of the same check on the same GPU after which a REBOOT is ISOLATE.
    pub reboots: usize,
    pub window: Duration,
    /// Remediations (RESET or worse) of the node, this run's included, that make it ISOLATE.
    pub remediations: usize,
    pub remediation_window: Duration,
}

impl Default for Memory {
    fn default() -> Self {
        let week = Duration::from_secs(7 * 24 * 3600);
        Self {
            reboots: 2,
            window: week,
            remediations: 5,
            remediation_window: week,
        }
    }
}

fn verdict_of(value: &Value) -> Option<Verdict> {
    value.as_str().and_then(Verdict::parse)
}

/// The same finding as `finding` in an earlier health: same check, same GPU (by UUID where
/// both know it, else by its label), at REBOOT or worse.
fn recurs(past: &Value, finding: &Finding) -> bool {
    past["findings"].as_array().into_iter().flatten().any(|f| {
        let same_gpu = match (&finding.gpu_uuid, f["gpu_uuid"].as_str()) {
            (Some(uuid), Some(theirs)) => uuid == theirs,
            _ => f["gpu"].as_str() == finding.gpu.as_deref(),
        };
        f["check"] == finding.check
            && same_gpu
            && verdict_of(&f["verdict"]).is_some_and(|v| v >= Verdict::Reboot)
    })
}

/// The findings the record adds to `current`; `past` holds the earlier healths of its machine
/// with their ages (seconds before now), newest first.
pub fn escalations(memory: &Memory, current: &NodeHealth, past: &[(f64, Value)]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let within = |age: f64, window: Duration| age <= window.as_secs_f64();
    for finding in current
        .findings
        .iter()
        .filter(|f| f.verdict == Verdict::Reboot)
    {
        let before = past
            .iter()
            .filter(|(age, health)| within(*age, memory.window) && recurs(health, finding))
            .count();
        if before >= memory.reboots {
            findings.push(Finding {
                verdict: Verdict::Isolate,
                gpu: finding.gpu.clone(),
                gpu_uuid: finding.gpu_uuid.clone(),
                observed: format!(
                    "{} called for REBOOT again: {} earlier REBOOTs within {} did not clear it",
                    finding.check,
                    before,
                    crate::clock::format_duration(memory.window)
                ),
                threshold: format!("fewer than {} earlier REBOOTs", memory.reboots),
                source: GPUD,
                check: "recurring",
            });
        }
    }
    let remediated = |v: Option<Verdict>| v.is_some_and(|v| v >= Verdict::Reset);
    let earlier = past
        .iter()
        .filter(|(age, health)| {
            within(*age, memory.remediation_window) && remediated(verdict_of(&health["verdict"]))
        })
        .count();
    let now = usize::from(remediated(Some(current.verdict)));
    if now == 1 && earlier + now >= memory.remediations {
        findings.push(Finding {
            verdict: Verdict::Isolate,
            observed: format!(
                "{} remediations within {}",
                earlier + now,
                crate::clock::format_duration(memory.remediation_window)
            ),
            threshold: format!("fewer than {}", memory.remediations),
            ..Finding::passed("remediations", String::new(), String::new(), MULTIPLE)
        });
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reboot_for_xid_79() -> NodeHealth {
        let mut health = NodeHealth {
            node: "ip-1".into(),
            instance: Some("i-1".into()),
            verdict: Verdict::Healthy,
            gpus: Some(1),
            driver_version: None,
            cuda_version: None,
            findings: Vec::new(),
            reasons: Vec::new(),
        };
        health.add(vec![Finding {
            verdict: Verdict::Reboot,
            gpu: Some("0000:00:1e".into()),
            gpu_uuid: Some("GPU-aaaa".into()),
            ..Finding::passed("xid", "Xid 79".into(), "none since boot".into(), "AWS")
        }]);
        health
    }

    fn past(verdict: &str, check: &str, uuid: &str) -> Value {
        json!({"verdict": verdict, "findings": [
            {"check": check, "verdict": verdict, "gpu": "0000:00:1e", "gpu_uuid": uuid}]})
    }

    #[test]
    fn a_reboot_that_survived_two_reboots_isolates() {
        let memory = Memory::default();
        let now = reboot_for_xid_79();
        let hour = 3600.0;
        let once = [(hour, past("REBOOT", "xid", "GPU-aaaa"))];
        assert!(escalations(&memory, &now, &once).is_empty());
        let twice = [
            (hour, past("REBOOT", "xid", "GPU-aaaa")),
            (2.0 * hour, past("REBOOT", "xid", "GPU-aaaa")),
        ];
        let found = escalations(&memory, &now, &twice);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].verdict, Verdict::Isolate);
        assert_eq!(
            found[0].observed,
            "xid called for REBOOT again: 2 earlier REBOOTs within 168h did not clear it"
        );
        // Another GPU's, another check's, or a REBOOT older than the window: not the same.
        let others = [
            (hour, past("REBOOT", "xid", "GPU-bbbb")),
            (hour, past("REBOOT", "dcgm_diag", "GPU-aaaa")),
            (8.0 * 24.0 * hour, past("REBOOT", "xid", "GPU-aaaa")),
        ];
        assert!(escalations(&memory, &now, &others).is_empty());
    }

    #[test]
    fn five_remediations_in_a_week_isolate_the_node() {
        let memory = Memory::default();
        let now = reboot_for_xid_79();
        let four: Vec<(f64, Value)> = (1..=4)
            .map(|d| {
                (
                    f64::from(d) * 86_400.0,
                    past("RESET", "ecc_uncorrectable", "GPU-cccc"),
                )
            })
            .collect();
        let found = escalations(&memory, &now, &four);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].check, "remediations");
        assert_eq!(found[0].observed, "5 remediations within 168h");
        // A healthy node today is not escalated by its past.
        let mut healthy = now.clone();
        healthy.findings.clear();
        healthy.add(Vec::new());
        assert!(escalations(&memory, &healthy, &four).is_empty());
    }
}
