//! Every object's metadata: its name by its kind's rule, its labels and annotations.

use serde_json::Value;

use super::errors::Errors;
use super::names::{
    dns_label, dns_subdomain, dns1035_label, label_value, path_segment, qualified_name,
};
use crate::sim::kube::storage::resources::ResourceType;

/// All annotations of one object together (apimachinery's `TotalAnnotationSizeLimitB`).
const ANNOTATIONS_LIMIT: usize = 256 * 1024;

fn name_rule(resource: &ResourceType) -> fn(&str) -> Vec<String> {
    match (resource.group.as_str(), resource.kind.as_str()) {
        ("rbac.authorization.k8s.io", _) => path_segment,
        ("", "Namespace") => dns_label,
        ("", "Service") => dns1035_label,
        _ => dns_subdomain,
    }
}

pub(crate) fn name(resource: &ResourceType, name: &str, errors: &mut Errors) {
    if name.is_empty() {
        return;
    }
    let value = Value::String(name.to_string());
    for message in name_rule(resource)(name) {
        errors.invalid("metadata.name", &value, &message);
    }
    // A CronJob's Jobs add 11 characters to its name, and a Job name is a label value.
    if resource.kind == "CronJob" && name.len() > 52 {
        errors.invalid(
            "metadata.name",
            &value,
            "must be no more than 52 characters",
        );
    }
}

/// `ValidateLabels`: each key a qualified name, each value a label value.
pub(crate) fn labels(labels: &Value, path: &str, errors: &mut Errors) {
    for (key, value) in labels.as_object().into_iter().flatten() {
        for message in qualified_name(key) {
            errors.invalid(path, &Value::String(key.clone()), &message);
        }
        match value.as_str() {
            Some(text) => {
                for message in label_value(text) {
                    errors.invalid(path, value, &message);
                }
            }
            None => errors.invalid(path, value, "label values must be strings"),
        }
    }
}

pub(crate) fn annotations(annotations: &Value, path: &str, errors: &mut Errors) {
    let mut total = 0;
    for (key, value) in annotations.as_object().into_iter().flatten() {
        for message in qualified_name(&key.to_lowercase()) {
            errors.invalid(path, &Value::String(key.clone()), &message);
        }
        total += key.len() + value.as_str().map_or(0, str::len);
    }
    if total > ANNOTATIONS_LIMIT {
        errors.push(
            path,
            format!("Too long: may not be more than {ANNOTATIONS_LIMIT} bytes"),
        );
    }
}

pub(crate) fn metadata(resource: &ResourceType, object: &Value, errors: &mut Errors) {
    let meta = &object["metadata"];
    name(resource, meta["name"].as_str().unwrap_or_default(), errors);
    labels(&meta["labels"], "metadata.labels", errors);
    annotations(&meta["annotations"], "metadata.annotations", errors);
}
