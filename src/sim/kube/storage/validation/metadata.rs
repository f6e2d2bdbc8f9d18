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
        ("", "Namespace") | ("apps", "StatefulSet") => dns_label,
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

/// `validateOwnerReference` as of 1.35: paths without the reference's index, Invalid
/// "must not be empty" for each missing part, one controller at most.
fn owner_references(references: &Value, errors: &mut Errors) {
    let path = "metadata.ownerReferences";
    let mut controller: Option<String> = None;
    for reference in references.as_array().into_iter().flatten() {
        let text = |field: &str| reference[field].as_str().unwrap_or_default().to_string();
        let api_version = text("apiVersion");
        // `schema.FromAPIVersionAndKind`: "group/version" or "version"; anything else has none.
        let version = match api_version.split('/').collect::<Vec<_>>().as_slice() {
            [version] | [_, version] => (*version).to_string(),
            _ => String::new(),
        };
        if version.is_empty() {
            errors.invalid(
                format!("{path}.apiVersion"),
                &Value::String(api_version.clone()),
                "version must not be empty",
            );
        }
        for field in ["kind", "name", "uid"] {
            if text(field).is_empty() {
                errors.invalid(
                    format!("{path}.{field}"),
                    &Value::String(String::new()),
                    "must not be empty",
                );
            }
        }
        if api_version == "v1" && text("kind") == "Event" {
            errors.invalid(
                path,
                reference,
                "/v1, Kind=Event is disallowed from being an owner",
            );
        }
        if reference["controller"] == true {
            let current = format!("{}/{}", text("kind"), text("name"));
            match &controller {
                Some(first) => errors.invalid(
                    path,
                    references,
                    &format!("Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"),
                ),
                None => controller = Some(current),
            }
        }
    }
}

/// `ValidateFinalizers` (each a qualified name, not both orphan and foreground deletion) and
/// core's own rule that a name without a domain is a standard one.
/// (Custom resources are only warned about a name without a domain.)
fn finalizers(list: &Value, built_in: bool, errors: &mut Errors) {
    let names: Vec<&str> = list
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for name in &names {
        for message in qualified_name(name) {
            errors.invalid(
                "metadata.finalizers",
                &Value::String((*name).into()),
                &message,
            );
        }
    }
    if names.contains(&"orphan") && names.contains(&"foregroundDeletion") {
        errors.invalid(
            "metadata.finalizers",
            list,
            "finalizer orphan and foregroundDeletion cannot be both set",
        );
    }
    for (i, name) in names.iter().enumerate() {
        if built_in
            && !name.contains('/')
            && !["kubernetes", "orphan", "foregroundDeletion"].contains(name)
        {
            errors.invalid(
                format!("metadata.finalizers[{i}]"),
                &Value::String((*name).into()),
                "name is neither a standard finalizer name nor is it fully qualified",
            );
        }
    }
}

pub(crate) fn metadata(resource: &ResourceType, object: &Value, errors: &mut Errors) {
    let meta = &object["metadata"];
    name(resource, meta["name"].as_str().unwrap_or_default(), errors);
    labels(&meta["labels"], "metadata.labels", errors);
    annotations(&meta["annotations"], "metadata.annotations", errors);
    owner_references(&meta["ownerReferences"], errors);
    let built_in = crate::sim::kube::storage::resources::is_built_in(resource);
    finalizers(&meta["finalizers"], built_in, errors);
}
