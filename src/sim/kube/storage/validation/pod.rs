//! A pod's spec, in a Pod or a workload's template: containers, ports, resources,
//! policies and tolerations, as `ValidatePodSpec` checks them.

use std::collections::HashSet;

use serde_json::Value;

use super::errors::{Errors, quoted};
use super::metadata::labels;
use super::names::dns_label;
use crate::sim::kube::storage::quantity::{is_valid, milli};

pub(crate) const PULL_POLICIES: [&str; 3] = ["Always", "IfNotPresent", "Never"];
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
const DNS_POLICIES: [&str; 4] = ["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"];
pub(crate) const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
const OPERATORS: [&str; 2] = ["Equal", "Exists"];

/// Resources that may not be overcommitted: requests equal limits (`nvidia.com/gpu`, EFA,
/// hugepages, anything outside the `kubernetes.io` names but cpu and memory).
fn overcommit_allowed(resource: &str) -> bool {
    matches!(resource, "cpu" | "memory" | "ephemeral-storage")
        || (resource.contains("kubernetes.io/") && !resource.starts_with("hugepages-"))
}

/// A quantity that does not parse: the decode error the API server answers with (400).
pub(crate) struct BadQuantity;

fn resources(resources: &Value, path: &str, errors: &mut Errors) -> Result<(), BadQuantity> {
    for part in ["limits", "requests"] {
        for (_, quantity) in resources[part].as_object().into_iter().flatten() {
            let text = match quantity {
                Value::String(text) => text.clone(),
                Value::Number(n) => n.to_string(),
                _ => return Err(BadQuantity),
            };
            if !is_valid(&text) {
                return Err(BadQuantity);
            }
        }
    }
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let limits = resources["limits"].as_object();
    for (name, request) in resources["requests"].as_object().into_iter().flatten() {
        let limit = limits.and_then(|l| l.get(name));
        let request_text = text(request);
        match limit {
            Some(limit) => {
                let limit_text = text(limit);
                if overcommit_allowed(name) {
                    if milli(&request_text) > milli(&limit_text) {
                        errors.push(
                            format!("{path}.requests[{name}]"),
                            format!(
                                "Invalid value: {}: must be less than or equal to {name} limit of {limit_text}",
                                quoted(&request_text)
                            ),
                        );
                    }
                } else if milli(&request_text) != milli(&limit_text) {
                    errors.push(
                        format!("{path}.requests[{name}]"),
                        format!(
                            "Invalid value: {}: must be equal to {name} limit of {limit_text}",
                            quoted(&request_text)
                        ),
                    );
                }
            }
            None if !overcommit_allowed(name) => errors.required_because(
                format!("{path}.limits"),
                "Limit must be set for non overcommitable resources",
            ),
            None => {}
        }
    }
    Ok(())
}

fn container(
    container: &Value,
    path: &str,
    volumes: &HashSet<&str>,
    errors: &mut Errors,
) -> Result<(), BadQuantity> {
    match container["name"].as_str().filter(|n| !n.is_empty()) {
        None => errors.required(format!("{path}.name")),
        Some(name) => {
            for message in dns_label(name) {
                errors.invalid(format!("{path}.name"), &container["name"], &message);
            }
        }
    }
    if container["image"].as_str().is_none_or(str::is_empty) {
        errors.required(format!("{path}.image"));
    }
    errors.one_of(
        format!("{path}.imagePullPolicy"),
        &container["imagePullPolicy"],
        &PULL_POLICIES,
    );
    for (i, port) in container["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{path}.ports[{i}]");
        if port["containerPort"].as_i64().unwrap_or(0) == 0 {
            errors.required(format!("{at}.containerPort"));
        } else {
            errors.port(format!("{at}.containerPort"), &port["containerPort"]);
        }
        if port["hostPort"].as_i64().unwrap_or(0) != 0 {
            errors.port(format!("{at}.hostPort"), &port["hostPort"]);
        }
        errors.one_of(format!("{at}.protocol"), &port["protocol"], &PROTOCOLS);
    }
    for (i, env) in container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if env["name"].as_str().is_none_or(str::is_empty) {
            errors.required(format!("{path}.env[{i}].name"));
        }
    }
    for (i, mount) in container["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = mount["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            errors.required(format!("{path}.volumeMounts[{i}].name"));
        } else if !volumes.contains(name) {
            errors.not_found(format!("{path}.volumeMounts[{i}].name"), &mount["name"]);
        }
        if mount["mountPath"].as_str().is_none_or(str::is_empty) {
            errors.required(format!("{path}.volumeMounts[{i}].mountPath"));
        }
    }
    resources(
        &container["resources"],
        &format!("{path}.resources"),
        errors,
    )
}

/// `ValidatePodSpec` for the fields runbooks and charts set. `restart` narrows the restart
/// policies a workload's template may have (a Deployment's pods always restart).
pub(crate) fn pod_spec(
    spec: &Value,
    path: &str,
    restart: &[&str],
    errors: &mut Errors,
) -> Result<(), BadQuantity> {
    let mut volumes: HashSet<&str> = HashSet::new();
    for (i, volume) in spec["volumes"].as_array().into_iter().flatten().enumerate() {
        let name = volume["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            errors.required(format!("{path}.volumes[{i}].name"));
        } else if !volumes.insert(name) {
            errors.duplicate(format!("{path}.volumes[{i}].name"), &volume["name"]);
        }
    }
    let containers = spec["containers"].as_array();
    if containers.is_none_or(Vec::is_empty) {
        errors.required(format!("{path}.containers"));
    }
    let mut names: HashSet<&str> = HashSet::new();
    for list in ["initContainers", "containers"] {
        for (i, item) in spec[list].as_array().into_iter().flatten().enumerate() {
            let at = format!("{path}.{list}[{i}]");
            container(item, &at, &volumes, errors)?;
            if let Some(name) = item["name"].as_str().filter(|n| !n.is_empty())
                && !names.insert(name)
            {
                errors.duplicate(format!("{at}.name"), &item["name"]);
            }
        }
    }
    if let Some(policy) = spec["restartPolicy"].as_str()
        && !restart.contains(&policy)
    {
        errors.not_supported(format!("{path}.restartPolicy"), policy, restart);
    }
    errors.one_of(
        format!("{path}.dnsPolicy"),
        &spec["dnsPolicy"],
        &DNS_POLICIES,
    );
    for (i, toleration) in spec["tolerations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{path}.tolerations[{i}]");
        errors.one_of(
            format!("{at}.operator"),
            &toleration["operator"],
            &OPERATORS,
        );
        errors.one_of(
            format!("{at}.effect"),
            &toleration["effect"],
            &TAINT_EFFECTS,
        );
        if toleration["operator"] == "Exists"
            && toleration["value"].as_str().is_some_and(|v| !v.is_empty())
        {
            errors.invalid(
                format!("{at}.operator"),
                &toleration["value"],
                "value must be empty when `operator` is 'Exists'",
            );
        }
    }
    labels(
        &spec["nodeSelector"],
        &format!("{path}.nodeSelector"),
        errors,
    );
    errors.non_negative(
        format!("{path}.terminationGracePeriodSeconds"),
        &spec["terminationGracePeriodSeconds"],
    );
    Ok(())
}
