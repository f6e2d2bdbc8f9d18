//! Node objects as EKS managed node groups register them: the seed's labels, capacity,
//! allocatable, addresses and node info.

use serde_json::{Value, json};

use crate::lab::{self, NodeShape};
use crate::sim::kube::controllers::node_lifecycle::posted_conditions;

pub(crate) struct NodeSpec<'a> {
    pub(crate) nodegroup: &'a str,
    pub(crate) instance_id: &'a str,
    pub(crate) zone: &'a str,
    pub(crate) private_ip: &'a str,
    pub(crate) shape: &'a NodeShape,
    pub(crate) ami: &'a str,
    /// Labels set by the node group (`tier=primary`).
    pub(crate) labels: &'a [(&'a str, &'a str)],
    /// `(key, value, effect)`.
    pub(crate) taints: &'a [(&'a str, &'a str, &'a str)],
    pub(crate) ready: bool,
}

/// `ip-192-168-13-45.ap-northeast-2.compute.internal`.
pub(super) fn node_name(private_ip: &str) -> String {
    format!(
        "ip-{}.{}.compute.internal",
        private_ip.replace('.', "-"),
        lab::REGION
    )
}

pub(crate) fn node_object(spec: &NodeSpec<'_>) -> Value {
    let name = node_name(spec.private_ip);
    let shape = spec.shape;
    let mut labels = json!({
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": shape.instance_type,
        "beta.kubernetes.io/os": "linux",
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
        "eks.amazonaws.com/nodegroup": spec.nodegroup,
        "eks.amazonaws.com/nodegroup-image": spec.ami,
        "failure-domain.beta.kubernetes.io/region": lab::REGION,
        "failure-domain.beta.kubernetes.io/zone": spec.zone,
        "k8s.io/cloud-provider-aws": "a1b2c3d4e5f60718293a4b5c6d7e8f90",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": shape.instance_type,
        "topology.k8s.aws/zone-id": lab::zone_id(spec.zone),
        "topology.kubernetes.io/region": lab::REGION,
        "topology.kubernetes.io/zone": spec.zone,
    });
    for (key, value) in spec.labels {
        labels[*key] = json!(value);
    }
    let taints: Vec<Value> = spec
        .taints
        .iter()
        .map(|(k, v, e)| json!({"key": k, "value": v, "effect": e}))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": spec.private_ip,
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "providerID": format!("aws:///{}/{}", spec.zone, spec.instance_id),
            "taints": taints,
        },
        "status": {
            "capacity": {"cpu": shape.cpu, "memory": shape.memory, "pods": shape.pods, "ephemeral-storage": "20959212Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0"},
            "allocatable": {"cpu": shape.allocatable_cpu, "memory": shape.allocatable_memory, "pods": shape.pods, "ephemeral-storage": "18242267924", "hugepages-1Gi": "0", "hugepages-2Mi": "0"},
            "conditions": posted_conditions(spec.ready),
            "addresses": [
                {"type": "InternalIP", "address": spec.private_ip},
                {"type": "InternalDNS", "address": name},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": format!("{}-boot", spec.instance_id),
                "containerRuntimeVersion": "containerd://2.1.5",
                "kernelVersion": "6.12.46-66.121.amzn2023.x86_64",
                "kubeProxyVersion": "",
                "kubeletVersion": lab::SERVER_GIT_VERSION,
                "machineID": spec.instance_id.replace("i-", "ec2"),
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023.9.20251208",
                "systemUUID": spec.instance_id.replace("i-", "ec2"),
            },
        },
    })
}
