//! One node's health from what its tools printed: the GPUs nvidia-smi sees (count, model,
//! driver, clocks), their memory error counters, the driver's Xid reports since boot, and a
//! DCGM diagnostic when one ran. Every check gives a finding; the node's verdict is the
//! worst of them.

use serde::Serialize;
use serde_json::{Map, Value};

use super::device_checks::{device_findings, widest_links};
use super::memory_rules::memory_findings;
use super::nvlink_check::nvlink_findings;
use super::policy::Policy;
use super::thresholds::Thresholds;
use super::verdict::{Finding, Verdict, worst};
use super::xid_actions;
use crate::gpu::dcgm_diag::{DiagReport, DiagStatus};
use crate::gpu::nvidia_smi::memory_errors_from_csv;
use crate::gpu::xid::KernelLogErrors;

/// The `--query-gpu` fields a health check reads (one nvidia-smi call per node).
pub const QUERY_FIELDS: &[&str] = &[
    "index",
    "name",
    "pci.bus_id",
    "driver_version",
    "ecc.mode.current",
    "ecc.errors.uncorrected.volatile.total",
    "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded",
    "retired_pages.single_bit_ecc.count",
    "retired_pages.double_bit.count",
    "retired_pages.pending",
    "remapped_rows.uncorrectable",
    "remapped_rows.pending",
    "remapped_rows.failure",
    "clocks_event_reasons.hw_slowdown",
    "clocks_event_reasons.hw_thermal_slowdown",
    "clocks_event_reasons.hw_power_brake_slowdown",
    "clocks_event_reasons.sw_thermal_slowdown",
    // What device_checks reads. Older drivers do not know some of these (gpu_recovery_action,
    // fabric.*): the collector drops a field nvidia-smi names as unknown and asks again, so
    // the other checks still run.
    "uuid",
    "pcie.link.width.current",
    "pcie.link.width.max",
    "power.limit",
    "power.default_limit",
    "clocks.applications.graphics",
    "clocks.default_applications.graphics",
    "gpu_recovery_action",
    "fabric.state",
    "fabric.status",
    // Which board sits in each slot, for the machine's birth certificate (src/acceptance).
    "serial",
    "vbios_version",
];

/// Clock event reasons that mean the hardware is holding the GPU back (DCGM's
/// DCGM_FR_CLOCK_THROTTLE_THERMAL / _POWER are MONITOR).
const THROTTLES: &[(&str, &str)] = &[
    ("clocks_event_reasons.hw_slowdown", "hardware slowdown"),
    (
        "clocks_event_reasons.hw_thermal_slowdown",
        "hardware thermal slowdown",
    ),
    (
        "clocks_event_reasons.hw_power_brake_slowdown",
        "power brake",
    ),
    (
        "clocks_event_reasons.sw_thermal_slowdown",
        "software thermal slowdown",
    ),
];

const SPEC: &str = "the instance type's GPU count (src/health/thresholds.rs)";
const AWS_79: &str = "AWS awsome-distributed-training: a GPU gone from the bus (Xid 79) is REBOOT, ISOLATE if it recurs";
const DCGM_SEVERITY: &str =
    "DCGM dcgm_errors.c: the failure reason's severity (MONITOR or ISOLATE)";
const FLEET: &str = "the other GPU nodes of the run (one driver and CUDA version per fleet)";
const DCGM_THROTTLE: &str =
    "DCGM dcgm_errors.c: DCGM_FR_CLOCK_THROTTLE_THERMAL / _POWER are MONITOR";

/// What the run saw on one node.
#[derive(Debug, Clone, Default)]
pub struct NodeEvidence {
    pub node: String,
    /// The machine (`i-0f...`), where the caller knows it: EKS reuses node names.
    pub instance: Option<String>,
    /// Rows of `nvidia-smi --query-gpu=<QUERY_FIELDS> --format=csv`, parsed; `None` when that
    /// output was not collected (its checks are then not run, rather than failed).
    pub gpus: Option<Vec<Map<String, Value>>>,
    pub cuda_version: Option<String>,
    pub kernel_log: Option<KernelLogErrors>,
    pub diag: Option<DiagReport>,
    /// The watchdog's words when `dcgmi diag` never answered.
    pub dcgm_hung: Option<String>,
    /// `nvidia-smi nvlink -s`, parsed; `None` when it was not collected.
    pub nvlink: Option<Vec<crate::gpu::nvidia_smi::nvlink::NvlinkGpu>>,
}

