//! DaemonSets: one pod on every node that its nodeSelector, affinity and tolerations allow.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::{events, shared};
use crate::sim::kube::storage::state::{KubeState, built_in_key};

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    // A node that came or went concerns every DaemonSet.
    let daemon_sets = if dirty.nodes_changed {
        state.objects("daemonsets", None)
    } else {
        dirty.touched_objects(state, "daemonsets")
    };
    for ds in daemon_sets {
        reconcile(state, ds);
    }
}

/// The tolerations every DaemonSet pod gets, so that node conditions do not evict it.
pub(super) fn with_daemon_tolerations(spec: &Value) -> Value {
    let mut tolerations = spec["tolerations"].as_array().cloned().unwrap_or_default();
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/pid-pressure",
        "node.kubernetes.io/unschedulable",
    ] {
        let effect = if key.ends_with("not-ready") || key.ends_with("unreachable") {
            "NoExecute"
        } else {
            "NoSchedule"
        };
        tolerations.push(json!({"key": key, "operator": "Exists", "effect": effect}));
    }
    json!(tolerations)
}

fn reconcile(state: &mut KubeState, mut ds: Value) {
    let uid = shared::uid(&ds).to_string();
    let tolerations = with_daemon_tolerations(&ds["spec"]["template"]["spec"]);
    let (eligible, keep) = nodes_for(state, &ds["spec"]["template"]["spec"], &tolerations);
    let pods_key = built_in_key("pods");
    let placed: HashSet<String> = state
        .store
        .owned_by(&pods_key, &uid)
        .filter_map(|p| p["spec"]["nodeName"].as_str().map(str::to_string))
        .collect();
    let misplaced: Vec<Value> = state
        .store
        .owned_by(&pods_key, &uid)
        .filter(|p| {
            !p["spec"]["nodeName"]
                .as_str()
                .is_some_and(|n| keep.contains(n))
        })
        .cloned()
        .collect();
    for node_name in eligible.iter().filter(|n| !placed.contains(*n)) {
        create_pod(state, &ds, node_name, &tolerations);
    }
    for pod in &misplaced {
        shared::remove(state, "pods", pod);
    }
    ds["status"] = status(state, &ds, &eligible);
    shared::update(state, "daemonsets", ds);
}

/// The nodes a new pod may go to, and those where a running one may stay. Names only: this
/// runs for every change to one of its pods, so it must not copy nodes. A NoSchedule taint
/// keeps new pods off a node but lets running ones stay; NoExecute does not.
fn nodes_for(
    state: &KubeState,
    spec: &Value,
    tolerations: &Value,
) -> (Vec<String>, HashSet<String>) {
    let mut eligible: Vec<String> = Vec::new();
    let mut keep: HashSet<String> = HashSet::new();
    for node in state.store.list(&built_in_key("nodes"), None) {
        if !shared::node_matches(spec, node) {
            continue;
        }
        let untolerated = shared::untolerated_taints(node, tolerations);
        let name = shared::name(node).to_string();
        if untolerated.is_empty() {
            eligible.push(name.clone());
        }
        if untolerated.iter().all(|t| t["effect"] != "NoExecute") {
            keep.insert(name);
        }
    }
    (eligible, keep)
}

fn create_pod(state: &mut KubeState, ds: &Value, node_name: &str, tolerations: &Value) {
    let name = format!("{}-{}", shared::name(ds), state.next_suffix(5));
    let mut pod = shared::pod_from_template(ds, name.clone(), &[]);
    pod["spec"]["nodeName"] = json!(node_name);
    pod["spec"]["tolerations"] = tolerations.clone();
    if shared::create(state, "pods", pod).is_some() {
        events::record(
            state,
            ds,
            false,
            "SuccessfulCreate",
            &format!("Created pod: {name}"),
            "daemonset-controller",
        );
    }
}

/// Counted per node as the DaemonSet controller does: a pod kept on a node its taints now
/// refuse (NoSchedule, running already) is misscheduled, not one more of the desired.
fn status(state: &KubeState, ds: &Value, eligible: &[String]) -> Value {
    let eligible: HashSet<&str> = eligible.iter().map(String::as_str).collect();
    let (mut count, mut ready, mut misscheduled) = (0, 0, 0);
    for pod in state.store.owned_by(&built_in_key("pods"), shared::uid(ds)) {
        if pod["spec"]["nodeName"]
            .as_str()
            .is_some_and(|n| eligible.contains(n))
        {
            count += 1;
            ready += usize::from(shared::pod_ready(pod));
        } else {
            misscheduled += 1;
        }
    }
    let mut status = json!({
        "desiredNumberScheduled": eligible.len(),
        "currentNumberScheduled": count,
        "updatedNumberScheduled": count,
        "numberReady": ready,
        "numberAvailable": ready,
        "numberMisscheduled": misscheduled,
        "observedGeneration": ds["metadata"]["generation"],
    });
    if count > ready {
        status["numberUnavailable"] = json!(count - ready);
    }
    if ready == 0
        && let Some(status) = status.as_object_mut()
    {
        status.remove("numberAvailable");
    }
    status
}
