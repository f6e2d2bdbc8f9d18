//! The twin's NVIDIA GPU Operator: while its operator pod runs and a ClusterPolicy exists, it
//! marks GPU nodes (`nvidia.com/gpu.present=true`, as NFD and the operator do) and runs the
//! device plugin, GPU feature discovery, DCGM exporter and validator DaemonSets on them, owned
//! by the policy. The driver and toolkit are the AMI's (the lab sets `driver.enabled=false`,
//! `toolkit.enabled=false`), so no driver DaemonSet is made.

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::shared;
use crate::sim::gpu::programs::node_gpus;
use crate::sim::kube::storage::state::{KubeState, built_in_key};

const POLICIES: &str = "nvidia.com/clusterpolicies";
const PRESENT: &str = "nvidia.com/gpu.present";

/// `(spec key, DaemonSet name, app label, image)`.
const COMPONENTS: [(&str, &str, &str, &str); 4] = [
    (
        "devicePlugin",
        "nvidia-device-plugin-daemonset",
        "nvidia-device-plugin-daemonset",
        "nvcr.io/nvidia/k8s-device-plugin:v0.18.1",
    ),
    (
        "gfd",
        "gpu-feature-discovery",
        "gpu-feature-discovery",
        "nvcr.io/nvidia/k8s-device-plugin:v0.18.1",
    ),
    (
        "dcgmExporter",
        "nvidia-dcgm-exporter",
        "nvidia-dcgm-exporter",
        "nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-ubuntu22.04",
    ),
    (
        "validator",
        "nvidia-operator-validator",
        "nvidia-operator-validator",
        "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v26.3.1",
    ),
];

/// The running operator pod's namespace, if the operator runs. The pod found last time is
/// looked at first, so that a steady cluster (a thousand device-plugin pods in the same
/// namespace) is not scanned on every change.
fn operator_namespace(state: &mut KubeState) -> Option<String> {
    let is_operator = |pod: &Value| {
        let labels = &pod["metadata"]["labels"];
        (labels["app"] == "gpu-operator" || labels["app.kubernetes.io/component"] == "gpu-operator")
            && pod["status"]["phase"] == "Running"
    };
    let pods = built_in_key("pods");
    if let Some((namespace, name)) = &state.gpu_operator_pod
        && state
            .store
            .get(&pods, namespace, name)
            .is_some_and(is_operator)
    {
        return Some(namespace.clone());
    }
    let found = state
        .store
        .list(&pods, None)
        .find(|p| is_operator(p))
        .map(|pod| {
            (
                shared::namespace(pod).to_string(),
                shared::name(pod).to_string(),
            )
        });
    state.gpu_operator_pod = found.clone();
    found.map(|(namespace, _)| namespace)
}

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    if state.store.list(POLICIES, None).next().is_none()
        || !(dirty.touched(POLICIES) || dirty.nodes_changed || dirty.touched("/pods"))
    {
        return;
    }
    let Some(policy) = state.store.list(POLICIES, None).next().cloned() else {
        return;
    };
    let Some(namespace) = operator_namespace(state) else {
        return;
    };
    // Nodes need marking only when nodes changed or the operator (or its policy) just came.
    let operator_new = policy["status"]["namespace"].as_str() != Some(namespace.as_str());
    if dirty.all || dirty.nodes_changed || dirty.touched(POLICIES) || operator_new {
        mark_gpu_nodes(state);
    }
    run_components(state, &policy, &namespace);
    report_state(state, &policy, &namespace);
}

/// Labels every node with GPUs `nvidia.com/gpu.present=true`.
fn mark_gpu_nodes(state: &mut KubeState) {
    let unmarked: Vec<Value> = state
        .store
        .list(&built_in_key("nodes"), None)
        .filter(|n| n["metadata"]["labels"][PRESENT] != "true" && node_gpus(n) > 0)
        .cloned()
        .collect();
    for mut node in unmarked {
        node["metadata"]["labels"][PRESENT] = json!("true");
        shared::update(state, "nodes", node);
    }
}

fn enabled(policy: &Value, key: &str) -> bool {
    policy["spec"][key]["enabled"].as_bool().unwrap_or(true)
}

/// Creates the DaemonSet of each component the policy enables, removes those it disables.
fn run_components(state: &mut KubeState, policy: &Value, namespace: &str) {
    let tolerations = match policy["spec"]["daemonsets"]["tolerations"].as_array() {
        Some(list) => json!(list),
        None => json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]),
    };
    for component in COMPONENTS {
        let (key, name, ..) = component;
        let existing = state.object_ref("daemonsets", namespace, name).cloned();
        match (enabled(policy, key), existing) {
            (true, None) => {
                let daemonset = component_daemonset(policy, namespace, component, &tolerations);
                shared::create(state, "daemonsets", daemonset);
            }
            (false, Some(daemonset)) => shared::remove(state, "daemonsets", &daemonset),
            _ => {}
        }
    }
}

fn component_daemonset(
    policy: &Value,
    namespace: &str,
    (_, name, app, image): (&str, &str, &str, &str),
    tolerations: &Value,
) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": app, "app.kubernetes.io/managed-by": "gpu-operator"},
            "ownerReferences": [shared::owner_reference(policy)],
        },
        "spec": {
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": {"app": app, "app.kubernetes.io/managed-by": "gpu-operator"}},
                "spec": {
                    "nodeSelector": {PRESENT: "true"},
                    "tolerations": tolerations,
                    "priorityClassName": "system-node-critical",
                    "serviceAccountName": name,
                    "containers": [{"name": app, "image": image, "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}],
                },
            },
        },
    })
}

/// The policy's `status.state`: `ready` once every enabled component runs on all its nodes.
fn report_state(state: &mut KubeState, policy: &Value, namespace: &str) {
    let ready = COMPONENTS.iter().all(|(key, name, ..)| {
        !enabled(policy, key)
            || state
                .object_ref("daemonsets", namespace, name)
                .is_some_and(|ds| {
                    let status = &ds["status"];
                    status["desiredNumberScheduled"].as_i64().unwrap_or(0) > 0
                        && status["numberReady"] == status["desiredNumberScheduled"]
                })
    });
    let wanted = if ready { "ready" } else { "notReady" };
    if policy["status"]["state"] != wanted {
        let mut policy = policy.clone();
        policy["status"]["state"] = json!(wanted);
        policy["status"]["namespace"] = json!(namespace);
        state.store.update(POLICIES, policy);
    }
}
