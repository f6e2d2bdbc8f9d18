//! A `metav1.LabelSelector` in a pod spec (affinity terms, spread constraints), as
//! apimachinery's `ValidateLabelSelector` and `ValidateLabelSelectorRequirement`
//! (`pkg/apis/meta/v1/validation/validation.go`) check it.

use serde_json::Value;

use super::errors::Errors;
use super::metadata::labels;
use super::names::{label_value, qualified_name};

/// `ValidateLabelSelector` (label values checked: `AllowInvalidLabelValueInSelector` is only
/// set for objects that already hold such values).
pub(crate) fn label_selector(selector: &Value, path: &str, errors: &mut Errors) {
    if !selector.is_object() {
        return;
    }
    labels(
        &selector["matchLabels"],
        &format!("{path}.matchLabels"),
        errors,
    );
    for (i, requirement) in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        requirement_errors(
            requirement,
            &format!("{path}.matchExpressions[{i}]"),
            errors,
        );
    }
}

/// `ValidateLabelSelectorRequirement`.
fn requirement_errors(requirement: &Value, at: &str, errors: &mut Errors) {
    let values = requirement["values"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    match requirement["operator"].as_str().unwrap_or_default() {
        "In" | "NotIn" if values.is_empty() => errors.required_because(
            format!("{at}.values"),
            "must be specified when `operator` is 'In' or 'NotIn'",
        ),
        "Exists" | "DoesNotExist" if !values.is_empty() => errors.forbidden(
            format!("{at}.values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
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
    for (k, value) in values.iter().enumerate() {
        for message in label_value(value.as_str().unwrap_or_default()) {
            errors.invalid(format!("{at}.values[{k}]"), value, &message);
        }
    }
}
