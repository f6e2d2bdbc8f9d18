//! A pod's affinity: node affinity's selector terms and preferences, pod (anti-)affinity's
//! terms and weights, as 1.35's `validateAffinity` checks them.

use serde_json::Value;

use super::errors::Errors;
use super::label_selector::label_selector;
use super::names::{dns_label, label_value, qualified_name};

fn items(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// `validateAffinity`.
pub(crate) fn affinity(spec: &Value, path: &str, errors: &mut Errors) {
    let affinity = &spec["affinity"];
    let at = format!("{path}.affinity");
    if affinity["nodeAffinity"].is_object() {
        node_affinity(
            &affinity["nodeAffinity"],
            &format!("{at}.nodeAffinity"),
            errors,
        );
    }
    for kind in ["podAffinity", "podAntiAffinity"] {
        let terms = &affinity[kind];
        let kind_at = format!("{at}.{kind}");
        let required = "requiredDuringSchedulingIgnoredDuringExecution";
        for (i, term) in items(&terms[required]).iter().enumerate() {
            pod_affinity_term(term, &format!("{kind_at}.{required}[{i}]"), errors);
        }
        let preferred = "preferredDuringSchedulingIgnoredDuringExecution";
        for (i, weighted) in items(&terms[preferred]).iter().enumerate() {
            let term_at = format!("{kind_at}.{preferred}[{i}]");
            weight(&weighted["weight"], &term_at, errors);
            pod_affinity_term(
                &weighted["podAffinityTerm"],
                &format!("{term_at}.podAffinityTerm"),
                errors,
            );
        }
    }
}

/// `validateWeightedPodAffinityTerms` and `ValidatePreferredSchedulingTerms`: 1 to 100.
fn weight(weight: &Value, at: &str, errors: &mut Errors) {
    let n = weight.as_i64().unwrap_or(0);
    if !(1..=100).contains(&n) {
        errors.invalid(
            format!("{at}.weight"),
            &Value::from(n),
            "must be in the range 1-100",
        );
    }
}

/// `validatePodAffinityTerm`: its label and namespace selectors
/// (`ValidatePodAffinityTermSelector`), namespaces are namespace names, the topology key is
/// required and a label key. (`matchLabelKeys` and `mismatchLabelKeys` are not checked.)
fn pod_affinity_term(term: &Value, at: &str, errors: &mut Errors) {
    label_selector(
        &term["labelSelector"],
        &format!("{at}.labelSelector"),
        errors,
    );
    label_selector(
        &term["namespaceSelector"],
        &format!("{at}.namespaceSelector"),
        errors,
    );
    for name in items(&term["namespaces"]) {
        for message in dns_label(name.as_str().unwrap_or_default()) {
            errors.invalid(format!("{at}.namespace"), name, &message);
        }
    }
    let key = term["topologyKey"].as_str().unwrap_or_default();
    if key.is_empty() {
        errors.required_because(format!("{at}.topologyKey"), "can not be empty");
    }
    for message in qualified_name(key) {
        errors.invalid(
            format!("{at}.topologyKey"),
            &Value::String(key.to_string()),
            &message,
        );
    }
}

/// `validateNodeAffinity`: the required selector (`ValidateNodeSelector`) and the preferred
/// terms (`ValidatePreferredSchedulingTerms`, where label values are not checked).
fn node_affinity(node: &Value, at: &str, errors: &mut Errors) {
    let required = "requiredDuringSchedulingIgnoredDuringExecution";
    if node[required].is_object() {
        let terms_at = format!("{at}.{required}.nodeSelectorTerms");
        let terms = items(&node[required]["nodeSelectorTerms"]);
        if terms.is_empty() {
            errors.required_because(terms_at, "must have at least one node selector term");
        } else {
            for (i, term) in terms.iter().enumerate() {
                selector_term(term, &format!("{terms_at}[{i}]"), true, errors);
            }
        }
    }
    let preferred = "preferredDuringSchedulingIgnoredDuringExecution";
    for (i, term) in items(&node[preferred]).iter().enumerate() {
        let term_at = format!("{at}.{preferred}[{i}]");
        weight(&term["weight"], &term_at, errors);
        selector_term(
            &term["preference"],
            &format!("{term_at}.preference"),
            false,
            errors,
        );
    }
}

/// `ValidateNodeSelectorTerm`: its label expressions and field expressions.
fn selector_term(term: &Value, at: &str, check_values: bool, errors: &mut Errors) {
    for (j, requirement) in items(&term["matchExpressions"]).iter().enumerate() {
        let req_at = format!("{at}.matchExpressions[{j}]");
        node_requirement(requirement, &req_at, check_values, errors);
    }
    for (j, requirement) in items(&term["matchFields"]).iter().enumerate() {
        field_requirement(requirement, &format!("{at}.matchFields[{j}]"), errors);
    }
}

/// `ValidateNodeSelectorRequirement`.
fn node_requirement(requirement: &Value, at: &str, check_values: bool, errors: &mut Errors) {
    let values = items(&requirement["values"]);
    let operator = requirement["operator"].as_str().unwrap_or_default();
    match operator {
        "In" | "NotIn" if values.is_empty() => errors.required_because(
            format!("{at}.values"),
            "must be specified when `operator` is 'In' or 'NotIn'",
        ),
        "Exists" | "DoesNotExist" if !values.is_empty() => errors.forbidden(
            format!("{at}.values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        "Gt" | "Lt" if values.len() != 1 => errors.required_because(
            format!("{at}.values"),
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        ),
        "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
        other => errors.invalid(
            format!("{at}.operator"),
            &Value::String(other.to_string()),
            "not a valid selector operator",
        ),
    }
    let key = requirement["key"].as_str().unwrap_or_default();
    for message in qualified_name(key) {
        errors.invalid(
            format!("{at}.key"),
            &Value::String(key.to_string()),
            &message,
        );
    }
    if check_values {
        for (k, value) in values.iter().enumerate() {
            for message in label_value(value.as_str().unwrap_or_default()) {
                errors.invalid(format!("{at}.values[{k}]"), value, &message);
            }
        }
    }
}

/// `ValidateNodeFieldSelectorRequirement`: only `metadata.name`, with one value.
fn field_requirement(requirement: &Value, at: &str, errors: &mut Errors) {
    match requirement["operator"].as_str().unwrap_or_default() {
        "In" | "NotIn" => {
            if items(&requirement["values"]).len() != 1 {
                errors.required_because(
                    format!("{at}.values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                );
            }
        }
        other => errors.invalid(
            format!("{at}.operator"),
            &Value::String(other.to_string()),
            "not a valid selector operator",
        ),
    }
    let key = requirement["key"].as_str().unwrap_or_default();
    if key != "metadata.name" {
        errors.invalid(
            format!("{at}.key"),
            &Value::String(key.to_string()),
            "not a valid field selector key",
        );
    }
}
