//! The node lifecycle and taint-eviction controllers, for a node whose link to the control
//! plane is cut (an on-premises node, seed 004): its kubelet stops posting status, and after the
//! node-monitor grace period the node's conditions go Unknown and it gets the `unreachable`
//! taints. Its pods are then evicted once their toleration of the NoExecute taint runs out (300 s
//! by default, added at admission; DaemonSet pods tolerate it for ever). An evicted pod stays
//! Terminating (its kubelet cannot confirm) and its controller replaces it. When the link comes
//! back the kubelet reports Ready, the taints go, the Terminating pods finish, and nothing that
//! moved elsewhere moves back.

use std::time::Duration;

use serde_json::{Value, json};

use super::{events, shared};
use crate::sim::kube::storage::state::{KubeState, Timer, built_in_key};
use crate::sim::timestamps::rfc3339;

/// kube-controller-manager's `--node-monitor-grace-period` (50 s since Kubernetes 1.32).
pub(crate) const NODE_MONITOR_GRACE: Duration = Duration::from_secs(50);
/// The grace period an evicted pod gets (its `terminationGracePeriodSeconds` default).
const EVICTION_GRACE_SECONDS: u64 = 30;
pub(crate) const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// Cuts a node's link: its status goes stale after the grace period.
pub(crate) fn cut(state: &mut KubeState, node: &str) {
    if state.links_down.contains_key(node) {
        return;
    }
    state.links_down.insert(node.to_string(), state.now);
    state.schedule(
        NODE_MONITOR_GRACE,
        Timer::NodeStatusStale {
            node: node.to_string(),
        },
    );
}

/// Brings a node's link back: the kubelet posts Ready again and finishes its evicted pods.
pub(crate) fn restore(state: &mut KubeState, node: &str) {
    if state.links_down.remove(node).is_none() {
        return;
    }
    let Some(mut object) = state.object("nodes", "", node) else {
        return;
    };
    let now = rfc3339(state.now);
    let was_unknown = !shared::condition_true(&object, "Ready");
    for (kind, reason, message) in CONDITIONS {
        let status = if kind == "Ready" { "True" } else { "False" };
        shared::set_condition(
            &mut object,
            json!({"type": kind, "status": status, "reason": reason, "message": message, "lastHeartbeatTime": now}),
            &now,
        );
    }
    if let Some(taints) = object["spec"]["taints"].as_array_mut() {
        taints.retain(|t| t["key"] != UNREACHABLE);
    }
    let object = shared::update(state, "nodes", object);
    if was_unknown {
        events::record(
            state,
            &object,
            false,
            "NodeReady",
            &format!("Node {node} status is now: NodeReady"),
            "kubelet",
        );
    }
    let terminating: Vec<Value> = state
        .store
        .pods_on_node_with_json(node, None)
        .map(|(p, _)| p.clone())
        .filter(shared::is_terminating)
        .collect();
    for pod in terminating {
        shared::remove(state, "pods", &pod);
    }
}

/// `(type, reason, message)` of the kubelet's conditions when it posts them.
pub(crate) const CONDITIONS: [(&str, &str, &str); 4] = [
    (
        "MemoryPressure",
        "KubeletHasSufficientMemory",
        "kubelet has sufficient memory available",
    ),
    (
        "DiskPressure",
        "KubeletHasNoDiskPressure",
        "kubelet has no disk pressure",
    ),
    (
        "PIDPressure",
        "KubeletHasSufficientPID",
        "kubelet has sufficient PID available",
    ),
    ("Ready", "KubeletReady", "kubelet is posting ready status"),
];

/// The conditions a kubelet posts: all healthy, Ready as `ready` says (a node whose container
/// runtime network is not up yet is not Ready).
pub(crate) fn posted_conditions(ready: bool) -> Value {
    let conditions: Vec<Value> = CONDITIONS
        .iter()
        .map(|(kind, reason, message)| match (*kind, ready) {
            ("Ready", true) => json!({"type": kind, "status": "True", "reason": reason, "message": message}),
            ("Ready", false) => json!({"type": kind, "status": "False", "reason": "KubeletNotReady", "message": "container runtime network not ready"}),
            _ => json!({"type": kind, "status": "False", "reason": reason, "message": message}),
        })
        .collect();
    json!(conditions)
}

