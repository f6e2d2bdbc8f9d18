//! A pod's scheduling gates and what a new Pod may not have with them, as 1.35's
//! `validateSchedulingGates` and `ValidatePodCreate` check them.

use std::collections::HashSet;

use serde_json::Value;

use super::errors::Errors;
use super::names::qualified_name;

/// `validateSchedulingGates`: each name a qualified name, none twice (the path is the item's,
/// without `.name`, as upstream writes it).
pub(crate) fn scheduling_gates(spec: &Value, path: &str, errors: &mut Errors) {
    let mut seen = HashSet::new();
    for (i, gate) in spec["schedulingGates"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{path}.schedulingGates[{i}]");
        let name = gate["name"].as_str().unwrap_or_default();
        let shown = Value::String(name.to_string());
        for message in qualified_name(name) {
            errors.invalid(at.clone(), &shown, &message);
        }
        if !seen.insert(name) {
            errors.duplicate(at, &shown);
        }
    }
}

/// `ValidatePodCreate`'s own rules: ephemeral containers only through their subresource, and
/// no node before the gates are cleared.
pub(crate) fn pod_create(spec: &Value, errors: &mut Errors) {
    if spec["ephemeralContainers"]
        .as_array()
        .is_some_and(|c| !c.is_empty())
    {
        errors.forbidden("spec.ephemeralContainers", "cannot be set on create");
    }
    let gated = spec["schedulingGates"]
        .as_array()
        .is_some_and(|g| !g.is_empty());
    if spec["nodeName"].as_str().is_some_and(|n| !n.is_empty()) && gated {
        errors.forbidden(
            "spec.nodeName",
            "cannot be set until all schedulingGates have been cleared",
        );
    }
}