/// The versions most nodes of the run have: a node that differs is out of line.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Fleet {
    pub driver_version: Option<String>,
    pub cuda_version: Option<String>,
    pub nodes: usize,
    /// The widest current PCIe link among the run's GPUs, by model.
    pub pcie_widest: std::collections::BTreeMap<String, f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeHealth {
    pub node: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    pub verdict: Verdict,
    /// GPUs nvidia-smi listed; `None` when its output was not collected.
    pub gpus: Option<usize>,
    pub driver_version: Option<String>,
    pub cuda_version: Option<String>,
    /// Every check's outcome, failed ones first.
    pub findings: Vec<Finding>,
    /// The failed findings in one line each, for a report.
    pub reasons: Vec<String>,
}

/// The most common driver and CUDA version among the nodes.
pub fn fleet_of(nodes: &[NodeEvidence]) -> Fleet {
    let drivers: Vec<String> = nodes.iter().filter_map(driver_of).collect();
    let cudas: Vec<String> = nodes
        .iter()
        .filter_map(|n| n.cuda_version.clone())
        .collect();
    Fleet {
        driver_version: most_common(&drivers),
        cuda_version: most_common(&cudas),
        nodes: nodes.len(),
        pcie_widest: widest_links(nodes.iter().flat_map(|n| n.gpus.iter().flatten())),
    }
}

fn most_common(values: &[String]) -> Option<String> {
    let mut best: Option<(&String, usize)> = None;
    for value in values {
        let count = values.iter().filter(|v| *v == value).count();
        if best.is_none_or(|(_, n)| count > n) {
            best = Some((value, count));
        }
    }
    best.map(|(v, _)| v.clone())
}

fn driver_of(node: &NodeEvidence) -> Option<String> {
    node.gpus
        .iter()
        .flatten()
        .find_map(|g| g.get("driver_version")?.as_str().map(str::to_string))
}