/// The grace period has passed without a status from the node.
pub(crate) fn status_stale(state: &mut KubeState, node: &str) {
    if !state.links_down.contains_key(node) {
        return;
    }
    let Some(mut object) = state.object("nodes", "", node) else {
        return;
    };
    let now = rfc3339(state.now);
    for (kind, ..) in CONDITIONS {
        shared::set_condition(
            &mut object,
            json!({"type": kind, "status": "Unknown", "reason": "NodeStatusUnknown", "message": "Kubelet stopped posting node status."}),
            &now,
        );
    }
    let mut taints = object["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for effect in ["NoSchedule", "NoExecute"] {
        if !taints
            .iter()
            .any(|t| t["key"] == UNREACHABLE && t["effect"] == effect)
        {
            let mut taint = json!({"key": UNREACHABLE, "effect": effect});
            if effect == "NoExecute" {
                taint["timeAdded"] = json!(now);
            }
            taints.push(taint);
        }
    }
    object["spec"]["taints"] = json!(taints);
    let object = shared::update(state, "nodes", object);
    events::record(
        state,
        &object,
        false,
        "NodeNotReady",
        &format!("Node {node} status is now: NodeNotReady"),
        "node-controller",
    );
    let pods: Vec<Value> = state
        .store
        .pods_on_node_with_json(node, None)
        .map(|(p, _)| p.clone())
        .filter(|p| !shared::is_terminal(p) && !shared::is_terminating(p))
        .collect();
    let taint = json!({"key": UNREACHABLE, "effect": "NoExecute"});
    for mut pod in pods {
        // The node controller marks the pods of an unreachable node not ready.
        shared::set_condition(
            &mut pod,
            json!({"type": "Ready", "status": "False", "lastProbeTime": null}),
            &now,
        );
        let pod = shared::update(state, "pods", pod);
        match toleration_seconds(&pod["spec"]["tolerations"], &taint) {
            Tolerated::Never => evict(state, &pod),
            Tolerated::For(seconds) => state.schedule(
                Duration::from_secs(seconds),
                Timer::TaintEviction {
                    namespace: shared::namespace(&pod).to_string(),
                    name: shared::name(&pod).to_string(),
                    uid: shared::uid(&pod).to_string(),
                },
            ),
            Tolerated::Forever => {}
        }
    }
}

enum Tolerated {
    Never,
    For(u64),
    Forever,
}

/// How long a pod's tolerations let it stay under a NoExecute taint: the shortest
/// `tolerationSeconds` of the tolerations that match, for ever if one has none.
fn toleration_seconds(tolerations: &Value, taint: &Value) -> Tolerated {
    let matching: Vec<&Value> = tolerations
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| shared::tolerates(&json!([t]), taint))
        .collect();
    if matching.is_empty() {
        return Tolerated::Never;
    }
    match matching
        .iter()
        .map(|t| t["tolerationSeconds"].as_i64())
        .collect::<Option<Vec<i64>>>()
    {
        None => Tolerated::Forever,
        Some(seconds) => Tolerated::For(seconds.into_iter().min().unwrap_or(0).max(0) as u64),
    }
}

/// A pod's toleration has run out: the taint-eviction controller deletes it if its node is
/// still unreachable.
pub(crate) fn toleration_expired(state: &mut KubeState, namespace: &str, name: &str, uid: &str) {
    let Some(pod) = state
        .object("pods", namespace, name)
        .filter(|p| shared::uid(p) == uid)
    else {
        return;
    };
    let node = pod["spec"]["nodeName"].as_str().unwrap_or_default();
    let still_tainted = state
        .object_ref("nodes", "", node)
        .is_some_and(|n| shared::has_taint(n, UNREACHABLE, Some("NoExecute")));
    if still_tainted && !shared::is_terminating(&pod) {
        evict(state, &pod);
    }
}

/// Marks a pod for deletion; on an unreachable node it stays Terminating until the kubelet
/// is back.
fn evict(state: &mut KubeState, pod: &Value) {
    let mut pod = pod.clone();
    let now = state.now;
    pod["metadata"]["deletionTimestamp"] =
        json!(rfc3339(now + Duration::from_secs(EVICTION_GRACE_SECONDS)));
    pod["metadata"]["deletionGracePeriodSeconds"] = json!(EVICTION_GRACE_SECONDS);
    shared::set_condition(
        &mut pod,
        json!({"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager", "message": "Taint manager: deleting due to NoExecute taint"}),
        &rfc3339(now),
    );
    let pod = shared::update(state, "pods", pod);
    let message = format!(
        "Marking for deletion Pod {}/{}",
        shared::namespace(&pod),
        shared::name(&pod)
    );
    events::record(
        state,
        &pod,
        false,
        "TaintManagerEviction",
        &message,
        "taint-eviction-controller",
    );
}

/// The nodes whose link a `link-down` fault names: `onprem` (every hybrid node) or a node.
pub(crate) fn nodes_named(state: &KubeState, which: &str) -> Vec<String> {
    state
        .store
        .list(&built_in_key("nodes"), None)
        .filter(|n| match which {
            "onprem" | "hybrid" => {
                n["metadata"]["labels"]["eks.amazonaws.com/compute-type"] == "hybrid"
            }
            name => shared::name(n) == name,
        })
        .map(|n| shared::name(n).to_string())
        .collect()
}
