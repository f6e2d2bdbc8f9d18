//! What an update may not change: selectors, a Job's template, a Service's cluster IP, an
//! immutable ConfigMap's or Secret's data, a claim's spec, most of a StatefulSet's spec, a
//! PriorityClass's value, a binding's role, a StorageClass's parameters.

use serde_json::Value;

use super::errors::{Errors, quoted, shown};
use super::go_value::label_selector;
use super::pod_update::pod_update;
use super::service::service_update;

const IMMUTABLE: &str = "field is immutable";

fn selector(old: &Value, new: &Value, errors: &mut Errors) {
    let (before, after) = (&old["spec"]["selector"], &new["spec"]["selector"]);
    if before != after && !before.is_null() {
        errors.push(
            "spec.selector",
            format!("Invalid value: {}: {IMMUTABLE}", label_selector(after)),
        );
    }
}

/// The StatefulSet spec fields an update may change (`ValidateStatefulSetUpdate`).
const STATEFULSET_MUTABLE: [&str; 7] = [
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

fn without(spec: &Value, fields: &[&str]) -> Value {
    let mut spec = spec.clone();
    if let Some(map) = spec.as_object_mut() {
        for field in fields {
            map.remove(*field);
        }
    }
    spec
}

/// `ValidateNoNewFinalizers`: an object being deleted takes no new finalizers.
fn no_new_finalizers(old: &Value, new: &Value, errors: &mut Errors) {
    if old["metadata"]["deletionTimestamp"].is_null() {
        return;
    }
    let before = &old["metadata"]["finalizers"];
    let mut added: Vec<&str> = new["metadata"]["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|f| !before.as_array().is_some_and(|b| b.iter().any(|o| o == f)))
        .collect();
    if added.is_empty() {
        return;
    }
    added.sort_unstable();
    let listed: Vec<String> = added.iter().map(|f| quoted(f)).collect();
    errors.forbidden(
        "metadata.finalizers",
        &format!(
            "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
            listed.join(", ")
        ),
    );
}

pub(crate) fn update(group: &str, kind: &str, old: &Value, new: &Value, errors: &mut Errors) {
    no_new_finalizers(old, new, errors);
    match (group, kind) {
        ("apps", "Deployment" | "ReplicaSet" | "DaemonSet") => selector(old, new, errors),
        // A changed selector is one of the changes this refuses.
        ("apps", "StatefulSet")
            if without(&old["spec"], &STATEFULSET_MUTABLE)
                != without(&new["spec"], &STATEFULSET_MUTABLE) =>
        {
            errors.forbidden(
                "spec",
                "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            );
        }
        ("", "Pod") => pod_update(old, new, errors),
        ("batch", "Job") => {
            selector(old, new, errors);
            for field in ["completions", "completionMode"] {
                let (before, after) = (&old["spec"][field], &new["spec"][field]);
                if before != after {
                    errors.invalid(format!("spec.{field}"), after, IMMUTABLE);
                }
            }
            if old["spec"]["template"] != new["spec"]["template"] {
                // The server prints the whole core.PodTemplateSpec here; the twin names it.
                errors.push(
                    "spec.template",
                    format!("Invalid value: core.PodTemplateSpec{{...}}: {IMMUTABLE}"),
                );
            }
        }
        ("", "Service") => service_update(old, new, errors),
        ("", "ConfigMap" | "Secret") => {
            if old["immutable"] == true {
                let message = "field is immutable when `immutable` is set";
                if new["immutable"] != true {
                    errors.forbidden("immutable", message);
                }
                // A Secret's stringData is in its data by now (the defaults merge it).
                for part in ["data", "binaryData"] {
                    if old[part] != new[part] && !(old[part].is_null() && new[part].is_null()) {
                        errors.forbidden(part, message);
                    }
                }
            }
            if kind == "Secret" && !new["type"].is_null() && old["type"] != new["type"] {
                errors.push(
                    "type",
                    format!("Invalid value: {}: {IMMUTABLE}", shown(&new["type"])),
                );
            }
        }
        ("", "PersistentVolumeClaim") => {
            let allowed = |spec: &Value| {
                let mut spec = without(spec, &["volumeAttributesClassName"]);
                if let Some(resources) = spec.get_mut("resources").and_then(Value::as_object_mut) {
                    resources.remove("requests");
                }
                spec
            };
            if allowed(&old["spec"]) != allowed(&new["spec"]) {
                errors.forbidden(
                    "spec",
                    "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
                );
            }
        }
        ("scheduling.k8s.io", "PriorityClass") => {
            super::scheduling::priority_class_update(old, new, errors);
        }
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
            super::rbac::role_binding_update(old, new, errors);
        }
        ("storage.k8s.io", "StorageClass") => {
            super::storage_class::storage_class_update(old, new, errors);
        }
        _ => {}
    }
}
