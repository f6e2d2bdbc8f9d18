//! What a running NVIDIA device plugin does to its node: `nvidia.com/gpu` appears in capacity
//! and allocatable only while a device-plugin pod runs there (the GPU Operator's or a
//! standalone one); GPU feature discovery adds the product labels.

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::shared;
use crate::sim::gpu::programs::node_gpus;
use crate::sim::kube::state::KubeState;

fn runs_image(pods: &[Value], node: &str, image_part: &str, app: Option<&str>) -> bool {
    pods.iter().any(|pod| {
        pod["spec"]["nodeName"] == node
            && pod["status"]["phase"] == "Running"
            && app.is_none_or(|a| pod["metadata"]["labels"]["app"] == a)
            && pod["spec"]["containers"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["image"].as_str().is_some_and(|i| i.contains(image_part)))
    })
}

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    if !(dirty.nodes_changed || dirty.touched("/pods")) {
        return;
    }
    let gpu_nodes: Vec<Value> = state
        .objects("nodes", None)
        .into_iter()
        .filter(|n| node_gpus(n) > 0)
        .collect();
    if gpu_nodes.is_empty() {
        return;
    }
    let pods = state.objects_where("pods", None, |p| {
        p["spec"]["nodeName"]
            .as_str()
            .is_some_and(|n| gpu_nodes.iter().any(|g| shared::name(g) == n))
    });
    for node in gpu_nodes {
        let name = shared::name(&node).to_string();
        // The GFD DaemonSet runs the device plugin's image too; the app label tells them apart.
        let plugin = runs_image(&pods, &name, "k8s-device-plugin", None)
            && (runs_image(
                &pods,
                &name,
                "k8s-device-plugin",
                Some("nvidia-device-plugin-daemonset"),
            ) || !runs_image(
                &pods,
                &name,
                "k8s-device-plugin",
                Some("gpu-feature-discovery"),
            ));
        let discovery = runs_image(
            &pods,
            &name,
            "k8s-device-plugin",
            Some("gpu-feature-discovery"),
        );
        let mut updated = node.clone();
        let gpus = node_gpus(&node).to_string();
        for field in ["capacity", "allocatable"] {
            let resources = &mut updated["status"][field];
            if plugin {
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
            if discovery {
                labels[key] = json!(value);
            } else if let Some(map) = labels.as_object_mut() {
                map.remove(key);
            }
        }
        if updated != node {
            shared::update(state, "nodes", updated);
        }
    }
}
