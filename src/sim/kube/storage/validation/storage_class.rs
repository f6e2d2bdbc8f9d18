//! StorageClasses (storage.k8s.io/v1), as 1.35's `ValidateStorageClass` and
//! `ValidateStorageClassUpdate` check them (`pkg/apis/storage/validation/validation.go`): a
//! provisioner named as a qualified name, parameters' keys, the reclaim policy and binding
//! mode; parameters, provisioner, reclaim policy and binding mode fixed once made.

use serde_json::Value;

use super::errors::{Errors, shown};
use super::names::qualified_name;

/// `supportedReclaimPolicy.List()` and `supportedVolumeBindingModes.List()`, sorted.
const RECLAIM_POLICIES: [&str; 2] = ["Delete", "Retain"];
const BINDING_MODES: [&str; 2] = ["Immediate", "WaitForFirstConsumer"];
/// `maxProvisionerParameterLen` and `maxProvisionerParameterSize`.
const MOST_PARAMETERS: usize = 512;
const PARAMETERS_SIZE: usize = 256 * 1024;

/// `validateParameters`: keys not empty, at most 512 of them, 256 kB in all.
fn parameters(parameters: &Value, errors: &mut Errors) {
    let Some(map) = parameters.as_object() else {
        return;
    };
    if map.len() > MOST_PARAMETERS {
        return errors.push(
            "parameters",
            format!("Too long: may not be more than {MOST_PARAMETERS} bytes"),
        );
    }
    let mut size = 0;
    for (key, value) in map {
        if key.is_empty() {
            errors.invalid(
                "parameters",
                &Value::String(key.clone()),
                "field can not be empty.",
            );
        }
        size += key.len() + value.as_str().map_or(0, str::len);
    }
    if size > PARAMETERS_SIZE {
        errors.push(
            "parameters",
            format!("Too long: may not be more than {PARAMETERS_SIZE} bytes"),
        );
    }
}

/// `ValidateStorageClass` (allowed topologies are not checked by the twin).
pub(crate) fn storage_class(object: &Value, errors: &mut Errors) {
    let provisioner = &object["provisioner"];
    match provisioner.as_str().filter(|p| !p.is_empty()) {
        None => errors.required("provisioner"),
        // The name is checked lowercased, as upstream does (CSI drivers may be mixed case).
        Some(name) => {
            for message in qualified_name(&name.to_lowercase()) {
                errors.invalid("provisioner", &Value::String(name.to_lowercase()), &message);
            }
        }
    }
    parameters(&object["parameters"], errors);
    if object["reclaimPolicy"]
        .as_str()
        .is_some_and(|p| !p.is_empty())
    {
        errors.one_of("reclaimPolicy", &object["reclaimPolicy"], &RECLAIM_POLICIES);
    }
    match &object["volumeBindingMode"] {
        Value::Null => errors.required("volumeBindingMode"),
        mode => errors.one_of("volumeBindingMode", mode, &BINDING_MODES),
    }
}

/// `ValidateStorageClassUpdate`.
pub(crate) fn storage_class_update(old: &Value, new: &Value, errors: &mut Errors) {
    if old["parameters"] != new["parameters"] {
        errors.forbidden("parameters", "updates to parameters are forbidden.");
    }
    if old["provisioner"] != new["provisioner"] {
        errors.forbidden("provisioner", "updates to provisioner are forbidden.");
    }
    if old["reclaimPolicy"] != new["reclaimPolicy"] {
        errors.forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden.");
    }
    if old["volumeBindingMode"] != new["volumeBindingMode"] {
        errors.push(
            "volumeBindingMode",
            format!(
                "Invalid value: {}: field is immutable",
                shown(&new["volumeBindingMode"])
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn causes(object: Value) -> Vec<String> {
        let mut errors = Errors::default();
        storage_class(&object, &mut errors);
        errors
            .0
            .into_iter()
            .map(|(f, m)| format!("{f}: {m}"))
            .collect()
    }

    #[test]
    fn provisioner_policy_and_mode() {
        let defaults = json!({"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"});
        let with = |changes: Value| crate::sim::kube::storage::patch::merge(&defaults, &changes);
        assert_eq!(causes(with(json!({}))), ["provisioner: Required value"]);
        assert_eq!(
            causes(with(
                json!({"provisioner": "ebs.csi.aws.com", "reclaimPolicy": "Recycle"})
            )),
            [
                r#"reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain""#
            ]
        );
        assert_eq!(
            causes(with(
                json!({"provisioner": "ebs.csi.aws.com", "volumeBindingMode": "Later"})
            )),
            [
                r#"volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer""#
            ]
        );
        assert!(
            causes(with(
                json!({"provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3"}})
            ))
            .is_empty()
        );
    }

    #[test]
    fn parameters_and_the_rest_are_fixed() {
        let old = json!({"provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3"},
                         "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"});
        let mut new = old.clone();
        new["parameters"]["type"] = json!("io2");
        let mut errors = Errors::default();
        storage_class_update(&old, &new, &mut errors);
        assert_eq!(
            errors.0,
            [(
                "parameters".to_string(),
                "Forbidden: updates to parameters are forbidden.".to_string()
            )]
        );
    }
}
