//! The GPUs' allocation managers, one per GPU (seed 004): the GPU Operator's ClusterPolicy on
//! the A100 host (MIG, mixed strategy) and the L4 host (time-slicing with `renameByDefault`),
//! and the standalone NVIDIA DRA driver on the L40S host, publishing ResourceSlices for the
//! `gpu.nvidia.com` DeviceClass.

use serde_json::{Value, json};

use super::objects::{Workload, crd, hybrid_toleration, namespace, put};
use crate::lab::hybrid::{
    DEVICE_PLUGIN_VERSION, DRA_DRIVER_VERSION, GPU_OPERATOR_VERSION, GpuManager,
    HOST_DRIVER_VERSION, HYBRID_NODES, HybridGpu, HybridNode, LOCATION_LABEL,
};
use crate::sim::kube::storage::state::KubeState;

pub(super) const DRA_DRIVER: &str = "gpu.nvidia.com";
const DCGM_EXPORTER_IMAGE: &str = "nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-ubuntu22.04";

fn gpu_tolerations() -> Value {
    json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}, hybrid_toleration()])
}

pub(super) fn gpu_operator(state: &mut KubeState) {
    namespace(state, "gpu-operator");
    crd(
        state,
        "nvidia.com",
        "v1",
        "ClusterPolicy",
        "clusterpolicies",
        false,
    );
    put(
        state,
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "time-slicing-config", "namespace": "gpu-operator"},
            "data": {"l4-shared": "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    failRequestsGreaterThanOne: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"},
        }),
    );
    put(state, cluster_policy());
    Workload {
        kind: "Deployment",
        namespace: "gpu-operator",
        name: "gpu-operator",
        image: &format!("nvcr.io/nvidia/gpu-operator:{GPU_OPERATOR_VERSION}"),
        cpu: "200m",
        pod_spec: json!({"nodeSelector": {LOCATION_LABEL: "cloud"}}),
        replicas: 1,
    }
    .put_amended(state, |operator| {
        // The twin's operator controller knows the operator by this label.
        operator["spec"]["template"]["metadata"]["labels"]["app"] = json!("gpu-operator");
    });
    operands(state);
}

/// MIG with the mixed strategy, time-slicing from its ConfigMap, the host's own driver.
fn cluster_policy() -> Value {
    json!({
        "apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": {
            "operator": {"defaultRuntime": "containerd"},
            "driver": {"enabled": false},
            "toolkit": {"enabled": true},
            "devicePlugin": {"enabled": true, "version": DEVICE_PLUGIN_VERSION, "config": {"name": "time-slicing-config", "default": ""}},
            "mig": {"strategy": "mixed"},
            "migManager": {"enabled": true},
            "dcgmExporter": {"enabled": true},
            "gfd": {"enabled": true},
            "daemonsets": {"tolerations": gpu_tolerations()},
        },
        "status": {"state": "ready", "namespace": "gpu-operator"},
    })
}

/// The operands the ClusterPolicy runs, on the nodes the operator marked for each.
fn operands(state: &mut KubeState) {
    let plugin_image = format!("nvcr.io/nvidia/k8s-device-plugin:{DEVICE_PLUGIN_VERSION}");
    let validator_image =
        format!("nvcr.io/nvidia/cloud-native/gpu-operator-validator:{GPU_OPERATOR_VERSION}");
    for (name, image, deploy) in [
        (
            "nvidia-device-plugin-daemonset",
            plugin_image.as_str(),
            "device-plugin",
        ),
        (
            "gpu-feature-discovery",
            plugin_image.as_str(),
            "gpu-feature-discovery",
        ),
        ("nvidia-dcgm-exporter", DCGM_EXPORTER_IMAGE, "dcgm-exporter"),
        (
            "nvidia-operator-validator",
            validator_image.as_str(),
            "operator-validator",
        ),
    ] {
        Workload {
            kind: "DaemonSet",
            namespace: "gpu-operator",
            name,
            image,
            cpu: "10m",
            pod_spec: json!({
                "nodeSelector": {format!("nvidia.com/gpu.deploy.{deploy}"): "true"},
                "tolerations": gpu_tolerations(),
                "priorityClassName": "system-node-critical",
            }),
            replicas: 0,
        }
        .put_amended(state, |daemonset| {
            daemonset["metadata"]["labels"]["app"] = json!(name);
            daemonset["metadata"]["labels"]["app.kubernetes.io/managed-by"] = json!("gpu-operator");
            daemonset["spec"]["template"]["metadata"]["labels"]["app"] = json!(name);
        });
    }
}

/// The standalone DRA driver: its kubelet plugin only on hosts kept from the operator, its
/// controller on a cloud node, the DeviceClass and one ResourceSlice per host.
pub(super) fn dra_driver(state: &mut KubeState) {
    namespace(state, "nvidia-dra-driver-gpu");
    let image = format!("nvcr.io/nvidia/k8s-dra-driver-gpu:v{DRA_DRIVER_VERSION}");
    Workload {
        kind: "DaemonSet",
        namespace: "nvidia-dra-driver-gpu",
        name: "nvidia-dra-driver-gpu-kubelet-plugin",
        image: &image,
        cpu: "10m",
        pod_spec: json!({
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [
                    {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]},
                    {"key": "nvidia.com/gpu.deploy.operands", "operator": "In", "values": ["false"]},
                ]}
            ]}}},
            "tolerations": gpu_tolerations(),
            "priorityClassName": "system-node-critical",
        }),
        replicas: 0,
    }
    .put(state);
    Workload {
        kind: "Deployment",
        namespace: "nvidia-dra-driver-gpu",
        name: "nvidia-dra-driver-gpu-controller",
        image: &image,
        cpu: "10m",
        pod_spec: json!({"nodeSelector": {LOCATION_LABEL: "cloud"}}),
        replicas: 1,
    }
    .put(state);
    put(
        state,
        json!({
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": DRA_DRIVER},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]},
        }),
    );
    for node in HYBRID_NODES.iter() {
        if let Some(gpu) = node
            .gpu
            .as_ref()
            .filter(|g| g.manager == GpuManager::DraDriver)
        {
            put(state, resource_slice(node, gpu));
        }
    }
}

/// The ResourceSlice the DRA driver publishes for `node`'s GPUs.
fn resource_slice(node: &HybridNode, gpu: &HybridGpu) -> Value {
    json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": format!("{}-{DRA_DRIVER}-x7k2p", node.name)},
        "spec": {
            "driver": DRA_DRIVER,
            "nodeName": node.name,
            "pool": {"name": node.name, "generation": 1, "resourceSliceCount": 1},
            "devices": dra_devices(node, gpu),
        },
    })
}

fn dra_devices(node: &HybridNode, gpu: &HybridGpu) -> Vec<Value> {
    let product = gpu.product.replace('-', " ");
    (0..gpu.count)
        .map(|index| {
            json!({
                "name": format!("gpu-{index}"),
                "attributes": {
                    "type": {"string": "gpu"},
                    "index": {"int": index},
                    "productName": {"string": product},
                    "uuid": {"string": format!("GPU-{}-{index:04}", node.name.trim_start_matches("mi-"))},
                    "architecture": {"string": "Ada Lovelace"},
                    "driverVersion": {"version": HOST_DRIVER_VERSION},
                    "cudaComputeCapability": {"version": "8.9.0"},
                },
                "capacity": {"memory": {"value": format!("{}Mi", gpu.memory_mib)}},
            })
        })
        .collect()
}
