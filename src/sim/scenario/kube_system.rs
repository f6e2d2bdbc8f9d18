//! The cluster's own objects: namespaces, the two system nodes, the add-ons' DaemonSets and
//! Deployments with the seed's versions, and the ConfigMaps the lab checks.

use serde_json::{Value, json};

use super::nodes::{NodeSpec, node_object};
use crate::lab::{self, ECR};
use crate::sim::kube::auth::rbac::bootstrap;
use crate::sim::kube::storage::api;
use crate::sim::kube::storage::state::{KubeState, built_in_key};

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
    bootstrap::seed(state);
    for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        create(
            state,
            "namespaces",
            json!({"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}}),
        );
    }
    name_the_cluster(state);
    create(
        state,
        "services",
        json!({
            "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"clusterIP": "10.100.0.1", "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 443}]},
        }),
    );
}

/// kube-system's uid, which tools (and runbook's locks) take for the cluster's id, made random
/// as a real cluster's is, so that two labs are two clusters; every other uid of the twin
/// follows its deterministic sequence. Stored as a restore does, since the API sets uids.
fn name_the_cluster(state: &mut KubeState) {
    let key = built_in_key("namespaces");
    let (Some(uid), Some(mut namespace)) = (
        random_uid(),
        state.store.get(&key, "", "kube-system").cloned(),
    ) else {
        return;
    };
    namespace["metadata"]["uid"] = json!(uid);
    state.store.restore(&key, namespace);
}

fn random_uid() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = hex::encode(bytes);
    Some(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// The primary node group's two t3.medium nodes, in 2a and 2c.
pub(super) const SYSTEM_NODES: [(&str, &str, &str); 2] = [
    ("i-0a1b2c3d4e5f60001", "ap-northeast-2a", "192.168.13.45"),
    ("i-0a1b2c3d4e5f60002", "ap-northeast-2c", "192.168.21.118"),
];

pub(super) fn image(repository: &str, addon: &str) -> String {
    format!("{ECR}/eks/{repository}:{}", lab::addon_version(addon))
}

pub(super) fn workload(
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

pub(super) fn container(name: &str, image: String, cpu: &str, memory: &str) -> Value {
    json!({"name": name, "image": image, "resources": {"requests": {"cpu": cpu, "memory": memory}}})
}

/// The lab as deployed: the two system nodes and every add-on's objects.
pub(super) fn deployed(state: &mut KubeState) {
    system_nodes(state);
    for (addon, _) in lab::ADDONS {
        super::addons::install(state, addon);
    }
}

fn system_nodes(state: &mut KubeState) {
    for (instance, zone, ip) in SYSTEM_NODES {
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
}

/// What a deleted cluster leaves: nothing but what a new one starts with. Every object goes
/// (custom resource definitions unregistered too), then the base namespaces come back.
pub(crate) fn clear_cluster(state: &mut KubeState) {
    for (resource, namespace, name) in state.store.keys() {
        if let Some(removed) = state.store.remove(&resource, &namespace, &name)
            && removed["kind"] == "CustomResourceDefinition"
        {
            let group = removed["spec"]["group"].as_str().unwrap_or_default();
            let plural = removed["spec"]["names"]["plural"]
                .as_str()
                .unwrap_or_default();
            state.registry.unregister_crd(group, plural);
        }
    }
    state.logs.clear();
    namespaces(state);
}
