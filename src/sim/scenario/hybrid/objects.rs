//! Putting the scenario's objects into the store, built-in or defined by a CRD it adds.

use serde_json::{Value, json};

use crate::sim::kube::storage::api;
use crate::sim::kube::storage::state::KubeState;

/// Creates an object of any kind the twin serves by then; scenario data is fixed, so a refusal
/// is a bug in the scenario.
pub(super) fn put(state: &mut KubeState, object: Value) {
    let api_version = object["apiVersion"].as_str().unwrap_or("v1").to_string();
    let kind = object["kind"].as_str().unwrap_or_default().to_string();
    let Some(resource) = state.resource(&api_version, &kind) else {
        panic!("hybrid scenario: the twin does not serve {api_version} {kind}");
    };
    let namespace = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if let Err(error) = api::create(state, &resource, &namespace, object, false) {
        panic!("hybrid scenario object rejected: {}", error.message);
    }
}

/// Changes an existing object in place (a node's labels, an add-on's template).
pub(super) fn amend(
    state: &mut KubeState,
    plural: &str,
    namespace: &str,
    name: &str,
    change: impl FnOnce(&mut Value),
) {
    let resource = state.built_in(plural);
    let Some(mut object) = state.object(plural, namespace, name) else {
        panic!("hybrid scenario: no {plural} {namespace}/{name} to amend");
    };
    change(&mut object);
    if let Err(error) = api::replace(state, &resource, namespace, name, object, None) {
        panic!("hybrid scenario amendment rejected: {}", error.message);
    }
}

pub(super) fn service_account(state: &mut KubeState, namespace: &str, name: &str) {
    put(
        state,
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}}),
    );
}

pub(super) fn namespace(state: &mut KubeState, name: &str) {
    put(
        state,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}}),
    );
}

/// A CustomResourceDefinition that keeps whatever its objects hold (the twin checks no schema).
pub(super) fn crd(
    state: &mut KubeState,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    namespaced: bool,
) {
    put(
        state,
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {
                "group": group,
                "names": {"kind": kind, "listKind": format!("{kind}List"), "plural": plural, "singular": kind.to_lowercase()},
                "scope": if namespaced { "Namespaced" } else { "Cluster" },
                "versions": [{
                    "name": version, "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                    "subresources": {"status": {}},
                }],
            },
        }),
    );
}

/// A DaemonSet or Deployment with one container.
pub(super) struct Workload<'a> {
    pub(crate) kind: &'a str,
    pub(crate) namespace: &'a str,
    pub(crate) name: &'a str,
    pub(crate) image: &'a str,
    pub(crate) cpu: &'a str,
    /// Extra fields of the pod spec (nodeSelector, affinity, tolerations, ...).
    pub(crate) pod_spec: Value,
    pub(crate) replicas: u32,
}

impl Workload<'_> {
    pub(super) fn object(&self) -> Value {
        let labels = json!({"app.kubernetes.io/name": self.name});
        let mut spec = json!({
            "serviceAccountName": self.name,
            "containers": [{"name": self.name, "image": self.image, "resources": {"requests": {"cpu": self.cpu, "memory": "64Mi"}}}],
        });
        if let Some(extra) = self.pod_spec.as_object() {
            for (key, value) in extra {
                spec[key] = value.clone();
            }
        }
        let mut object = json!({
            "apiVersion": "apps/v1",
            "kind": self.kind,
            "metadata": {"name": self.name, "namespace": self.namespace, "labels": labels},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": spec}},
        });
        if self.kind == "Deployment" {
            object["spec"]["replicas"] = json!(self.replicas);
        }
        object
    }

    /// Creates it and its ServiceAccount.
    pub(super) fn put(&self, state: &mut KubeState) {
        self.put_amended(state, |_| {});
    }

    /// The same with a change to the object first (a label a controller looks for).
    pub(super) fn put_amended(&self, state: &mut KubeState, amend: impl FnOnce(&mut Value)) {
        service_account(state, self.namespace, self.name);
        let mut object = self.object();
        amend(&mut object);
        put(state, object);
    }
}

/// `requiredDuringScheduling` node affinity: `key` In `values`.
pub(super) fn affinity_in(key: &str, values: &[&str]) -> Value {
    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": key, "operator": "In", "values": values}]}
    ]}}})
}

/// `requiredDuringScheduling` node affinity: `key` NotIn `values`.
pub(super) fn affinity_not_in(key: &str, values: &[&str]) -> Value {
    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": key, "operator": "NotIn", "values": values}]}
    ]}}})
}

/// The toleration infrastructure pods need once the owner taints hybrid nodes (seed 004).
pub(super) fn hybrid_toleration() -> Value {
    json!({"key": "eks.amazonaws.com/compute-type", "operator": "Equal", "value": "hybrid", "effect": "NoSchedule"})
}
