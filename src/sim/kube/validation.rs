//! The apiserver's validation for the fields runbooks get wrong most often: names, pod
//! templates, selectors, Job restart policies. Errors are 422 `Invalid` with field paths.

use serde_json::Value;

use super::resources::ResourceType;
use super::selectors::LabelSelector;
use super::state::KubeState;
use super::status::ApiError;
use super::store::name_of;

fn dns_subdomain(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    (!ok).then(|| {
        format!(
            "Invalid value: \"{name}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        )
    })
}

fn pod_spec_errors(spec: &Value, path: &str, errors: &mut Vec<(String, String)>) {
    let containers = spec["containers"].as_array();
    if containers.is_none_or(Vec::is_empty) {
        errors.push((format!("{path}.containers"), "Required value".into()));
    }
    for (i, container) in containers.into_iter().flatten().enumerate() {
        if container["name"].as_str().is_none_or(str::is_empty) {
            errors.push((
                format!("{path}.containers[{i}].name"),
                "Required value".into(),
            ));
        }
        if container["image"].as_str().is_none_or(str::is_empty) {
            errors.push((
                format!("{path}.containers[{i}].image"),
                "Required value".into(),
            ));
        }
    }
}

fn template_errors(object: &Value, errors: &mut Vec<(String, String)>) {
    let spec = &object["spec"];
    if spec["selector"].is_null() {
        errors.push(("spec.selector".into(), "Required value".into()));
    } else {
        let selector = LabelSelector::from_object(&spec["selector"]);
        let labels = &spec["template"]["metadata"]["labels"];
        if selector.is_empty() {
            errors.push((
                "spec.selector".into(),
                "Invalid value: empty selector is invalid for deployment".into(),
            ));
        } else if !selector.matches(labels) {
            errors.push((
                "spec.template.metadata.labels".into(),
                format!("Invalid value: {labels}: `selector` does not match template `labels`"),
            ));
        }
    }
    pod_spec_errors(&spec["template"]["spec"], "spec.template.spec", errors);
}

/// RBAC objects are named as path segments (`system:basic-user`): anything but `.`, `..`,
/// or a name with `/` or `%`.
fn path_segment(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("Required value: name or generateName is required".into());
    }
    if name == "." || name == ".." {
        return Some(format!("Invalid value: \"{name}\": may not be '{name}'"));
    }
    ["/", "%"]
        .iter()
        .find(|c| name.contains(**c))
        .map(|c| format!("Invalid value: \"{name}\": may not contain '{c}'"))
}

pub fn validate(
    _state: &KubeState,
    resource: &ResourceType,
    object: &Value,
) -> Result<(), ApiError> {
    let name = name_of(object);
    let mut errors: Vec<(String, String)> = Vec::new();
    let name_error = if resource.group == "rbac.authorization.k8s.io" {
        path_segment(name)
    } else {
        dns_subdomain(name)
    };
    if let Some(message) = name_error {
        errors.push(("metadata.name".into(), message));
    }
    if let Some(labels) = object["metadata"]["labels"].as_object() {
        for (key, value) in labels {
            if !value.is_string() {
                errors.push((
                    format!("metadata.labels[{key}]"),
                    "Invalid value: label values must be strings".into(),
                ));
            }
        }
    }
    match (resource.group.as_str(), resource.kind.as_str()) {
        ("", "Pod") => pod_spec_errors(&object["spec"], "spec", &mut errors),
        ("apps", "Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet") => {
            template_errors(object, &mut errors)
        }
        ("batch", "Job") => {
            pod_spec_errors(
                &object["spec"]["template"]["spec"],
                "spec.template.spec",
                &mut errors,
            );
            let policy = object["spec"]["template"]["spec"]["restartPolicy"]
                .as_str()
                .unwrap_or("Always");
            if !matches!(policy, "OnFailure" | "Never") {
                errors.push((
                    "spec.template.spec.restartPolicy".into(),
                    format!("Unsupported value: \"{policy}\": supported values: \"OnFailure\", \"Never\""),
                ));
            }
            for field in ["parallelism", "completions", "backoffLimit"] {
                if object["spec"][field].as_i64().is_some_and(|n| n < 0) {
                    errors.push((
                        format!("spec.{field}"),
                        "Invalid value: must be greater than or equal to 0".into(),
                    ));
                }
            }
        }
        _ => {}
    }
    if errors.is_empty() {
        return Ok(());
    }
    let causes: Vec<(&str, String)> = errors
        .iter()
        .map(|(f, m)| (f.as_str(), m.clone()))
        .collect();
    Err(ApiError::invalid(&resource.kind, name, &causes))
}
