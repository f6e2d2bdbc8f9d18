//! Bursting to the cloud (seed 004): Karpenter on a cloud node with its CRDs, an EC2NodeClass
//! and the `cloud-burst-pool` NodePool, whose nodes carry the cloud location, a burst taint
//! that only burstable pods tolerate, and a CPU limit.

use serde_json::json;

use super::objects::{Workload, crd, put};
use crate::lab::hybrid::{BURST_NODEPOOL, KARPENTER_VERSION, LOCATION_LABEL};
use crate::lab::{self, CLUSTER_NAME};
use crate::sim::kube::storage::state::KubeState;

/// The taint of burst nodes: only pods that tolerate it may burst.
pub(crate) const BURST_TAINT: (&str, &str) = ("example.com/burst", "true");

pub(super) fn install(state: &mut KubeState) {
    crd(state, "karpenter.sh", "v1", "NodePool", "nodepools", false);
    crd(
        state,
        "karpenter.sh",
        "v1",
        "NodeClaim",
        "nodeclaims",
        false,
    );
    crd(
        state,
        "karpenter.k8s.aws",
        "v1",
        "EC2NodeClass",
        "ec2nodeclasses",
        false,
    );
    Workload {
        kind: "Deployment",
        namespace: "kube-system",
        name: "karpenter",
        image: &format!("public.ecr.aws/karpenter/controller:{KARPENTER_VERSION}"),
        cpu: "250m",
        pod_spec: json!({"nodeSelector": {LOCATION_LABEL: "cloud"}}),
        replicas: 1,
    }
    .put(state);
    put(
        state,
        json!({
            "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
            "metadata": {"name": "default"},
            "spec": {
                "role": format!("KarpenterNodeRole-{CLUSTER_NAME}"),
                "amiSelectorTerms": [{"alias": "al2023@latest"}],
                "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": CLUSTER_NAME}}],
                "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": CLUSTER_NAME}}],
            },
        }),
    );
    put(
        state,
        json!({
            "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {"name": BURST_NODEPOOL},
            "spec": {
                "template": {
                    "metadata": {"labels": {LOCATION_LABEL: "cloud"}},
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                        "requirements": [
                            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [lab::T3_MEDIUM.instance_type]},
                            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["ap-northeast-2a", "ap-northeast-2c"]},
                        ],
                        "taints": [{"key": BURST_TAINT.0, "value": BURST_TAINT.1, "effect": "NoSchedule"}],
                        "expireAfter": "720h",
                    },
                },
                "limits": {"cpu": "8"},
                "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s"},
            },
        }),
    );
}
