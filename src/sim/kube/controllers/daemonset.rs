//! DaemonSets: one pod on every node that its nodeSelector, affinity and tolerations allow.

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::{events, shared};
use crate::sim::kube::state::KubeState;

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    let nodes = state.objects("nodes", None);
    for ds in state.objects_where("daemonsets", None, |o| {
        dirty.nodes_changed || dirty.touches(o)
    }) {
        reconcile(state, ds, &nodes);
    }
}

/// The tolerations every DaemonSet pod gets, so that node conditions do not evict it.
fn with_daemon_tolerations(spec: &Value) -> Value {
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

fn reconcile(state: &mut KubeState, mut ds: Value, nodes: &[Value]) {
    let uid = shared::uid(&ds).to_string();
    let spec = ds["spec"]["template"]["spec"].clone();
    let tolerations = with_daemon_tolerations(&spec);
    let eligible: Vec<&Value> = nodes
        .iter()
        .filter(|n| {
            shared::node_matches(&spec, n) && shared::untolerated_taints(n, &tolerations).is_empty()
        })
        .collect();
    let pods: Vec<Value> = state.owned("pods", &uid);
    for node in &eligible {
        let node_name = shared::name(node);
        if pods.iter().any(|p| p["spec"]["nodeName"] == node_name) {
            continue;
        }
        let name = format!("{}-{}", shared::name(&ds), state.next_suffix(5));
        let mut pod = shared::pod_from_template(&ds, name.clone(), &[]);
        pod["spec"]["nodeName"] = json!(node_name);
        pod["spec"]["tolerations"] = tolerations.clone();
        if shared::create(state, "pods", pod).is_some() {
            events::record(
                state,
                &ds,
                false,
                "SuccessfulCreate",
                &format!("Created pod: {name}"),
                "daemonset-controller",
            );
        }
    }
    for pod in &pods {
        let on_eligible = eligible
            .iter()
            .any(|n| pod["spec"]["nodeName"] == shared::name(n));
        if !on_eligible {
            shared::remove(state, "pods", pod);
        }
    }
    let pods: Vec<Value> = state.owned("pods", &uid);
    let ready = pods.iter().filter(|p| shared::pod_ready(p)).count();
    ds["status"] = json!({
        "desiredNumberScheduled": eligible.len(),
        "currentNumberScheduled": pods.len(),
        "updatedNumberScheduled": pods.len(),
        "numberReady": ready,
        "numberAvailable": ready,
        "numberMisscheduled": 0,
        "observedGeneration": ds["metadata"]["generation"],
    });
    if pods.len() > ready {
        ds["status"]["numberUnavailable"] = json!(pods.len() - ready);
    }
    if ready == 0
        && let Some(status) = ds["status"].as_object_mut()
    {
        status.remove("numberAvailable");
    }
    shared::update(state, "daemonsets", ds);
}
