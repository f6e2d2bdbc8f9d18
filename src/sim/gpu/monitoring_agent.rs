//! What the EKS node monitoring agent finds on a GPU node, in its own words
//! (aws/eks-node-monitoring-agent@51af549): every Xid DCGM's Xid policy reports, a well-known
//! one as a Fatal `NvidiaXID<code>Error` and any other as a Warning `NvidiaXID<code>Warning`
//! (monitors/nvidia/dcgm/dcgm_policies.go), and fewer GPUs than the instance type has as a
//! Fatal `NvidiaDeviceCountMismatch` (dcgm_devices.go). DCGM's policy sees the Xids the driver
//! reports and the values injected into its Xid field; an Xid injected before the agent
//! started is not a new violation, so the agent never hears of it. A fabric that never
//! registered (the twin's `fabric-down`: Fabric Manager "Not Started") is no finding: the agent
//! skips DcgmFMStatusNotStarted to avoid false positives at boot (dcgm_watchfield.go), so that
//! fault is one the agent misses and a drill should say so.

use std::time::Duration;

use super::gpu_model::GpuDevice;
use super::injected::Injected;
use super::kernel_log::driver_xids;
use super::node_faults::NodeFaults;

/// The condition the agent's NVIDIA monitor owns.
pub(crate) const ACCELERATED_HARDWARE_READY: &str = "AcceleratedHardwareReady";

/// `(condition, reason, message)` of each condition the agent sets True when it starts
/// (cmd/eks-node-monitoring-agent/main.go), the NVIDIA one last and on GPU nodes only.
pub(crate) const READY_CONDITIONS: [(&str, &str, &str); 5] = [
    (
        "KernelReady",
        "KernelIsReady",
        "Monitoring for the Kernel system is active",
    ),
    (
        "StorageReady",
        "DiskIsReady",
        "Monitoring for the Disk system is active",
    ),
    (
        "ContainerRuntimeReady",
        "ContainerRuntimeIsReady",
        "Monitoring for the ContainerRuntime system is active",
    ),
    (
        "NetworkingReady",
        "NetworkingIsReady",
        "Monitoring for the Networking system is active",
    ),
    (
        ACCELERATED_HARDWARE_READY,
        "NvidiaGPUIsReady",
        "Monitoring for the Nvidia GPU system is active",
    ),
];

use crate::repair::policy::AGENT_FATAL_XIDS as WELL_KNOWN_XIDS;

/// The agent on one node: when it started, and when it last applied its findings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AgentRun {
    pub(crate) started: Duration,
    pub(crate) reported: Option<Duration>,
}

/// How the agent reports a finding: a Fatal one sets its condition False, a Warning is an
/// Event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Severity {
    Fatal,
    Warning,
}

/// One thing the agent found, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub(crate) at: Duration,
    pub(crate) severity: Severity,
    pub(crate) reason: String,
    pub(crate) message: String,
}

fn xid_finding(code: u32, at: Duration) -> Finding {
    if WELL_KNOWN_XIDS.contains(&code) {
        Finding {
            at,
            severity: Severity::Fatal,
            reason: format!("NvidiaXID{code}Error"),
            message: format!(
                "detected XID-{code} on the instance, review kernel logs for additional information."
            ),
        }
    } else {
        Finding {
            at,
            severity: Severity::Warning,
            reason: format!("NvidiaXID{code}Warning"),
            message: format!(
                "detected unknown XID-{code} on the instance, review kernel logs for additional information."
            ),
        }
    }
}

