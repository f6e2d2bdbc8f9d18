//! Where the cluster's networking and its add-ons run in the hybrid lab (seed 004's placement
//! table): Cilium on hybrid nodes with the VPC CNI kept on cloud nodes, CoreDNS with one replica
//! per location, the Pod Identity Agent's hybrid DaemonSet, and the webhooks and the load
//! balancer controller on cloud nodes.

use serde_json::json;

use super::objects::{Workload, affinity_in, affinity_not_in, amend, hybrid_toleration, put};
use crate::lab::ECR;
use crate::lab::hybrid::{
    self as hybrid, COMPUTE_TYPE_LABEL, DNS_ELIGIBLE_LABEL, LOCATION_LABEL,
    POD_IDENTITY_HYBRID_CONFIG,
};
use crate::sim::kube::storage::state::KubeState;
use crate::sim::scenario::configure_addon;

const CILIUM_IMAGE: &str = "quay.io/cilium/cilium:v1.18.2";

pub(super) fn cni(state: &mut KubeState) {
    // The VPC CNI stays on cloud nodes: its add-on excludes hybrid (and Fargate, Auto Mode).
    amend(state, "daemonsets", "kube-system", "aws-node", |ds| {
        ds["spec"]["template"]["spec"]["affinity"] =
            affinity_not_in(COMPUTE_TYPE_LABEL, &["fargate", "hybrid", "auto"]);
    });
    Workload {
        kind: "DaemonSet",
        namespace: "kube-system",
        name: "cilium",
        image: CILIUM_IMAGE,
        cpu: "100m",
        pod_spec: json!({
            "hostNetwork": true,
            "affinity": affinity_in(COMPUTE_TYPE_LABEL, &["hybrid"]),
            "tolerations": [{"operator": "Exists"}],
            "priorityClassName": "system-node-critical",
        }),
        replicas: 0,
    }
    .put(state);
    Workload {
        kind: "Deployment",
        namespace: "kube-system",
        name: "cilium-operator",
        image: "quay.io/cilium/operator-generic:v1.18.2",
        cpu: "50m",
        pod_spec: json!({
            "affinity": affinity_in(COMPUTE_TYPE_LABEL, &["hybrid"]),
            "tolerations": [{"operator": "Exists"}],
        }),
        replicas: 1,
    }
    .put(state);
}

/// CoreDNS on nodes eligible for it, at least one replica per location (seed 004's fragment),
/// tolerating the hybrid taint so that a tainted host does not keep it out.
pub(super) fn coredns(state: &mut KubeState) {
    amend(
        state,
        "deployments",
        "kube-system",
        "coredns",
        |deployment| {
            let spec = &mut deployment["spec"]["template"]["spec"];
            spec["nodeSelector"] = json!({DNS_ELIGIBLE_LABEL: "true"});
            spec["topologySpreadConstraints"] = json!([{
                "maxSkew": 1, "minDomains": 2, "topologyKey": LOCATION_LABEL,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
            }]);
            let mut tolerations = spec["tolerations"].as_array().cloned().unwrap_or_default();
            tolerations.push(hybrid_toleration());
            spec["tolerations"] = json!(tolerations);
        },
    );
}

/// The Pod Identity Agent at a hybrid-capable version with the add-on's hybrid setting, which
/// keeps its cloud DaemonSet off hybrid nodes and adds the hybrid one; and the node monitoring
/// agent.
pub(super) fn pod_identity_agent(state: &mut KubeState) {
    let image = format!(
        "{ECR}/eks/eks-pod-identity-agent:{}",
        hybrid::addon_version("eks-pod-identity-agent")
    );
    amend(
        state,
        "daemonsets",
        "kube-system",
        "eks-pod-identity-agent",
        |ds| ds["spec"]["template"]["spec"]["containers"][0]["image"] = json!(image),
    );
    configure_addon(
        state,
        "eks-pod-identity-agent",
        Some(POD_IDENTITY_HYBRID_CONFIG),
    );
    Workload {
        kind: "DaemonSet",
        namespace: "kube-system",
        name: "eks-node-monitoring-agent",
        image: &format!(
            "{ECR}/eks/eks-node-monitoring-agent:{}",
            hybrid::addon_version("eks-node-monitoring-agent")
        ),
        cpu: "10m",
        pod_spec: json!({"tolerations": [{"operator": "Exists"}]}),
        replicas: 0,
    }
    .put(state);
}

/// The add-ons seed 004 places on cloud nodes: the load balancer controller (its webhook and
/// IP targets), cert-manager's webhook and the metrics server.
pub(super) fn cloud_side_addons(state: &mut KubeState) {
    let cloud = json!({LOCATION_LABEL: "cloud"});
    for (namespace, name) in [
        ("kube-system", "metrics-server"),
        ("cert-manager", "cert-manager-webhook"),
        ("cert-manager", "cert-manager"),
        ("cert-manager", "cert-manager-cainjector"),
    ] {
        let selector = cloud.clone();
        amend(state, "deployments", namespace, name, |deployment| {
            deployment["spec"]["template"]["spec"]["nodeSelector"] = selector;
        });
    }
    Workload {
        kind: "Deployment",
        namespace: "kube-system",
        name: "aws-load-balancer-controller",
        image: "public.ecr.aws/eks/aws-load-balancer-controller:v2.14.1",
        cpu: "100m",
        pod_spec: json!({"nodeSelector": cloud}),
        replicas: 2,
    }
    .put(state);
    put(
        state,
        json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "aws-load-balancer-webhook-service", "namespace": "kube-system"},
            "spec": {"selector": {"app.kubernetes.io/name": "aws-load-balancer-controller"}, "ports": [{"port": 443, "targetPort": 9443, "protocol": "TCP"}]},
        }),
    );
    put(
        state,
        json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "cert-manager-webhook", "namespace": "cert-manager"},
            "spec": {"selector": {"app.kubernetes.io/name": "cert-manager-webhook"}, "ports": [{"name": "https", "port": 443, "targetPort": 10250, "protocol": "TCP"}]},
        }),
    );
    put(
        state,
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "aws-load-balancer-webhook"},
            "webhooks": [{
                "name": "mpod.elbv2.k8s.aws", "admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": "Fail",
                "clientConfig": {"service": {"name": "aws-load-balancer-webhook-service", "namespace": "kube-system", "path": "/mutate-v1-pod", "port": 443}},
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
            }],
        }),
    );
    put(
        state,
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "cert-manager-webhook"},
            "webhooks": [{
                "name": "webhook.cert-manager.io", "admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": "Fail",
                "clientConfig": {"service": {"name": "cert-manager-webhook", "namespace": "cert-manager", "path": "/validate", "port": 443}},
                "rules": [{"apiGroups": ["cert-manager.io", "acme.cert-manager.io"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["*/*"]}],
            }],
        }),
    );
}
