//! Nodes and pods as `kubectl get -o wide` shows them, as plain records.

use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Serialize)]
pub struct NodeSummary {
    pub name: String,
    pub status: String,
    pub ready: bool,
    /// Cordoned: `kubectl get nodes` shows `Ready,SchedulingDisabled`.
    pub unschedulable: bool,
    pub version: String,
    pub internal_ip: String,
    pub zone: String,
    pub instance_type: String,
    pub nodegroup: String,
    /// The cloud's id of the machine (`i-0f...` from `spec.providerID`; a hybrid node's name):
    /// EKS reuses node names, the instance id names one machine.
    pub instance_id: String,
    pub labels: Value,
    pub taints: Vec<Value>,
    pub capacity: Value,
    pub allocatable: Value,
}

impl NodeSummary {
    pub fn from_object(node: &Value) -> Self {
        let labels = node["metadata"]["labels"].clone();
        let label = |key: &str| labels[key].as_str().unwrap_or_default().to_string();
        let ready = node["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        let unschedulable = node["spec"]["unschedulable"] == true;
        let internal_ip = node["status"]["addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["type"] == "InternalIP")
            .and_then(|a| a["address"].as_str())
            .unwrap_or_default()
            .to_string();
        Self {
            name: node["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            status: match (ready, unschedulable) {
                (true, false) => "Ready".into(),
                (true, true) => "Ready,SchedulingDisabled".into(),
                (false, false) => "NotReady".into(),
                (false, true) => "NotReady,SchedulingDisabled".into(),
            },
            ready,
            unschedulable,
            version: node["status"]["nodeInfo"]["kubeletVersion"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            internal_ip,
            zone: label("topology.kubernetes.io/zone"),
            instance_type: label("node.kubernetes.io/instance-type"),
            nodegroup: label("eks.amazonaws.com/nodegroup"),
            instance_id: node["spec"]["providerID"]
                .as_str()
                .and_then(|id| id.rsplit('/').next())
                .unwrap_or_default()
                .to_string(),
            taints: node["spec"]["taints"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
            capacity: node["status"]["capacity"].clone(),
            allocatable: node["status"]["allocatable"].clone(),
            labels,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PodSummary {
    pub name: String,
    pub namespace: String,
    /// `1/1`.
    pub ready: String,
    /// What kubectl's STATUS column says: `Running`, `Completed`, `CrashLoopBackOff`, ...
    pub status: String,
    pub phase: String,
    pub restarts: i64,
    pub node: String,
    pub ip: String,
    pub labels: Value,
}

impl PodSummary {
    pub fn from_object(pod: &Value) -> Self {
        let statuses = pod["status"]["containerStatuses"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let total = pod["spec"]["containers"].as_array().map_or(0, Vec::len);
        let ready = statuses.iter().filter(|s| s["ready"] == true).count();
        let phase = pod["status"]["phase"]
            .as_str()
            .unwrap_or("Pending")
            .to_string();
        let waiting = statuses
            .iter()
            .find_map(|s| s["state"]["waiting"]["reason"].as_str());
        let terminated = statuses
            .iter()
            .find_map(|s| s["state"]["terminated"]["reason"].as_str());
        // As kubectl prints it: a pod marked for deletion is Terminating whatever its phase.
        let status = if pod["metadata"]["deletionTimestamp"].is_null() {
            waiting
                .or(terminated.filter(|_| phase == "Succeeded" || phase == "Failed"))
                .unwrap_or(&phase)
                .to_string()
        } else {
            "Terminating".to_string()
        };
        Self {
            name: pod["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            namespace: pod["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            ready: format!("{ready}/{total}"),
            status,
            phase,
            restarts: statuses
                .iter()
                .map(|s| s["restartCount"].as_i64().unwrap_or(0))
                .sum(),
            node: pod["spec"]["nodeName"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            ip: pod["status"]["podIP"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            labels: pod["metadata"]["labels"].clone(),
        }
    }
}
