//! What EKS node auto repair decides for a managed node group, from its `nodeRepairConfig`
//! (kept as DescribeNodegroup answers it) and the EKS user guide: how long a condition must
//! last, what to do about it, when repair holds off, how many nodes it repairs at once.
//! Sources: docs.aws.amazon.com/eks/latest/userguide/node-repair.html (waits, the default
//! hold, in-progress repairs continuing), node-health-nma.html (the action per Xid reason).

use std::time::Duration;

use serde_json::Value;

/// What a repair does to the node's instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Replace,
    Reboot,
    NoAction,
}

impl Action {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "Replace" => Some(Self::Replace),
            "Reboot" => Some(Self::Reboot),
            "NoAction" => Some(Self::NoAction),
            _ => None,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Self::Replace => "Replace",
            Self::Reboot => "Reboot",
            Self::NoAction => "NoAction",
        }
    }
}

/// The conditions repair watches, each with its default wait ("Repair after": 10m for
/// AcceleratedHardwareReady, 30m for the others the agent sets).
pub const WATCHED: [(&str, Duration); 5] = [
    ("AcceleratedHardwareReady", Duration::from_secs(600)),
    ("ContainerRuntimeReady", Duration::from_secs(1800)),
    ("KernelReady", Duration::from_secs(1800)),
    ("NetworkingReady", Duration::from_secs(1800)),
    ("StorageReady", Duration::from_secs(1800)),
];

/// `WellKnownXidCodes` of the EKS node monitoring agent (aws/eks-node-monitoring-agent@51af549,
/// monitors/nvidia/dcgm/dcgm_policies.go): an Xid it treats as Fatal, setting
/// AcceleratedHardwareReady False; any other is only a Warning Event, which nothing repairs.
pub const AGENT_FATAL_XIDS: [u32; 21] = [
    46, 48, 54, 62, 63, 64, 74, 79, 95, 109, 110, 119, 120, 136, 140, 142, 143, 151, 155, 156, 158,
];

/// Xid reasons the node-health-nma table says a reboot repairs; its other NVIDIA rows, and the
/// agent's Fatal reasons the table does not list, are replaced (the agent's own comment: "On
/// EKS, the only automated remediation available is node replacement").
const REBOOTED_XIDS: [u32; 7] = [13, 31, 48, 63, 64, 94, 95];

/// Whether repair is on for a node group with `config`.
pub fn enabled(config: Option<&Value>) -> bool {
    config.is_some_and(|c| c["enabled"] == true)
}

fn matching_override<'a>(config: &'a Value, condition: &str, reason: &str) -> Option<&'a Value> {
    config["nodeRepairConfigOverrides"]
        .as_array()?
        .iter()
        .find(|o| o["nodeMonitoringCondition"] == condition && o["nodeUnhealthyReason"] == reason)
}

/// How long `condition` failing for `reason` must last before repair acts.
pub fn wait(config: &Value, condition: &str, reason: &str) -> Duration {
    if let Some(minutes) = matching_override(config, condition, reason)
        .and_then(|o| o["minRepairWaitTimeMins"].as_u64())
    {
        return Duration::from_secs(minutes * 60);
    }
    WATCHED
        .iter()
        .find(|(c, _)| *c == condition)
        .map_or(Duration::from_secs(1800), |(_, wait)| *wait)
}

/// What repair does about `condition` failing for `reason`: the override's action, else the
/// documented default.
pub fn action(config: &Value, condition: &str, reason: &str) -> Action {
    if let Some(action) = matching_override(config, condition, reason)
        .and_then(|o| o["repairAction"].as_str())
        .and_then(Action::parse)
    {
        return action;
    }
    let xid = reason
        .strip_prefix("NvidiaXID")
        .and_then(|r| r.strip_suffix("Error"))
        .and_then(|code| code.parse::<u32>().ok());
    match xid {
        Some(code) if REBOOTED_XIDS.contains(&code) => Action::Reboot,
        _ => Action::Replace,
    }
}

/// Why repair holds off in a node group of `total` nodes with `unhealthy` of them unhealthy,
/// or None when it may act: above the configured threshold, or by default "more than five
/// nodes and more than 20% of the nodes ... unhealthy".
pub fn held(config: &Value, total: usize, unhealthy: usize) -> Option<String> {
    if let Some(count) = config["maxUnhealthyNodeThresholdCount"].as_u64() {
        return (unhealthy as u64 > count).then(|| {
            format!("{unhealthy} of {total} nodes unhealthy, over maxUnhealthyNodeThresholdCount {count}")
        });
    }
    if let Some(percent) = config["maxUnhealthyNodeThresholdPercentage"].as_u64() {
        return (unhealthy as u64 * 100 > percent * total as u64).then(|| {
            format!("{unhealthy} of {total} nodes unhealthy, over maxUnhealthyNodeThresholdPercentage {percent}%")
        });
    }
    (total > 5 && unhealthy * 100 > 20 * total).then(|| {
        format!("{unhealthy} of {total} nodes unhealthy: more than five nodes and more than 20% unhealthy (EKS's default)")
    })
}

