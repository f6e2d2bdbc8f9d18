//! The cluster's own objects: namespaces, the two system nodes, the add-ons' DaemonSets and
//! Deployments with the seed's versions, and the ConfigMaps the lab checks.

use serde_json::{Value, json};

use super::nodes::{NodeSpec, node_object};
use crate::lab::{self, ECR};
use crate::sim::kube::api;
use crate::sim::kube::state::KubeState;

fn create(state: &mut KubeState, plural: &str, object: Value) {
    let resource = state.built_in(plural);
    let namespace = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if let Err(error) = api::create(state, &resource, &namespace, object, false) {
        // Scenario data is fixed: an error here is a bug in this file.
        panic!("scenario object rejected: {}", error.message);
    }
}

pub(super) fn namespaces(state: &mut KubeState) {
    for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        create(
            state,
            "namespaces",
            json!({"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}}),
        );
    }
    create(
        state,
        "services",
        json!({
            "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"clusterIP": "10.100.0.1", "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 443}]},
        }),
    );
}

/// The primary node group's two t3.medium nodes, in 2a and 2c.
pub(super) const SYSTEM_NODES: [(&str, &str, &str); 2] = [
    ("i-0a1b2c3d4e5f60001", "ap-northeast-2a", "192.168.13.45"),
    ("i-0a1b2c3d4e5f60002", "ap-northeast-2c", "192.168.21.118"),
];

fn image(repository: &str, addon: &str) -> String {
    format!("{ECR}/eks/{repository}:{}", lab::addon_version(addon))
}

fn workload(
    kind: &str,
    namespace: &str,
    name: &str,
    app_label: (&str, &str),
    container: Value,
    extra_spec: Value,
) -> Value {
    let (label_key, label_value) = app_label;
    let mut pod_spec = json!({
        "containers": [container],
        "priorityClassName": "system-node-critical",
        "serviceAccountName": name,
        "tolerations": [{"operator": "Exists"}],
    });
    if let Some(extra) = extra_spec.as_object() {
        for (k, v) in extra {
            pod_spec[k] = v.clone();
        }
    }
    let api_version = "apps/v1";
    let mut object = json!({
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "labels": {label_key: label_value}},
        "spec": {
            "selector": {"matchLabels": {label_key: label_value}},
            "template": {"metadata": {"labels": {label_key: label_value}}, "spec": pod_spec},
        },
    });
    if kind == "Deployment" {
        object["spec"]["replicas"] = json!(2);
    }
    object
}

fn container(name: &str, image: String, cpu: &str, memory: &str) -> Value {
    json!({"name": name, "image": image, "resources": {"requests": {"cpu": cpu, "memory": memory}}})
}