/// What the agent that started at `started` has found on a node with `installed` GPUs of
/// which the driver sees `gpus`, oldest first.
pub(crate) fn findings(
    installed: u32,
    gpus: &[GpuDevice],
    faults: Option<&NodeFaults>,
    injected: Option<&Injected>,
    started: Duration,
) -> Vec<Finding> {
    let mut found = Vec::new();
    if let Some(faults) = faults {
        for gpu in gpus {
            let Some(on_gpu) = faults.gpu(gpu.index) else {
                continue;
            };
            for (code, at) in driver_xids(gpu, on_gpu) {
                // A fault the driver reported before the agent ran is still there to find.
                found.push(xid_finding(code, at.unwrap_or(started).max(started)));
            }
        }
        let visible = faults.visible_gpus(installed);
        if visible < installed {
            found.push(Finding {
                at: started,
                severity: Severity::Fatal,
                reason: "NvidiaDeviceCountMismatch".into(),
                message: format!(
                    "expected {installed} GPUs for this instance type but only {visible} were detected — possible hardware failure"
                ),
            });
        }
    }
    for (_, code, at) in injected.map_or(&[][..], |i| &i.dcgm_xids[..]) {
        if *at >= started {
            found.push(xid_finding(*code, *at));
        }
    }
    found.sort_by_key(|f| f.at);
    found
}

/// The AcceleratedHardwareReady condition after `fatal` findings, as the agent's node exporter
/// folds them (pkg/manager/node_exporter.go): the latest reason, each distinct message once,
/// joined with "; ", transitioned at the first. None: still ready.
pub(crate) fn failed_condition(fatal: &[&Finding]) -> Option<(String, String, Duration)> {
    let first = fatal.first()?;
    let mut message = String::new();
    for finding in fatal {
        if message.contains(&finding.message) {
            continue;
        }
        if !message.is_empty() {
            message.push_str("; ");
        }
        message.push_str(&finding.message);
    }
    let reason = fatal.last().map_or_else(String::new, |f| f.reason.clone());
    Some((reason, message, first.at))
}

#[cfg(test)]
mod tests {
    use super::super::gpu_model::GpuHost;
    use super::*;

    fn host() -> Vec<GpuDevice> {
        GpuHost::a10g("ip-192-168-3-4", 7, "Mon Nov 30 04:43:45 2026").gpus
    }

    #[test]
    fn a_well_known_xid_is_fatal_and_another_a_warning_in_the_agents_words() {
        let mut faults = NodeFaults::default();
        faults.gpu_mut(0).xids.push((79, Duration::from_secs(300)));
        faults.gpu_mut(0).xids.push((13, Duration::from_secs(200)));
        let found = findings(1, &host(), Some(&faults), None, Duration::from_secs(100));
        assert_eq!(found[0].reason, "NvidiaXID13Warning");
        assert_eq!(found[0].severity, Severity::Warning);
        assert_eq!(
            found[1].message,
            "detected XID-79 on the instance, review kernel logs for additional information."
        );
        let fatal: Vec<&Finding> = found
            .iter()
            .filter(|f| f.severity == Severity::Fatal)
            .collect();
        assert_eq!(
            failed_condition(&fatal).map(|c| (c.0, c.2)),
            Some(("NvidiaXID79Error".into(), Duration::from_secs(300)))
        );
    }

    #[test]
    fn an_injection_before_the_agent_started_is_not_found() {
        let mut injected = Injected::default();
        injected.dcgm_xids.push((0, 79, Duration::from_secs(50)));
        injected.dcgm_xids.push((0, 48, Duration::from_secs(150)));
        let found = findings(1, &host(), None, Some(&injected), Duration::from_secs(100));
        let reasons: Vec<&str> = found.iter().map(|f| f.reason.as_str()).collect();
        assert_eq!(reasons, ["NvidiaXID48Error"]);
    }

    #[test]
    fn a_fabric_that_never_started_is_no_finding_as_the_agent_skips_it() {
        let faults = NodeFaults {
            fabric_down: true,
            ..NodeFaults::default()
        };
        assert!(findings(1, &host(), Some(&faults), None, Duration::ZERO).is_empty());
    }

    #[test]
    fn a_missing_gpu_is_a_device_count_mismatch_and_messages_fold_once() {
        let mut faults = NodeFaults::default();
        faults.gpu_mut(0).missing = true;
        let found = findings(1, &[], Some(&faults), None, Duration::ZERO);
        assert_eq!(found[0].reason, "NvidiaDeviceCountMismatch");
        assert!(
            found[0]
                .message
                .starts_with("expected 1 GPUs for this instance type but only 0")
        );
        let twice = [&found[0], &found[0]];
        assert_eq!(failed_condition(&twice).unwrap().1, found[0].message);
    }
}
