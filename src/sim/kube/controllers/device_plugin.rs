//! What a running NVIDIA device plugin does to its node: `nvidia.com/gpu` appears in capacity
//! and allocatable only while a device-plugin pod runs there (the GPU Operator's or a
//! standalone one); GPU feature discovery adds the product labels. A GPU the node's faults
//! take off the bus leaves both; one with a fatal Xid leaves allocatable, as the plugin's
//! health check does. The EFA device plugin does the same for `vpc.amazonaws.com/efa`: the
//! type's EFA interfaces, while its pod runs on the node.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::shared;
use crate::sim::gpu::efa::{self, EFA_RESOURCE};
use crate::sim::gpu::programs::{faults_of, node_gpus};
use crate::sim::kube::storage::state::{KubeState, built_in_key};

/// What runs on one GPU node, from its pods.
#[derive(Default, Clone, Copy)]
struct Running {
    plugin: bool,
    discovery: bool,
    efa: bool,
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
    if dirty.all {
        return state
            .store
            .list(&nodes_key, None)
            .filter(|n| node_gpus(n) > 0)
            .map(|n| shared::name(n).to_string())
            .collect();
    }
    let mut names = BTreeSet::new();
    for node in dirty
        .deleted_pods
        .iter()
        .filter_map(|(_, _, node)| node.as_deref())
    {
        if is_gpu(node) {
            names.insert(node.to_string());
        }
    }
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
    // Only the pods bound to the affected nodes, from the store's node index.
    let running: Vec<(String, Running)> = nodes
        .into_iter()
        .map(|node| {
            let mut found = Running::default();
            for (pod, _) in state.store.pods_on_node_with_json(&node, None) {
                if pod["status"]["phase"] != "Running" {
                    continue;
                }
                if runs_image(pod, efa::PLUGIN_IMAGE) {
                    found.efa = true;
                    continue;
                }
                if !runs_image(pod, "k8s-device-plugin") {
                    continue;
                }
                // GPU feature discovery runs the device plugin's image too; its app label tells
                // them apart.
                if pod["metadata"]["labels"]["app"] == "gpu-feature-discovery" {
                    found.discovery = true;
                } else {
                    found.plugin = true;
                }
            }
            (node, found)
        })
        .collect();
    for (name, running) in running {
        refresh(state, &name, running);
    }
}

fn refresh(state: &mut KubeState, name: &str, running: Running) {
    let Some(node) = state.object_ref("nodes", "", name) else {
        return;
    };
    let installed = node_gpus(node);
    let counts = faults_of(state, name).map_or((installed, installed), |f| {
        (f.visible_gpus(installed), f.healthy_gpus(installed))
    });
    let down = faults_of(state, name).and_then(|f| f.efa_down).unwrap_or(0);
    let efa_devices = efa::devices(&state.efa_devices, node).saturating_sub(down);
    if let Some(updated) = with_gpu_resources(node, running, counts, efa_devices) {
        shared::update(state, "nodes", updated);
    }
}

/// Brings a GPU node's resources in line with its hardware faults after they change.
pub(crate) fn hardware_changed(state: &mut KubeState, name: &str) {
    let mut running = Running::default();
    let Some(node) = state.object_ref("nodes", "", name) else {
        return;
    };
    let plugin_resources = !node["status"]["capacity"]["nvidia.com/gpu"].is_null();
    let discovery_labels = !node["metadata"]["labels"]["nvidia.com/gpu.count"].is_null();
    running.plugin = plugin_resources;
    running.discovery = discovery_labels;
    running.efa = !node["status"]["capacity"][EFA_RESOURCE].is_null();
    refresh(state, name, running);
}

/// The labels GPU feature discovery puts on a node with `gpus` GPUs of its type's model
/// (`NVIDIA-A10G`, 23028 MiB on a g5; the catalog's model on any other GPU type).
fn discovery_labels(node: &Value, gpus: &str) -> [(&'static str, String); 5] {
    let kind = node["metadata"]["labels"]["node.kubernetes.io/instance-type"]
        .as_str()
        .unwrap_or_default();
    let (product, memory) =
        crate::lab::gpu_catalog::find(kind).map_or(("NVIDIA-A10G".to_string(), 23028), |row| {
            (
                row.gpu.smi_name.replace(' ', "-"),
                row.gpu.smi_memory_mib.unwrap_or(row.gpu.memory_mib),
            )
        });
    [
        ("nvidia.com/gpu.product", product),
        ("nvidia.com/gpu.count", gpus.to_string()),
        ("nvidia.com/gpu.memory", memory.to_string()),
        (
            "nvidia.com/cuda.driver-version.full",
            "580.95.05".to_string(),
        ),
        ("nvidia.com/cuda.runtime-version.full", "13.0".to_string()),
    ]
}

/// The node as the device plugin and feature discovery leave it, or None when it already is:
/// this runs on every change to a GPU node's pods, so the node is copied only to change it.
/// `counts`: the GPUs the plugin sees and the healthy ones among them.
fn with_gpu_resources(
    node: &Value,
    running: Running,
    counts: (u32, u32),
    efa_count: u32,
) -> Option<Value> {
    let gpus = counts.0.to_string();
    let healthy = counts.1.to_string();
    let wanted = |field: &str| if field == "capacity" { &gpus } else { &healthy };
    // The plugin finds no device on a node without EFA interfaces and advertises none.
    let running = Running {
        efa: running.efa && efa_count > 0,
        ..running
    };
    let efa = efa_count.to_string();
    let resources_ok = ["capacity", "allocatable"].iter().all(|field| {
        let present = &node["status"][*field]["nvidia.com/gpu"];
        let gpus_ok = if running.plugin {
            present.as_str() == Some(wanted(field).as_str())
        } else {
            present.is_null()
        };
        let present = &node["status"][*field][EFA_RESOURCE];
        let efa_ok = if running.efa {
            present.as_str() == Some(efa.as_str())
        } else {
            present.is_null()
        };
        gpus_ok && efa_ok
    });
    let wanted_labels = discovery_labels(node, &gpus);
    let labels_ok = wanted_labels.iter().all(|(key, value)| {
        let present = &node["metadata"]["labels"][*key];
        if running.discovery {
            present.as_str() == Some(value.as_str())
        } else {
            present.is_null()
        }
    });
    if resources_ok && labels_ok {
        return None;
    }
    let mut updated = node.clone();
    for field in ["capacity", "allocatable"] {
        let resources = &mut updated["status"][field];
        if running.plugin {
            resources["nvidia.com/gpu"] = json!(wanted(field));
        } else if let Some(map) = resources.as_object_mut() {
            map.remove("nvidia.com/gpu");
        }
        if running.efa {
            resources[EFA_RESOURCE] = json!(efa);
        } else if let Some(map) = resources.as_object_mut() {
            map.remove(EFA_RESOURCE);
        }
    }
    let labels = &mut updated["metadata"]["labels"];
    for (key, value) in wanted_labels {
        if running.discovery {
            labels[key] = json!(value);
        } else if let Some(map) = labels.as_object_mut() {
            map.remove(key);
        }
    }
    Some(updated)
}
