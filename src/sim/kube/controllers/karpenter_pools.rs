//! What the twin's Karpenter reads off a NodePool: the instance type and zones its
//! requirements allow, the labels and taints its nodes register with, its CPU limit and how
//! long an empty node is kept; and what a new node of it offers once its DaemonSets are there.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::daemonset::with_daemon_tolerations;
use super::scheduler::{pod_requests, quantity_milli};
use super::shared;
use crate::clock::parse_duration;
use crate::lab::{self, NodeShape};
use crate::sim::kube::storage::state::KubeState;

pub(super) const NODEPOOLS: &str = "karpenter.sh/nodepools";

pub(super) struct Pool {
    pub(crate) name: String,
    pub(crate) uid: String,
    pub(crate) weight: i64,
    pub(crate) instance_type: &'static str,
    pub(crate) shape: &'static NodeShape,
    pub(crate) zones: Vec<String>,
    pub(crate) labels: BTreeMap<String, String>,
    pub(crate) taints: Vec<Value>,
    pub(crate) cpu_limit: Option<i128>,
    pub(crate) consolidate_after: Duration,
    pub(crate) spec: Value,
}

/// The instance types the twin can start, by name.
fn shape_of(instance_type: &str) -> Option<&'static NodeShape> {
    [&lab::T3_MEDIUM, &lab::G5_XLARGE]
        .into_iter()
        .find(|s| s.instance_type == instance_type)
}

/// The values a requirement allows for `key` (operator In), if the pool names it.
fn allowed(requirements: &Value, key: &str) -> Option<Vec<String>> {
    requirements
        .as_array()?
        .iter()
        .find(|r| r["key"] == key && r["operator"] == "In")
        .map(|r| {
            r["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
}

/// The pools, heaviest first; a pool whose instance types the twin cannot start is left out.
pub(super) fn pools(state: &KubeState) -> Vec<Pool> {
    let mut pools: Vec<Pool> = state
        .store
        .list(NODEPOOLS, None)
        .filter_map(|pool| {
            let template = &pool["spec"]["template"];
            let requirements = &template["spec"]["requirements"];
            let types = allowed(requirements, "node.kubernetes.io/instance-type")
                .unwrap_or_else(|| vec![lab::T3_MEDIUM.instance_type.to_string()]);
            let shape = types.iter().find_map(|t| shape_of(t))?;
            let zones = allowed(requirements, "topology.kubernetes.io/zone").unwrap_or_else(|| {
                lab::ZONES
                    .iter()
                    .map(|(zone, _)| (*zone).to_string())
                    .collect()
            });
            let mut labels: BTreeMap<String, String> = template["metadata"]["labels"]
                .as_object()
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect();
            for requirement in requirements.as_array().into_iter().flatten() {
                let values = requirement["values"].as_array();
                if requirement["operator"] == "In"
                    && let (Some(key), Some([one])) =
                        (requirement["key"].as_str(), values.map(Vec::as_slice))
                    && let Some(value) = one.as_str()
                {
                    labels.insert(key.to_string(), value.to_string());
                }
            }
            let name = shared::name(pool).to_string();
            labels.insert("karpenter.sh/nodepool".into(), name.clone());
            Some(Pool {
                uid: shared::uid(pool).to_string(),
                weight: pool["spec"]["weight"].as_i64().unwrap_or(0),
                instance_type: shape.instance_type,
                shape,
                zones,
                labels,
                taints: template["spec"]["taints"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default(),
                cpu_limit: pool["spec"]["limits"]["cpu"]
                    .as_str()
                    .map(quantity_milli)
                    .or_else(|| {
                        pool["spec"]["limits"]["cpu"]
                            .as_i64()
                            .map(|c| i128::from(c) * 1000)
                    }),
                consolidate_after: pool["spec"]["disruption"]["consolidateAfter"]
                    .as_str()
                    .and_then(|d| parse_duration(d).ok())
                    .unwrap_or(Duration::from_secs(30)),
                spec: pool["spec"].clone(),
                name,
            })
        })
        .collect();
    pools.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.name.cmp(&b.name)));
    pools
}

impl Pool {
    /// The node a new NodeClaim of this pool in `zone` would register as: its labels, taints
    /// and the instance type's allocatable, for matching pods before it exists.
    pub(super) fn prospective_node(&self, zone: &str) -> Value {
        let mut labels = json!({
            "karpenter.sh/capacity-type": "on-demand",
            "karpenter.k8s.aws/ec2nodeclass": self.spec["template"]["spec"]["nodeClassRef"]["name"].as_str().unwrap_or("default"),
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": self.instance_type,
            "topology.kubernetes.io/region": lab::REGION,
            "topology.kubernetes.io/zone": zone,
        });
        for (key, value) in &self.labels {
            labels[key] = json!(value);
        }
        json!({
            "metadata": {"labels": labels},
            "spec": {"taints": self.taints},
            "status": {"allocatable": {"cpu": self.shape.allocatable_cpu, "memory": self.shape.allocatable_memory, "pods": self.shape.pods}},
        })
    }

    /// What a new node of this pool offers pods: its allocatable less what the DaemonSets that
    /// would run on it request (Karpenter counts that overhead before it launches).
    pub(super) fn room(&self, state: &KubeState, node: &Value) -> BTreeMap<String, i128> {
        let mut room: BTreeMap<String, i128> = node["status"]["allocatable"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), quantity_milli(v.as_str().unwrap_or("0"))))
            .collect();
        for ds in state.objects("daemonsets", None) {
            let spec = &ds["spec"]["template"]["spec"];
            let tolerations = with_daemon_tolerations(spec);
            if shared::node_matches(spec, node)
                && shared::untolerated_taints(node, &tolerations).is_empty()
            {
                take(&mut room, &pod_requests(spec));
            }
        }
        room
    }
}

/// Takes a pod's requests (and its place) out of a node's room.
pub(super) fn take(room: &mut BTreeMap<String, i128>, requests: &BTreeMap<String, i128>) {
    for (resource, amount) in requests {
        *room.entry(resource.clone()).or_insert(0) -= amount;
    }
    *room.entry("pods".into()).or_insert(0) -= 1000;
}

/// Whether a pod's requests (and one more pod) fit what is left.
pub(super) fn fits(room: &BTreeMap<String, i128>, requests: &BTreeMap<String, i128>) -> bool {
    requests
        .iter()
        .all(|(resource, amount)| room.get(resource).copied().unwrap_or(0) >= *amount)
        && room.get("pods").copied().unwrap_or(0) >= 1000
}