pub(super) fn deployed(state: &mut KubeState) {
    for (index, (instance, zone, ip)) in SYSTEM_NODES.iter().enumerate() {
        let _ = index;
        let node = node_object(&NodeSpec {
            nodegroup: "primary",
            instance_id: instance,
            zone,
            private_ip: ip,
            shape: &lab::T3_MEDIUM,
            ami: lab::AMI_STANDARD,
            labels: &[("tier", "primary")],
            taints: &[],
            ready: true,
        });
        create(state, "nodes", node);
    }
    for name in ["cert-manager", "external-dns"] {
        create(
            state,
            "namespaces",
            json!({"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}}),
        );
    }

    create(
        state,
        "daemonsets",
        workload(
            "DaemonSet",
            "kube-system",
            "aws-node",
            ("k8s-app", "aws-node"),
            container(
                "aws-node",
                format!("{ECR}/amazon-k8s-cni:{}", lab::addon_version("vpc-cni")),
                "25m",
                "0",
            ),
            json!({"hostNetwork": true}),
        ),
    );
    create(
        state,
        "daemonsets",
        workload(
            "DaemonSet",
            "kube-system",
            "kube-proxy",
            ("k8s-app", "kube-proxy"),
            container("kube-proxy", image("kube-proxy", "kube-proxy"), "100m", "0"),
            json!({"hostNetwork": true}),
        ),
    );
    create(
        state,
        "daemonsets",
        workload(
            "DaemonSet",
            "kube-system",
            "eks-pod-identity-agent",
            ("app.kubernetes.io/name", "eks-pod-identity-agent"),
            container(
                "eks-pod-identity-agent",
                image("eks-pod-identity-agent", "eks-pod-identity-agent"),
                "25m",
                "0",
            ),
            json!({"hostNetwork": true}),
        ),
    );

    let spread = json!({
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}, {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
        "priorityClassName": "system-cluster-critical",
    });
    create(
        state,
        "deployments",
        workload(
            "Deployment",
            "kube-system",
            "coredns",
            ("k8s-app", "kube-dns"),
            container("coredns", image("coredns", "coredns"), "100m", "70Mi"),
            spread,
        ),
    );
    create(
        state,
        "deployments",
        workload(
            "Deployment",
            "kube-system",
            "metrics-server",
            ("k8s-app", "metrics-server"),
            container(
                "metrics-server",
                image("metrics-server", "metrics-server"),
                "100m",
                "200Mi",
            ),
            json!({"priorityClassName": "system-cluster-critical"}),
        ),
    );
    for name in [
        "cert-manager",
        "cert-manager-cainjector",
        "cert-manager-webhook",
    ] {
        let mut deployment = workload(
            "Deployment",
            "cert-manager",
            name,
            ("app.kubernetes.io/name", name),
            container(
                name,
                format!(
                    "quay.io/jetstack/{}:v1.19.1",
                    name.replace("cert-manager", "cert-manager-controller")
                        .replace("-controller-", "-")
                ),
                "10m",
                "32Mi",
            ),
            json!({}),
        );
        deployment["spec"]["replicas"] = json!(1);
        create(state, "deployments", deployment);
    }
    let mut external_dns = workload(
        "Deployment",
        "external-dns",
        "external-dns",
        ("app.kubernetes.io/name", "external-dns"),
        container(
            "external-dns",
            "registry.k8s.io/external-dns/external-dns:v0.20.0".into(),
            "10m",
            "32Mi",
        ),
        json!({}),
    );
    external_dns["spec"]["replicas"] = json!(1);
    create(state, "deployments", external_dns);

    let vpc_cni: serde_json::Map<String, Value> = lab::VPC_CNI_CONFIG
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(v)))
        .collect();
    create(
        state,
        "configmaps",
        json!({"metadata": {"name": "amazon-vpc-cni", "namespace": "kube-system", "labels": {"app.kubernetes.io/name": "aws-node"}}, "data": vpc_cni}),
    );
    create(
        state,
        "configmaps",
        json!({
            "metadata": {"name": "kube-proxy-config", "namespace": "kube-system", "labels": {"eks.amazonaws.com/component": "kube-proxy", "k8s-app": "kube-proxy"}},
            "data": {"config": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nbindAddress: 0.0.0.0\nclientConnection:\n  kubeconfig: /var/lib/kube-proxy/kubeconfig\nclusterCIDR: \"\"\nconntrack:\n  maxPerCore: 32768\n  min: 131072\nkind: KubeProxyConfiguration\nmetricsBindAddress: 0.0.0.0:10249\nmode: \"iptables\"\niptables:\n  masqueradeAll: false\n  syncPeriod: 30s\n"},
        }),
    );
    create(
        state,
        "services",
        json!({
            "metadata": {"name": "kube-dns", "namespace": "kube-system", "labels": {"k8s-app": "kube-dns", "eks.amazonaws.com/component": "kube-dns"}},
            "spec": {"clusterIP": "10.100.0.10", "selector": {"k8s-app": "kube-dns"}, "ports": [
                {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153},
            ]},
        }),
    );
}
