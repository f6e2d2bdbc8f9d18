//! The on-premises nodes as nodeadm joins them (SSM hybrid activations: named by their
//! managed-instance id), with the labels their owners add, and the cloud nodes' location.

use serde_json::{Value, json};

use super::objects::{amend, put};
use crate::lab;
use crate::lab::hybrid::{
    COMPUTE_TYPE_LABEL, DNS_ELIGIBLE_LABEL, GpuManager, HYBRID_NODES, HybridGpu, HybridNode,
    LOCATION_LABEL,
};
use crate::sim::kube::controllers::node_lifecycle::posted_conditions;
use crate::sim::kube::storage::state::KubeState;

/// The lab's two system nodes are the cloud side: location `cloud`, eligible for CoreDNS.
pub(super) fn label_cloud_nodes(state: &mut KubeState) {
    let names: Vec<String> = state
        .objects("nodes", None)
        .iter()
        .filter_map(|n| n["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    for name in names {
        amend(state, "nodes", "", &name, |node| {
            node["metadata"]["labels"][LOCATION_LABEL] = json!("cloud");
            node["metadata"]["labels"][DNS_ELIGIBLE_LABEL] = json!("true");
        });
    }
}

pub(super) fn join_hybrid_nodes(state: &mut KubeState) {
    for node in &HYBRID_NODES {
        put(state, node_object(node, state.git_version));
    }
}

/// The labels GPU feature discovery and the owner put on a GPU host, by its manager.
fn gpu_labels(gpu: &HybridGpu) -> Vec<(&'static str, String)> {
    let mut labels = vec![
        ("nvidia.com/gpu.present", "true".to_string()),
        ("nvidia.com/gpu.count", gpu.count.to_string()),
        ("nvidia.com/gpu.memory", gpu.memory_mib.to_string()),
    ];
    let operands = |labels: &mut Vec<(&'static str, String)>| {
        for key in [
            "nvidia.com/gpu.deploy.device-plugin",
            "nvidia.com/gpu.deploy.dcgm-exporter",
            "nvidia.com/gpu.deploy.gpu-feature-discovery",
        ] {
            labels.push((key, "true".into()));
        }
    };
    match gpu.manager {
        GpuManager::ClusterPolicyMig => {
            operands(&mut labels);
            labels.extend([
                ("nvidia.com/gpu.product", gpu.product.to_string()),
                ("nvidia.com/gpu.deploy.mig-manager", "true".into()),
                ("nvidia.com/mig.capable", "true".into()),
                ("nvidia.com/mig.strategy", "mixed".into()),
                ("nvidia.com/mig.config", "all-1g.5gb".into()),
                ("nvidia.com/mig.config.state", "success".into()),
                ("nvidia.com/mig-1g.5gb.count", "7".into()),
            ]);
        }
        GpuManager::ClusterPolicyTimeSliced => {
            operands(&mut labels);
            labels.extend([
                // GPU feature discovery marks a renamed, shared GPU's product.
                ("nvidia.com/gpu.product", format!("{}-SHARED", gpu.product)),
                ("nvidia.com/gpu.replicas", "4".into()),
                ("nvidia.com/gpu.sharing-strategy", "time-slicing".into()),
                ("nvidia.com/device-plugin.config", "l4-shared".into()),
            ]);
        }
        GpuManager::DraDriver => labels.extend([
            ("nvidia.com/gpu.product", gpu.product.to_string()),
            // Keeps the GPU Operator's operands off: the DRA driver owns these GPUs.
            ("nvidia.com/gpu.deploy.operands", "false".into()),
        ]),
    }
    labels
}

/// What the device plugin advertises for the host's GPUs (the DRA driver advertises none:
/// it publishes ResourceSlices).
fn gpu_resources(gpu: &HybridGpu) -> Vec<(&'static str, String)> {
    match gpu.manager {
        GpuManager::ClusterPolicyMig => {
            vec![("nvidia.com/mig-1g.5gb", (7 * gpu.count).to_string())]
        }
        GpuManager::ClusterPolicyTimeSliced => {
            vec![("nvidia.com/gpu.shared", (4 * gpu.count).to_string())]
        }
        GpuManager::DraDriver => Vec::new(),
    }
}

fn node_object(node: &HybridNode, git_version: &str) -> Value {
    let mut labels = json!({
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        COMPUTE_TYPE_LABEL: "hybrid",
        "eks.amazonaws.com/hybrid-credential-provider": "ssm",
        LOCATION_LABEL: "onprem",
    });
    if node.dns_eligible {
        labels[DNS_ELIGIBLE_LABEL] = json!("true");
    }
    let mut capacity = json!({"cpu": node.vcpus.to_string(), "memory": node.memory, "pods": "110", "ephemeral-storage": "959786032Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0"});
    let mut allocatable = json!({"cpu": format!("{}m", node.vcpus * 1000 - 190), "memory": node.memory, "pods": "110", "ephemeral-storage": "884538243317", "hugepages-1Gi": "0", "hugepages-2Mi": "0"});
    if let Some(gpu) = &node.gpu {
        for (key, value) in gpu_labels(gpu) {
            labels[key] = json!(value);
        }
        for (resource, count) in gpu_resources(gpu) {
            capacity[resource] = json!(count);
            allocatable[resource] = json!(count);
        }
    }
    let taints: Vec<Value> = if node.hybrid_taint {
        vec![json!({"key": COMPUTE_TYPE_LABEL, "value": "hybrid", "effect": "NoSchedule"})]
    } else {
        Vec::new()
    };
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": node.name,
            "labels": labels,
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": node.ip,
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "providerID": format!("eks-hybrid:///{}/{}/{}", lab::REGION, lab::CLUSTER_NAME, node.name),
            // The node's share of the remote pod network (the CNI's IPAM hands out these).
            "podCIDR": node.pod_cidr,
            "podCIDRs": [node.pod_cidr],
            "taints": taints,
        },
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": posted_conditions(true),
            "addresses": [
                {"type": "InternalIP", "address": node.ip},
                {"type": "Hostname", "address": node.name},
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": format!("{}-boot", node.name),
                "containerRuntimeVersion": "containerd://1.7.28",
                "kernelVersion": "6.8.0-85-generic",
                "kubeProxyVersion": "",
                "kubeletVersion": git_version,
                "machineID": node.name.replace("mi-", "host"),
                "operatingSystem": "linux",
                "osImage": "Ubuntu 24.04.3 LTS",
                "systemUUID": node.name.replace("mi-", "host"),
            },
        },
    })
}
