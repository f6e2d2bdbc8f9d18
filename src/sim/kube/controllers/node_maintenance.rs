//! What a repair does to a node on the Kubernetes side: cordon it (as `kubectl cordon`, with
//! the taint the node lifecycle controller adds to an unschedulable node and the kubelet's
//! event), drain it (every pod but DaemonSets' goes; their controllers place them elsewhere),
//! and reboot it: the kubelet stops posting status, the node goes Unknown after the grace
//! period (node_lifecycle.rs), and when it is back it posts Ready with a new bootID, the
//! kubelet's `Rebooted` event, a fresh kernel log and a restarted monitoring agent (the same
//! for EC2's RebootInstances).

use std::time::Duration;

use serde_json::{Value, json};

use super::{events, node_lifecycle, node_monitoring, shared};
use crate::sim::kube::storage::state::{KubeState, Timer, built_in_key};

/// The taint an unschedulable node gets (TaintNodesByCondition).
const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

fn owned_by_daemonset(pod: &Value) -> bool {
    pod["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|o| o["kind"] == "DaemonSet")
}

/// Marks `node` unschedulable (or schedulable again).
pub(crate) fn set_schedulable(state: &mut KubeState, node: &str, schedulable: bool) {
    let Some(mut object) = state.object("nodes", "", node) else {
        return;
    };
    if (object["spec"]["unschedulable"] == true) != schedulable {
        return;
    }
    let mut taints: Vec<Value> = object["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    taints.retain(|t| t["key"] != UNSCHEDULABLE);
    if schedulable {
        if let Some(spec) = object["spec"].as_object_mut() {
            spec.remove("unschedulable");
        }
    } else {
        object["spec"]["unschedulable"] = json!(true);
        taints.push(json!({"key": UNSCHEDULABLE, "effect": "NoSchedule", "timeAdded": crate::sim::timestamps::rfc3339(state.now)}));
    }
    if taints.is_empty() {
        if let Some(spec) = object["spec"].as_object_mut() {
            spec.remove("taints");
        }
    } else {
        object["spec"]["taints"] = json!(taints);
    }
    let object = shared::update(state, "nodes", object);
    let status = if schedulable {
        "NodeSchedulable"
    } else {
        "NodeNotSchedulable"
    };
    events::record(
        state,
        &object,
        false,
        status,
        &format!("Node {node} status is now: {status}"),
        "kubelet",
    );
}

/// Cordons `node` and evicts its pods but DaemonSets'.
pub(crate) fn cordon_and_drain(state: &mut KubeState, node: &str) {
    set_schedulable(state, node, false);
    let evicted: Vec<Value> = state
        .store
        .pods_on_node_with_json(node, None)
        .map(|(p, _)| p.clone())
        .filter(|p| !owned_by_daemonset(p) && !shared::is_terminal(p))
        .collect();
    for pod in evicted {
        shared::remove(state, "pods", &pod);
    }
}

/// Reboots `node`: its kubelet is silent for `takes`, then it is back.
pub(crate) fn reboot(state: &mut KubeState, node: &str, takes: Duration) {
    node_lifecycle::cut(state, node);
    state.schedule(
        takes,
        Timer::NodeRebooted {
            node: node.to_string(),
        },
    );
}

/// `node` has booted again: a new bootID, what was injected and what a reset clears gone, the
/// kubelet posting Ready. A cordon stays (the kubelet does not lift one; a repair that
/// rebooted the node does, sim/repair).
pub(crate) fn rebooted(state: &mut KubeState, node: &str) {
    let now = state.now;
    let count = state.reboots.get(node).map_or(1, |(_, n)| n + 1);
    state.reboots.insert(node.to_string(), (now, count));
    state.injected.remove(node);
    clear_transient_faults(state, node);
    if let Some(mut object) = state.object("nodes", "", node) {
        let instance = object["spec"]["providerID"]
            .as_str()
            .and_then(|p| p.rsplit('/').next())
            .unwrap_or(node)
            .to_string();
        let boot_id = format!("{instance}-boot{}", count + 1);
        object["status"]["nodeInfo"]["bootID"] = json!(boot_id);
        let object = shared::update(state, "nodes", object);
        events::record(
            state,
            &object,
            true,
            "Rebooted",
            &format!("Node {node} has been rebooted, boot id: {boot_id}"),
            "kubelet",
        );
    }
    node_lifecycle::restore(state, node);
    super::device_plugin::hardware_changed(state, node);
    node_monitoring::restart(state, node);
}

/// What a reboot resets on the node's GPUs: the Xids the driver reported, a pending row remap
/// (a reset applies it), the volatile ECC counts and the recovery the driver asked for. A GPU
/// off the bus for good, NVLinks, power caps and the NIC stay as they were.
fn clear_transient_faults(state: &mut KubeState, node: &str) {
    let position = gpu_position(state, node);
    for name in [Some(node.to_string()), position.map(|p| format!("gpu{p}"))]
        .into_iter()
        .flatten()
    {
        let faults = state.hardware.entry(&name);
        for gpu in faults.gpus.values_mut() {
            gpu.xids.clear();
            gpu.row_remap_pending = None;
            gpu.ecc_uncorrectable = None;
            gpu.recovery_action = None;
        }
    }
    state.hardware.prune();
}

/// `node`'s place among the GPU nodes by name (how `gpuN` faults name it).
fn gpu_position(state: &KubeState, node: &str) -> Option<usize> {
    let mut names: Vec<String> = state
        .store
        .list(&built_in_key("nodes"), None)
        .filter(|n| crate::sim::gpu::programs::node_gpus(n) > 0)
        .map(|n| shared::name(n).to_string())
        .collect();
    names.sort();
    names.iter().position(|n| n == node)
}
