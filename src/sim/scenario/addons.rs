//! What each EKS add-on puts into the cluster (DaemonSets, Deployments, ConfigMaps, Services,
//! namespaces), with the seed's versions: installed when the add-on turns ACTIVE, removed when
//! it is deleted.

use serde_json::{Value, json};

use super::kube_system::{container, image, workload};
use crate::lab::{self, ECR};
use crate::sim::kube::storage::api;
use crate::sim::kube::storage::state::KubeState;

/// `(plural, object)` pairs an add-on owns, in creation order.
fn objects(addon: &str) -> Vec<(&'static str, Value)> {
    match addon {
        "vpc-cni" => vpc_cni(),
        "kube-proxy" => kube_proxy(),
        "eks-pod-identity-agent" => pod_identity_agent(),
        "coredns" => vec![("deployments", coredns()), ("services", kube_dns())],
        "metrics-server" => metrics_server(),
        "cert-manager" => cert_manager(),
        "external-dns" => external_dns(),
        "eks-node-monitoring-agent" => node_monitoring_agent(),
        _ => vec![],
    }
}

fn vpc_cni() -> Vec<(&'static str, Value)> {
    vec![
        (
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
        ),
        ("configmaps", vpc_cni_config()),
    ]
}

/// The EKS node monitoring agent's DaemonSet on every node, as its chart makes it
/// (aws/eks-node-monitoring-agent@51af549, charts/eks-node-monitoring-agent: privileged, on the
/// host's network and PID namespace, tolerating every taint). What it reports is
/// sim/kube/controllers/node_monitoring.rs; the chart's `dcgm-server` DaemonSet is not
/// modelled (the twin's DCGM answers on every GPU node).
fn node_monitoring_agent() -> Vec<(&'static str, Value)> {
    let name = "eks-node-monitoring-agent";
    let mut agent = container(
        name,
        format!("{ECR}/eks/{name}:{}", lab::addon_version(name)),
        "10m",
        "30Mi",
    );
    agent["securityContext"] = json!({"privileged": true, "capabilities": {"add": ["NET_ADMIN"]}});
    vec![(
        "daemonsets",
        workload(
            "DaemonSet",
            "kube-system",
            name,
            ("app.kubernetes.io/name", name),
            agent,
            json!({"hostNetwork": true, "hostPID": true}),
        ),
    )]
}

fn kube_proxy() -> Vec<(&'static str, Value)> {
    vec![
        (
            "daemonsets",
            workload(
                "DaemonSet",
                "kube-system",
                "kube-proxy",
                ("k8s-app", "kube-proxy"),
                container("kube-proxy", image("kube-proxy", "kube-proxy"), "100m", "0"),
                json!({"hostNetwork": true}),
            ),
        ),
        ("configmaps", kube_proxy_config()),
    ]
}

fn pod_identity_agent() -> Vec<(&'static str, Value)> {
    vec![(
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
    )]
}

fn metrics_server() -> Vec<(&'static str, Value)> {
    vec![(
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
    )]
}

/// Its namespace and its three Deployments (controller, cainjector, webhook).
fn cert_manager() -> Vec<(&'static str, Value)> {
    let mut objects = vec![("namespaces", namespace("cert-manager"))];
    for name in [
        "cert-manager",
        "cert-manager-cainjector",
        "cert-manager-webhook",
    ] {
        let image = format!(
            "quay.io/jetstack/{}:v1.19.1",
            name.replace("cert-manager", "cert-manager-controller")
                .replace("-controller-", "-")
        );
        objects.push((
            "deployments",
            single_replica(workload(
                "Deployment",
                "cert-manager",
                name,
                ("app.kubernetes.io/name", name),
                container(name, image, "10m", "32Mi"),
                json!({}),
            )),
        ));
    }
    objects
}

fn external_dns() -> Vec<(&'static str, Value)> {
    vec![
        ("namespaces", namespace("external-dns")),
        (
            "deployments",
            single_replica(workload(
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
            )),
        ),
    ]
}

fn namespace(name: &str) -> Value {
    json!({"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}})
}

fn single_replica(mut deployment: Value) -> Value {
    deployment["spec"]["replicas"] = json!(1);
    deployment
}

fn coredns() -> Value {
    let spread = json!({
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}, {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
        "priorityClassName": "system-cluster-critical",
    });
    workload(
        "Deployment",
        "kube-system",
        "coredns",
        ("k8s-app", "kube-dns"),
        container("coredns", image("coredns", "coredns"), "100m", "70Mi"),
        spread,
    )
}

fn kube_dns() -> Value {
    json!({
        "metadata": {"name": "kube-dns", "namespace": "kube-system", "labels": {"k8s-app": "kube-dns", "eks.amazonaws.com/component": "kube-dns"}},
        "spec": {"clusterIP": "10.100.0.10", "selector": {"k8s-app": "kube-dns"}, "ports": [
            {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
            {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
            {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153},
        ]},
    })
}

fn vpc_cni_config() -> Value {
    let data: serde_json::Map<String, Value> = lab::VPC_CNI_CONFIG
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(v)))
        .collect();
    json!({"metadata": {"name": "amazon-vpc-cni", "namespace": "kube-system", "labels": {"app.kubernetes.io/name": "aws-node"}}, "data": data})
}

fn kube_proxy_config() -> Value {
    json!({
        "metadata": {"name": "kube-proxy-config", "namespace": "kube-system", "labels": {"eks.amazonaws.com/component": "kube-proxy", "k8s-app": "kube-proxy"}},
        "data": {"config": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nbindAddress: 0.0.0.0\nclientConnection:\n  kubeconfig: /var/lib/kube-proxy/kubeconfig\nclusterCIDR: \"\"\nconntrack:\n  maxPerCore: 32768\n  min: 131072\nkind: KubeProxyConfiguration\nmetricsBindAddress: 0.0.0.0:10249\nmode: \"iptables\"\niptables:\n  masqueradeAll: false\n  syncPeriod: 30s\n"},
    })
}

/// Creates an add-on's objects; those that already exist are left as they are (EKS's
/// "preserve" conflict resolution).
pub(crate) fn install(state: &mut KubeState, addon: &str) {
    for (plural, object) in objects(addon) {
        let resource = state.built_in(plural);
        let namespace = object["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        // AlreadyExists is the only error fixed data can meet here; keeping what is there is
        // what EKS does too.
        let _ = api::create(state, &resource, &namespace, object, false);
    }
}

/// Deletes an add-on's objects (their pods follow through garbage collection).
pub(crate) fn uninstall(state: &mut KubeState, addon: &str) {
    for (plural, object) in objects(addon).into_iter().rev() {
        let resource = state.built_in(plural);
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let _ = api::delete(state, &resource, namespace, name, false, false);
    }
}