fn text(row: &Map<String, Value>, field: &str) -> Option<String> {
    match row.get(field)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn gpu_label(row: &Map<String, Value>) -> Option<String> {
    text(row, "index").or_else(|| text(row, "pci.bus_id"))
}

/// The check a hung `dcgmi diag` is reported under.
pub const DCGM_WATCHDOG: &str = "dcgm_watchdog";

const DCGM_HUNG_SOURCE: &str = "runbook's choice: a diagnostic that hangs is a DCGM fault, not a GPU's (aws/containers-roadmap#2555: a transient DCGM outage got healthy nodes replaced), and not a pass either: MONITOR, the node not fully examined";

/// Judges one node.
pub fn check_node(
    evidence: &NodeEvidence,
    expected: Option<&Thresholds>,
    fleet: &Fleet,
    policy: &Policy,
) -> NodeHealth {
    let mut findings = Vec::new();
    let rows = evidence.gpus.as_deref();
    if let Some(rows) = rows {
        gpu_count(rows, expected, &mut findings);
    }
    versions(evidence, fleet, &mut findings);
    for row in rows.into_iter().flatten() {
        let label = gpu_label(row);
        let memory = memory_errors_from_csv(row);
        findings.extend(
            memory_findings(&memory)
                .into_iter()
                .map(|f| f.on_gpu(label.clone())),
        );
        let widest = text(row, "name").and_then(|name| fleet.pcie_widest.get(&name).copied());
        findings.extend(device_findings(row, label.clone(), widest));
        throttling(row, label, &mut findings);
    }
    if let Some(log) = &evidence.kernel_log {
        kernel_log(log, evidence, policy, &mut findings);
    }
    if let Some(nvlink) = &evidence.nvlink {
        findings.extend(nvlink_findings(nvlink, expected.map(|e| e.nvlinks)));
    }
    if let Some(diag) = &evidence.diag {
        dcgm(diag, &mut findings);
    }
    if let Some(why) = &evidence.dcgm_hung {
        findings.push(Finding {
            verdict: Verdict::Monitor,
            observed: why.clone(),
            threshold: "an answer within the watchdog".into(),
            ..Finding::passed(
                DCGM_WATCHDOG,
                String::new(),
                String::new(),
                DCGM_HUNG_SOURCE,
            )
        });
    }
    if let Some(rows) = rows {
        name_gpus(rows, &mut findings);
    }
    let mut health = NodeHealth {
        node: evidence.node.clone(),
        instance: evidence.instance.clone(),
        verdict: Verdict::Healthy,
        gpus: evidence.gpus.as_ref().map(Vec::len),
        driver_version: driver_of(evidence),
        cuda_version: evidence.cuda_version.clone(),
        findings: Vec::new(),
        reasons: Vec::new(),
    };
    health.add(findings);
    health
}

impl NodeHealth {
    /// Adds findings (the record's escalations too): the verdict is the worst, the reasons
    /// those that did not pass, worst first.
    pub fn add(&mut self, findings: Vec<Finding>) {
        self.findings.extend(findings);
        self.findings.sort_by_key(|f| std::cmp::Reverse(f.verdict));
        self.verdict = worst(&self.findings);
        self.reasons = self
            .findings
            .iter()
            .filter(|f| f.verdict != Verdict::Healthy)
            .map(|f| match &f.gpu {
                Some(gpu) => format!("{} (GPU {gpu}): {}: {}", f.verdict, f.check, f.observed),
                None => format!("{}: {}: {}", f.verdict, f.check, f.observed),
            })
            .collect();
    }
}

/// `18:00` of a bus id as nvidia-smi (`00000000:18:00.0`) or the driver's Xid line
/// (`0000:18:00`) prints it.
fn bus_and_device(id: &str) -> Option<String> {
    let mut parts = id.rsplit(':');
    let device = parts.next()?.split('.').next()?;
    let bus = parts.next()?;
    Some(format!("{bus}:{device}").to_ascii_lowercase())
}

/// Each finding about a GPU gets that GPU's UUID, matched by index or by bus id.
fn name_gpus(rows: &[Map<String, Value>], findings: &mut [Finding]) {
    let mut uuids: Vec<(String, String)> = Vec::new();
    for row in rows {
        let Some(uuid) = text(row, "uuid").filter(|u| u.starts_with("GPU-")) else {
            continue;
        };
        if let Some(index) = text(row, "index") {
            uuids.push((index, uuid.clone()));
        }
        if let Some(bus) = text(row, "pci.bus_id").as_deref().and_then(bus_and_device) {
            uuids.push((bus, uuid));
        }
    }
    for finding in findings.iter_mut() {
        let Some(gpu) = &finding.gpu else { continue };
        let bus = bus_and_device(gpu);
        finding.gpu_uuid = uuids
            .iter()
            .find(|(key, _)| key == gpu || Some(key) == bus.as_ref())
            .map(|(_, uuid)| uuid.clone());
    }
}

fn gpu_count(
    rows: &[Map<String, Value>],
    expected: Option<&Thresholds>,
    findings: &mut Vec<Finding>,
) {
    let seen = rows.len();
    let Some(expected) = expected else {
        let verdict = if seen == 0 {
            Verdict::Reboot
        } else {
            Verdict::Healthy
        };
        findings.push(Finding {
            verdict,
            ..Finding::passed(
                "gpu_count",
                format!("{seen} GPUs visible"),
                "> 0".into(),
                AWS_79,
            )
        });
        return;
    };
    let want = usize::try_from(expected.gpus).unwrap_or(usize::MAX);
    let verdict = if seen < want {
        Verdict::Reboot
    } else {
        Verdict::Healthy
    };
    findings.push(Finding {
        verdict,
        ..Finding::passed(
            "gpu_count",
            format!("{seen} of {want} GPUs visible"),
            format!("== {want} ({})", expected.instance_type),
            if seen < want { AWS_79 } else { SPEC },
        )
    });
    for row in rows {
        if let Some(name) = text(row, "name")
            && name != expected.gpu_name
        {
            findings.push(
                Finding {
                    verdict: Verdict::Monitor,
                    ..Finding::passed(
                        "gpu_model",
                        name.clone(),
                        format!("{} ({})", expected.gpu_name, expected.instance_type),
                        SPEC,
                    )
                }
                .on_gpu(gpu_label(row)),
            );
        }
    }
}

fn versions(evidence: &NodeEvidence, fleet: &Fleet, findings: &mut Vec<Finding>) {
    let pairs = [
        ("driver_version", driver_of(evidence), &fleet.driver_version),
        (
            "cuda_version",
            evidence.cuda_version.clone(),
            &fleet.cuda_version,
        ),
    ];
    for (check, mine, common) in pairs {
        let (Some(mine), Some(common)) = (mine, common) else {
            continue;
        };
        let verdict = if &mine == common {
            Verdict::Healthy
        } else {
            Verdict::Monitor
        };
        findings.push(Finding {
            verdict,
            ..Finding::passed(
                check,
                mine,
                format!("== {common}, as on most of the {} nodes", fleet.nodes),
                FLEET,
            )
        });
    }
}

fn throttling(row: &Map<String, Value>, gpu: Option<String>, findings: &mut Vec<Finding>) {
    let active: Vec<&str> = THROTTLES
        .iter()
        .filter(|(field, _)| text(row, field).is_some_and(|v| v == "Active"))
        .map(|(_, what)| *what)
        .collect();
    if THROTTLES.iter().all(|(field, _)| row.get(*field).is_none()) {
        return;
    }
    let verdict = if active.is_empty() {
        Verdict::Healthy
    } else {
        Verdict::Monitor
    };
    let observed = if active.is_empty() {
        "no hardware clock slowdown".to_string()
    } else {
        active.join(", ")
    };
    findings.push(
        Finding {
            verdict,
            ..Finding::passed(
                "clocks_throttle",
                observed,
                "none active".into(),
                DCGM_THROTTLE,
            )
        }
        .on_gpu(gpu),
    );
}

fn kernel_log(
    log: &KernelLogErrors,
    evidence: &NodeEvidence,
    policy: &Policy,
    findings: &mut Vec<Finding>,
) {
    let product = evidence.gpus.iter().flatten().find_map(|g| text(g, "name"));
    let mut judged: Vec<u32> = Vec::new();
    for event in &log.xids {
        // Xid 45 is a cleanup after another error; NVIDIA: "follow other Xid".
        let code = event
            .caused_by
            .filter(|_| event.xid == 45)
            .unwrap_or(event.xid);
        if judged.contains(&code) {
            continue;
        }
        judged.push(code);
        let (verdict, meaning) = policy.action(code, product.as_deref(), &event.message);
        let when = event
            .timestamp
            .as_deref()
            .map(|t| format!(" at [{t}]"))
            .unwrap_or_default();
        let count = log.xids.iter().filter(|e| e.xid == event.xid).count();
        findings.push(
            Finding {
                verdict,
                ..Finding::passed(
                    "xid",
                    format!("Xid {code} ({meaning}){when}, {count}x: {}", event.message),
                    "none since boot".into(),
                    xid_actions::SOURCE,
                )
            }
            .on_gpu(Some(event.pci.clone())),
        );
    }
    findings.extend(policy.escalations(&log.xids, product.as_deref()));
    for block in &log.fallen_off_bus {
        findings.push(
            Finding {
                verdict: Verdict::Reboot,
                ..Finding::passed(
                    "xid",
                    format!("GPU {} has fallen off the bus", block.pci),
                    "none since boot".into(),
                    AWS_79,
                )
            }
            .on_gpu(Some(block.pci.clone())),
        );
    }
    if judged.is_empty() && log.fallen_off_bus.is_empty() {
        findings.push(Finding::passed(
            "xid",
            "no Xid since boot".into(),
            "none since boot".into(),
            xid_actions::SOURCE,
        ));
    }
}

fn dcgm(diag: &DiagReport, findings: &mut Vec<Finding>) {
    let mut failed = false;
    for (test, result) in diag.problems() {
        failed = true;
        let gpu = result.gpu.map(|g| g.to_string());
        let reason = result.warnings.iter().find(|w| w.dcgm_action.is_some());
        let verdict = match (result.status, reason.and_then(|w| w.dcgm_action)) {
            (DiagStatus::Warn, _) | (_, Some("monitor")) => Verdict::Monitor,
            // A failed test with no reason DCGM classifies: drained until someone looks.
            _ => Verdict::Isolate,
        };
        let words = result
            .warnings
            .first()
            .map(|w| match w.reason {
                Some(reason) => format!("{reason}: {}", w.message),
                None => w.message.clone(),
            })
            .unwrap_or_else(|| "no warning text".into());
        findings.push(
            Finding {
                verdict,
                ..Finding::passed(
                    "dcgm_diag",
                    format!("{} {}: {words}", test.name, status_word(result.status)),
                    "every test passes".into(),
                    DCGM_SEVERITY,
                )
            }
            .on_gpu(gpu),
        );
    }
    if !failed {
        let ran = diag
            .tests
            .iter()
            .filter(|t| t.status == DiagStatus::Pass)
            .count();
        findings.push(Finding::passed(
            "dcgm_diag",
            format!("{ran} tests passed"),
            "every test passes".into(),
            DCGM_SEVERITY,
        ));
    }
}

fn status_word(status: DiagStatus) -> &'static str {
    match status {
        DiagStatus::Fail => "failed",
        DiagStatus::Warn => "warned",
        DiagStatus::Pass => "passed",
        DiagStatus::Skip => "skipped",
    }
}

#[cfg(test)]
#[path = "node_check_tests.rs"]
mod tests;
