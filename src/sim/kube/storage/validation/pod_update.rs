//! What an update may change of a Pod's spec (1.35's `ValidatePodUpdate`): images, a shorter
//! active deadline, added tolerations, removed scheduling gates, and (while the Pod is gated)
//! added node selector entries and node affinity requirements; nothing else, and no
//! containers added or removed.

use serde_json::{Map, Value};

use super::errors::Errors;
use super::go_value::{node_selector_term, node_selector_terms, string_map};

/// Upstream's `updatablePodSpecFields`, joined as 1.35 prints them. Upstream follows it with a
/// newline and go-cmp's `cmp.Diff` of the specs; go-cmp randomizes that output's spacing on
/// purpose (so that nobody depends on it), so the twin cannot print it byte for byte and stops
/// at the sentence.
const UPDATABLE: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

fn containers<'a>(spec: &'a Value, list: &str) -> &'a [Value] {
    spec[list].as_array().map(Vec::as_slice).unwrap_or_default()
}

fn items(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
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

/// A toleration as Go's struct compares it, `tolerationSeconds` aside: a field left out and
/// one set to "" are the same.
fn toleration_key(toleration: &Value) -> [&str; 4] {
    ["key", "operator", "value", "effect"].map(|f| toleration[f].as_str().unwrap_or_default())
}

/// `validateOnlyAddedTolerations`: every old toleration is still there, only its
/// `tolerationSeconds` may differ (the new list's own rules are `ValidateTolerations`').
fn only_added_tolerations(old: &Value, new: &Value, errors: &mut Errors) {
    let kept = items(&old["tolerations"]).iter().all(|before| {
        let key = toleration_key(before);
        items(&new["tolerations"])
            .iter()
            .any(|after| toleration_key(after) == key)
    });
    if !kept {
        errors.forbidden(
            "spec.tolerations",
            "existing toleration can not be modified except its tolerationSeconds",
        );
    }
}

/// `validateOnlyDeletedSchedulingGates`: a gate the old Pod did not have is refused, at its
/// index in the new list (upstream walks a map, so several come in no fixed order; the twin
/// gives them in list order).
fn only_deleted_gates(old: &Value, new: &Value, errors: &mut Errors) {
    let old_names: Vec<&str> = items(&old["schedulingGates"])
        .iter()
        .map(|g| g["name"].as_str().unwrap_or_default())
        .collect();
    let mut reported: Vec<&str> = Vec::new();
    let gates = items(&new["schedulingGates"]);
    // The last index of a name wins, as upstream's map of name to index keeps it.
    for (i, gate) in gates.iter().enumerate().rev() {
        let name = gate["name"].as_str().unwrap_or_default();
        if old_names.contains(&name) || reported.contains(&name) {
            continue;
        }
        reported.push(name);
        errors.forbidden(
            format!("spec.schedulingGates[{i}].name"),
            &format!("only deletion is allowed, but found new scheduling gate '{name}'"),
        );
    }
}

/// `validateNodeSelectorMutation`: a gated Pod may add node selector entries, not change or
/// remove one.
fn node_selector_additions(old: &Value, munged: &Value, errors: &mut Errors) {
    let empty = Map::new();
    let before = old["nodeSelector"].as_object().unwrap_or(&empty);
    let after = munged["nodeSelector"].as_object().unwrap_or(&empty);
    if before.iter().any(|(k, v)| after.get(k) != Some(v)) {
        errors.push(
            "spec.nodeSelector",
            format!(
                "Invalid value: {}: only additions to spec.nodeSelector are allowed (no mutations or deletions)",
                string_map(&munged["nodeSelector"])
            ),
        );
    }
}

const REQUIRED_TERMS: &str =
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";

fn required_terms(spec: &Value) -> &Value {
    &spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
}

/// `validateNodeSelectorTermHasOnlyAdditions`: the old term's expressions and fields are the
/// new one's first ones (an empty old term stays empty).
fn term_has_only_additions(new: &Value, old: &Value) -> bool {
    let (old_expressions, old_fields) =
        (items(&old["matchExpressions"]), items(&old["matchFields"]));
    if old_expressions.is_empty() && old_fields.is_empty() {
        return items(&new["matchExpressions"]).is_empty() && items(&new["matchFields"]).is_empty();
    }
    [
        ("matchExpressions", old_expressions),
        ("matchFields", old_fields),
    ]
    .iter()
    .all(|(list, before)| {
        let after = items(&new[*list]);
        after.len() >= before.len()
            && after[..before.len()]
                .iter()
                .zip(before.iter())
                .all(|(a, b)| semantic(a) == semantic(b))
    })
}

/// `validateNodeAffinityMutation`: a gated Pod's required node selector terms, when it had
/// some, keep their number and only gain requirements.
fn node_affinity_additions(old: &Value, munged: &Value, errors: &mut Errors) {
    let old_terms = items(required_terms(old));
    if old_terms.is_empty() {
        return;
    }
    let new_terms = required_terms(munged);
    if items(new_terms).len() != old_terms.len() {
        errors.push(
            REQUIRED_TERMS,
            format!(
                "Invalid value: {}: no additions/deletions to non-empty NodeSelectorTerms list are allowed",
                node_selector_terms(new_terms)
            ),
        );
        return;
    }
    for (i, (new, old)) in items(new_terms).iter().zip(old_terms).enumerate() {
        if !term_has_only_additions(new, old) {
            errors.push(
                format!("{REQUIRED_TERMS}[{i}]"),
                format!(
                    "Invalid value: {}: only additions are allowed (no mutations or deletions)",
                    node_selector_term(new)
                ),
            );
        }
    }
}

/// ValidatePodUpdate's relaxations for a gated Pod: node selector entries and required node
/// affinity requirements may be added; what is left is compared as the old spec's.
fn gated_relaxations(old_spec: &Value, munged: &mut Value, errors: &mut Errors) {
    if semantic(&munged["nodeSelector"]) != semantic(&old_spec["nodeSelector"]) {
        node_selector_additions(old_spec, munged, errors);
        restore(munged, old_spec, "nodeSelector");
    }
    let old_affinity = &old_spec["affinity"]["nodeAffinity"];
    if semantic(&munged["affinity"]["nodeAffinity"]) != semantic(old_affinity) {
        node_affinity_additions(old_spec, munged, errors);
        if !munged["affinity"].is_object() {
            munged["affinity"] = Value::Object(Map::new());
        }
        restore(
            &mut munged["affinity"],
            &old_spec["affinity"],
            "nodeAffinity",
        );
    }
}

/// Go's `Semantic.DeepEqual` of two specs: a list or map left out equals an empty one.
fn semantic(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !is_empty(v))
                .map(|(k, v)| (k.clone(), semantic(v)))
                .collect(),
        ),
        Value::Array(list) => Value::Array(list.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(list) => list.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

fn restore(munged: &mut Value, old_spec: &Value, field: &str) {
    match old_spec.get(field) {
        Some(value) => munged[field] = value.clone(),
        None => {
            if let Some(map) = munged.as_object_mut() {
                map.remove(field);
            }
        }
    }
}

pub(crate) fn pod_update(old: &Value, new: &Value, errors: &mut Errors) {
    let (old_spec, new_spec) = (&old["spec"], &new["spec"]);
    if !same_containers(old_spec, new_spec, errors) || !deadline(old_spec, new_spec, errors) {
        return;
    }
    only_added_tolerations(old_spec, new_spec, errors);
    only_deleted_gates(old_spec, new_spec, errors);
    // What is left once the updatable fields are put back as they were.
    let mut munged = new_spec.clone();
    for list in ["containers", "initContainers"] {
        for (i, container) in containers(old_spec, list).iter().enumerate() {
            munged[list][i]["image"] = container["image"].clone();
        }
    }
    for field in ["activeDeadlineSeconds", "tolerations", "schedulingGates"] {
        restore(&mut munged, old_spec, field);
    }
    if new_spec["terminationGracePeriodSeconds"] == 1
        && old_spec["terminationGracePeriodSeconds"]
            .as_i64()
            .is_some_and(|g| g < 0)
    {
        munged["terminationGracePeriodSeconds"] = old_spec["terminationGracePeriodSeconds"].clone();
    }
    if !items(&old_spec["schedulingGates"]).is_empty() {
        gated_relaxations(old_spec, &mut munged, errors);
    }
    if semantic(&munged) != semantic(old_spec) {
        errors.forbidden("spec", UPDATABLE);
    }
}
