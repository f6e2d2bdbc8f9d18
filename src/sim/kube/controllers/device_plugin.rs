//! What a running NVIDIA device plugin does to its node: `nvidia.com/gpu` appears in capacity
//! and allocatable only while a device-plugin pod runs there (the GPU Operator's or a
//! standalone one); GPU feature discovery adds the product labels.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::shared;
use crate::sim::gpu::programs::node_gpus;
use crate::sim::kube::state::{KubeState, built_in_key};

/// What runs on one GPU node, from its pods.
#[derive(Default, Clone, Copy)]
struct Running {
    plugin: bool,
    discovery: bool,
}

fn runs_image(pod: &Value, image_part: &str) -> bool {
    pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["image"].as_str().is_some_and(|i| i.contains(image_part)))
}

/// The GPU nodes whose device plugin may have come or gone since the last rest.
fn affected(state: &KubeState, dirty: &Dirty) -> BTreeSet<String> {
    let nodes_key = built_in_key("nodes");
    let pods_key = built_in_key("pods");
    let is_gpu = |name: &str| {
        state
            .store
            .get(&nodes_key, "", name)
            .is_some_and(|n| node_gpus(n) > 0)
    };
    if dirty.all || dirty.deleted {
        return state
            .store
            .list(&nodes_key, None)
            .filter(|n| node_gpus(n) > 0)
            .map(|n| shared::name(n).to_string())
            .collect();
    }
    let mut names = BTreeSet::new();
    for (resource, namespace, name) in &dirty.changed {
        let node = if *resource == nodes_key {
            Some(name.as_str())
        } else if *resource == pods_key {
            state
                .store
                .get(resource, namespace, name)
                .and_then(|p| p["spec"]["nodeName"].as_str())
        } else {
            None
        };
        if let Some(node) = node.filter(|n| is_gpu(n)) {
            names.insert(node.to_string());
        }
    }
    names
}

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    let nodes = affected(state, dirty);
    if nodes.is_empty() {
        return;
    }
    let mut running: BTreeMap<&str, Running> = nodes
        .iter()
        .map(|n| (n.as_str(), Running::default()))
        .collect();
    for pod in state.store.list(&built_in_key("pods"), None) {
        let Some(entry) = pod["spec"]["nodeName"]
            .as_str()
            .and_then(|n| running.get_mut(n))
        else {
            continue;
        };
        if pod["status"]["phase"] != "Running" || !runs_image(pod, "k8s-device-plugin") {
            continue;
        }
        // GPU feature discovery runs the device plugin's image too; its app label tells them apart.
        if pod["metadata"]["labels"]["app"] == "gpu-feature-discovery" {
            entry.discovery = true;
        } else {
            entry.plugin = true;
        }
    }
    let running: Vec<(String, Running)> = running
        .into_iter()
        .map(|(n, r)| (n.to_string(), r))
        .collect();
    for (name, running) in running {
        let Some(node) = state.object("nodes", "", &name) else {
            continue;
        };
        let updated = with_gpu_resources(&node, running);
        if updated != node {
            shared::update(state, "nodes", updated);
        }
    }
}

fn with_gpu_resources(node: &Value, running: Running) -> Value {
    let mut updated = node.clone();
    let gpus = node_gpus(node).to_string();
    for field in ["capacity", "allocatable"] {
        let resources = &mut updated["status"][field];
        if running.plugin {
            resources["nvidia.com/gpu"] = json!(gpus);
        } else if let Some(map) = resources.as_object_mut() {
            map.remove("nvidia.com/gpu");
        }
    }
    let labels = &mut updated["metadata"]["labels"];
    for (key, value) in [
        ("nvidia.com/gpu.product", "NVIDIA-A10G"),
        ("nvidia.com/gpu.count", gpus.as_str()),
        ("nvidia.com/gpu.memory", "23028"),
        ("nvidia.com/cuda.driver-version.full", "580.95.05"),
        ("nvidia.com/cuda.runtime-version.full", "13.0"),
    ] {
        if running.discovery {
            labels[key] = json!(value);
        } else if let Some(map) = labels.as_object_mut() {
            map.remove(key);
        }
    }
    updated
}
