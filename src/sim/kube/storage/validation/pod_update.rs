//! What an update may change of a Pod's spec (1.35's `ValidatePodUpdate`): images, a shorter
//! active deadline, added tolerations; nothing else, and no containers added or removed.

use serde_json::Value;

use super::errors::Errors;

/// Upstream's list, as 1.35 prints it (resources change through the `resize` subresource).
const UPDATABLE: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

fn containers<'a>(spec: &'a Value, list: &str) -> &'a [Value] {
    spec[list].as_array().map(Vec::as_slice).unwrap_or_default()
}

/// `ValidateContainerUpdates`: false when the lists differ in length (upstream stops there).
fn same_containers(old: &Value, new: &Value, errors: &mut Errors) -> bool {
    for list in ["containers", "initContainers"] {
        let (before, after) = (containers(old, list), containers(new, list));
        if before.len() != after.len() {
            errors.forbidden(
                format!("spec.{list}"),
                "pod updates may not add or remove containers",
            );
            return false;
        }
        for (i, container) in after.iter().enumerate() {
            if container["image"].as_str().is_none_or(str::is_empty) {
                errors.required(format!("spec.{list}[{i}].image"));
            }
        }
    }
    true
}

/// False when the deadline rule refused the update (upstream returns at once).
fn deadline(old: &Value, new: &Value, errors: &mut Errors) -> bool {
    let (before, after) = (&old["activeDeadlineSeconds"], &new["activeDeadlineSeconds"]);
    let path = "spec.activeDeadlineSeconds";
    match (before.as_i64(), after.as_i64()) {
        (_, Some(seconds)) if !(0..=i64::from(i32::MAX)).contains(&seconds) => {
            errors.invalid(path, after, "must be between 0 and 2147483647, inclusive");
            false
        }
        (Some(was), Some(now)) if was < now => {
            errors.invalid(path, after, "must be less than or equal to previous value");
            false
        }
        (Some(_), None) => {
            errors.invalid(
                path,
                &Value::Null,
                "must not update from a positive integer to nil value",
            );
            true
        }
        _ => true,
    }
}

pub(crate) fn pod_update(old: &Value, new: &Value, errors: &mut Errors) {
    let (old_spec, new_spec) = (&old["spec"], &new["spec"]);
    if !same_containers(old_spec, new_spec, errors) || !deadline(old_spec, new_spec, errors) {
        return;
    }
    let old_tolerations = old_spec["tolerations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let kept = old_tolerations.iter().all(|t| {
        new_spec["tolerations"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|n| {
                let mut n = n.clone();
                n["tolerationSeconds"] = t["tolerationSeconds"].clone();
                &n == t
            })
    });
    if !kept {
        errors.forbidden(
            "spec.tolerations",
            "existing toleration can not be modified except its tolerationSeconds",
        );
    }
    // What is left once the updatable fields are put back as they were.
    let mut munged = new_spec.clone();
    for list in ["containers", "initContainers"] {
        for (i, container) in containers(old_spec, list).iter().enumerate() {
            munged[list][i]["image"] = container["image"].clone();
        }
    }
    for field in ["activeDeadlineSeconds", "tolerations", "schedulingGates"] {
        match old_spec.get(field) {
            Some(value) => munged[field] = value.clone(),
            None => {
                if let Some(map) = munged.as_object_mut() {
                    map.remove(field);
                }
            }
        }
    }
    if new_spec["terminationGracePeriodSeconds"] == 1
        && old_spec["terminationGracePeriodSeconds"]
            .as_i64()
            .is_some_and(|g| g < 0)
    {
        munged["terminationGracePeriodSeconds"] = old_spec["terminationGracePeriodSeconds"].clone();
    }
    if &munged != old_spec {
        errors.forbidden("spec", UPDATABLE);
    }
}