/// How many of a node group's nodes repair works on at once, with `unhealthy` unhealthy: the
/// configured count, or the percentage of the unhealthy nodes (at least one). EKS documents no
/// default; the twin repairs one at a time then.
pub fn parallel(config: &Value, unhealthy: usize) -> usize {
    if let Some(count) = config["maxParallelNodesRepairedCount"].as_u64() {
        return count as usize;
    }
    if let Some(percent) = config["maxParallelNodesRepairedPercentage"].as_u64() {
        return ((unhealthy as u64 * percent) / 100).max(1) as usize;
    }
    1
}

/// What repair will do about one node's failing condition in a group of `total` nodes of which
/// `unhealthy` are unhealthy (that node included): what a drill predicts before it breaks one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Plan {
    pub enabled: bool,
    /// Whether the agent sets the condition for this reason at all (an Xid it does not count
    /// as Fatal is only a Warning Event, and nothing repairs it).
    pub fatal: bool,
    pub wait_seconds: u64,
    pub action: &'static str,
    /// Why repair holds off, when it does.
    pub held: Option<String>,
    /// How many of the group's nodes it repairs at once.
    pub parallel: usize,
}

pub fn plan(
    config: Option<&Value>,
    condition: &str,
    reason: &str,
    total: usize,
    unhealthy: usize,
) -> Plan {
    let empty = Value::Null;
    let config = config.unwrap_or(&empty);
    let xid = reason
        .strip_prefix("NvidiaXID")
        .and_then(|r| r.strip_suffix("Error"))
        .and_then(|code| code.parse::<u32>().ok());
    Plan {
        enabled: enabled(Some(config)),
        fatal: xid.is_none_or(|code| AGENT_FATAL_XIDS.contains(&code)),
        wait_seconds: wait(config, condition, reason).as_secs(),
        action: action(config, condition, reason).word(),
        held: held(config, total, unhealthy),
        parallel: parallel(config, unhealthy),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn documented_defaults_without_overrides() {
        let config = json!({"enabled": true});
        let gpu = "AcceleratedHardwareReady";
        assert_eq!(
            wait(&config, gpu, "NvidiaXID79Error"),
            Duration::from_secs(600)
        );
        assert_eq!(
            wait(&config, "KernelReady", "AppBlocked"),
            Duration::from_secs(1800)
        );
        assert_eq!(action(&config, gpu, "NvidiaXID79Error"), Action::Replace);
        assert_eq!(action(&config, gpu, "NvidiaXID48Error"), Action::Reboot);
        assert_eq!(
            action(&config, gpu, "NvidiaDeviceCountMismatch"),
            Action::Replace
        );
        assert_eq!(held(&config, 5, 5), None);
        assert!(
            held(&config, 10, 3)
                .unwrap()
                .contains("more than five nodes")
        );
        assert_eq!(held(&config, 10, 2), None);
        assert_eq!(parallel(&config, 4), 1);
    }

    #[test]
    fn overrides_and_limits_as_configured() {
        let config = json!({
            "enabled": true,
            "maxUnhealthyNodeThresholdCount": 2,
            "maxParallelNodesRepairedPercentage": 50,
            "nodeRepairConfigOverrides": [{
                "nodeMonitoringCondition": "AcceleratedHardwareReady",
                "nodeUnhealthyReason": "NvidiaXID79Error",
                "minRepairWaitTimeMins": 3,
                "repairAction": "Reboot",
            }],
        });
        let gpu = "AcceleratedHardwareReady";
        assert_eq!(
            wait(&config, gpu, "NvidiaXID79Error"),
            Duration::from_secs(180)
        );
        assert_eq!(action(&config, gpu, "NvidiaXID79Error"), Action::Reboot);
        assert_eq!(action(&config, gpu, "NvidiaXID74Error"), Action::Replace);
        assert_eq!(held(&config, 4, 2), None);
        assert!(held(&config, 4, 3).is_some());
        assert_eq!((parallel(&config, 1), parallel(&config, 6)), (1, 3));
        assert!(!enabled(Some(&json!({"enabled": false}))) && !enabled(None));
    }
}
