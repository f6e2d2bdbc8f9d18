//! Hybrid observability (seed 004): node-level metrics come from the Node Exporter (EC2 IMDS is
//! not there on-premises), GPU metrics from DCGM exporters, and the CloudWatch agent keeps
//! `RUN_WITH_IRSA=True` alongside its other environment entries.

use serde_json::json;

use super::objects::{Workload, crd, namespace, put};
use crate::sim::kube::storage::state::KubeState;

pub(super) fn exporters(state: &mut KubeState) {
    namespace(state, "monitoring");
    Workload {
        kind: "DaemonSet",
        namespace: "monitoring",
        name: "prometheus-node-exporter",
        image: "quay.io/prometheus/node-exporter:v1.9.1",
        cpu: "10m",
        pod_spec: json!({"hostNetwork": true, "tolerations": [{"operator": "Exists"}]}),
        replicas: 0,
    }
    .put(state);
    // The GPU Operator runs DCGM exporters on its own nodes; the DRA driver's hosts get the
    // standalone exporter.
    Workload {
        kind: "DaemonSet",
        namespace: "monitoring",
        name: "dcgm-exporter",
        image: "nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-ubuntu22.04",
        cpu: "10m",
        pod_spec: json!({
            "nodeSelector": {"nvidia.com/gpu.deploy.operands": "false"},
            "tolerations": [{"operator": "Exists"}],
        }),
        replicas: 0,
    }
    .put(state);
}

pub(super) fn cloudwatch_agent(state: &mut KubeState) {
    namespace(state, "amazon-cloudwatch");
    crd(
        state,
        "cloudwatch.aws.amazon.com",
        "v1alpha1",
        "AmazonCloudWatchAgent",
        "amazoncloudwatchagents",
        true,
    );
    put(
        state,
        json!({
            "apiVersion": "cloudwatch.aws.amazon.com/v1alpha1", "kind": "AmazonCloudWatchAgent",
            "metadata": {"name": "cloudwatch-agent", "namespace": "amazon-cloudwatch"},
            "spec": {
                "mode": "daemonset",
                "serviceAccount": "cloudwatch-agent",
                "env": [
                    {"name": "K8S_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                    {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
                    {"name": "K8S_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                    {"name": "RUN_WITH_IRSA", "value": "True"},
                ],
            },
        }),
    );
}
