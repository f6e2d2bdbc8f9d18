//! A container's resource requests and limits, as `validateResourceRequirements` checks them:
//! resource names, negative and fractional amounts, requests over limits, and the resources
//! (GPUs, EFA, hugepages) whose request must equal their limit.

use serde_json::Value;

use super::errors::{Errors, quoted};
use super::names::qualified_name;
use crate::sim::kube::storage::quantity::{is_valid, milli};

/// A quantity that does not parse: the decode error the API server answers with (400).
pub(crate) struct BadQuantity;

/// `IsNativeResource`: no domain, or a `kubernetes.io/` one.
fn native(resource: &str) -> bool {
    !resource.contains('/') || resource.contains("kubernetes.io/")
}

/// `IsOvercommitAllowed`: native and not hugepages.
fn overcommit_allowed(resource: &str) -> bool {
    native(resource) && !resource.starts_with("hugepages-")
}

/// `IsExtendedResourceName`: a domain outside kubernetes.io, which quota can name.
fn extended(resource: &str) -> bool {
    !native(resource)
        && !resource.starts_with("requests.")
        && qualified_name(&format!("requests.{resource}")).is_empty()
}

/// `validateContainerResourceName`.
fn name_errors(resource: &str) -> Vec<&'static str> {
    let qualified = qualified_name(resource);
    if !qualified.is_empty() {
        return Vec::new();
    }
    let standard = matches!(resource, "cpu" | "memory" | "ephemeral-storage")
        || resource.starts_with("hugepages-");
    if !resource.contains('/') {
        if standard {
            return Vec::new();
        }
        return vec![
            "must be a standard resource type or fully qualified",
            "must be a standard resource for containers",
        ];
    }
    if !native(resource) && !extended(resource) {
        return vec!["doesn't follow extended resource name standard"];
    }
    Vec::new()
}

fn text(quantity: &Value) -> String {
    quantity
        .as_str()
        .map_or_else(|| quantity.to_string(), |t| t.trim().to_string())
}

/// One named amount of `limits` or `requests`: its name and value.
fn amount(resource: &str, quantity: &Value, at: &str, errors: &mut Errors) {
    let name_value = Value::String(resource.to_string());
    for message in qualified_name(resource) {
        errors.invalid(at, &name_value, &message);
    }
    for message in name_errors(resource) {
        errors.invalid(at, &name_value, message);
    }
    let amount = text(quantity);
    if milli(&amount) < 0 {
        errors.invalid(
            at,
            &Value::String(amount.clone()),
            "must be greater than or equal to 0",
        );
    }
    if extended(resource) && milli(&amount) % 1000 != 0 {
        errors.invalid(at, &Value::String(amount), "must be an integer");
    }
}

/// Every quantity parses, or the whole object is a decode error.
fn parses(resources: &Value) -> Result<(), BadQuantity> {
    for part in ["limits", "requests"] {
        for (_, quantity) in resources[part].as_object().into_iter().flatten() {
            let parsed = match quantity {
                Value::String(text) => is_valid(text.trim()),
                Value::Number(_) => true,
                _ => false,
            };
            if !parsed {
                return Err(BadQuantity);
            }
        }
    }
    Ok(())
}

pub(crate) fn requirements(
    resources: &Value,
    path: &str,
    errors: &mut Errors,
) -> Result<(), BadQuantity> {
    parses(resources)?;
    let limits = resources["limits"].as_object();
    for (name, limit) in limits.into_iter().flatten() {
        amount(name, limit, &format!("{path}.limits[{name}]"), errors);
    }
    for (name, request) in resources["requests"].as_object().into_iter().flatten() {
        amount(name, request, &format!("{path}.requests[{name}]"), errors);
        let request = text(request);
        match limits.and_then(|l| l.get(name)).map(text) {
            Some(limit) if milli(&request) != milli(&limit) && !overcommit_allowed(name) => {
                errors.push(
                    format!("{path}.requests"),
                    format!(
                        "Invalid value: {}: must be equal to {name} limit of {limit}",
                        quoted(&request)
                    ),
                );
            }
            Some(limit) if milli(&request) > milli(&limit) => errors.push(
                format!("{path}.requests"),
                format!(
                    "Invalid value: {}: must be less than or equal to {name} limit of {limit}",
                    quoted(&request)
                ),
            ),
            Some(_) => {}
            None if !overcommit_allowed(name) => errors.required_because(
                format!("{path}.limits"),
                "Limit must be set for non overcommitable resources",
            ),
            None => {}
        }
    }
    let all = || {
        ["limits", "requests"]
            .iter()
            .flat_map(|part| resources[*part].as_object().into_iter().flatten())
            .map(|(name, _)| name.as_str())
    };
    if all().any(|n| n.starts_with("hugepages-")) && !all().any(|n| n == "cpu" || n == "memory") {
        errors.forbidden(path, "HugePages require cpu or memory");
    }
    Ok(())
}
