//! A pod's spec, in a Pod or a workload's template: its containers (names, images, ports,
//! environment, mounts, resources, probes), volumes, policies and tolerations, as 1.35's
//! `ValidatePodSpec` checks them.

use std::collections::HashSet;

use serde_json::Value;

use super::affinity::affinity;
use super::dns::{self, dns_policy};
use super::env::env;
use super::errors::Errors;
use super::metadata::labels;
use super::names::{dns_label, port_name, qualified_name};
use super::probes::container_probes;
pub(crate) use super::requirements::BadQuantity;
use super::requirements::requirements;
use super::scheduling_gates::scheduling_gates;
use super::security::{container_security, pod_os, pod_security_ids};
use super::tolerations::tolerations;
use super::topology_spread::topology_spread;
use super::volumes::{mounts, volumes};

pub(crate) const PULL_POLICIES: [&str; 3] = ["Always", "IfNotPresent", "Never"];
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
pub(crate) const RESTART_POLICIES: [&str; 3] = ["Always", "OnFailure", "Never"];
const MESSAGE_POLICIES: [&str; 2] = ["File", "FallbackToLogsOnError"];

/// `validateContainerPorts`.
fn ports(container: &Value, path: &str, errors: &mut Errors) {
    let mut names: HashSet<&str> = HashSet::new();
    for (i, port) in container["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{path}.ports[{i}]");
        if let Some(name) = port["name"].as_str().filter(|n| !n.is_empty()) {
            let messages = port_name(name);
            for message in &messages {
                errors.invalid(format!("{at}.name"), &port["name"], message);
            }
            if messages.is_empty() && !names.insert(name) {
                errors.duplicate(format!("{at}.name"), &port["name"]);
            }
        }
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
}

/// `AccumulateUniqueHostPorts`: a host port (by protocol and address) used twice.
fn host_ports(containers: &[Value], list: &str, seen: &mut HashSet<String>, errors: &mut Errors) {
    for (c, container) in containers.iter().enumerate() {
        for (p, port) in container["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let host_port = port["hostPort"].as_i64().unwrap_or(0);
            if host_port == 0 {
                continue;
            }
            let key = format!(
                "{}/{}/{host_port}",
                port["protocol"].as_str().unwrap_or_default(),
                port["hostIP"].as_str().unwrap_or_default()
            );
            if !seen.insert(key.clone()) {
                errors.duplicate(
                    format!("{list}[{c}].ports[{p}].hostPort"),
                    &Value::String(key),
                );
            }
        }
    }
}

/// `validateContainerCommon`: what every container, init or not, is held to.
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
        format!("{path}.terminationMessagePolicy"),
        &container["terminationMessagePolicy"],
        &MESSAGE_POLICIES,
    );
    ports(container, path, errors);
    env(container, path, errors);
    mounts(container, path, volumes, errors);
    container_security(container, path, errors);
    errors.one_of(
        format!("{path}.imagePullPolicy"),
        &container["imagePullPolicy"],
        &PULL_POLICIES,
    );
    requirements(
        &container["resources"],
        &format!("{path}.resources"),
        errors,
    )
}

/// `validateContainerOnlyForPod`: a Pod's images (not a template's) have no surrounding
/// whitespace.
pub(crate) fn pod_images(spec: &Value, errors: &mut Errors) {
    for list in ["containers", "initContainers"] {
        for (i, item) in spec[list].as_array().into_iter().flatten().enumerate() {
            if let Some(image) = item["image"].as_str()
                && image.trim() != image
            {
                errors.invalid(
                    format!("spec.{list}[{i}].image"),
                    &item["image"],
                    "must not have leading or trailing whitespace",
                );
            }
        }
    }
}

/// `ValidatePodSpec` for the fields runbooks and charts set (a workload adds its own rules
/// for its template's restart policy).
pub(crate) fn pod_spec(spec: &Value, path: &str, errors: &mut Errors) -> Result<(), BadQuantity> {
    let volumes = volumes(spec, path, errors);
    let containers = spec["containers"].as_array();
    if containers.is_none_or(Vec::is_empty) {
        errors.required(format!("{path}.containers"));
    }
    let grace = spec["terminationGracePeriodSeconds"].as_i64();
    // Names are unique across regular and init containers; an init container is the one
    // named as a duplicate (upstream checks regular containers first).
    let mut names: HashSet<&str> = HashSet::new();
    for list in ["containers", "initContainers"] {
        let items = spec[list].as_array().map(Vec::as_slice).unwrap_or_default();
        for (i, item) in items.iter().enumerate() {
            let at = format!("{path}.{list}[{i}]");
            container(item, &at, &volumes, errors)?;
            if let Some(name) = item["name"].as_str().filter(|n| !n.is_empty())
                && !names.insert(name)
            {
                errors.duplicate(format!("{at}.name"), &item["name"]);
            }
            container_probes(item, &at, list == "initContainers", grace, errors);
            if list == "initContainers" {
                // Init containers run one at a time: each is checked on its own.
                host_ports(
                    std::slice::from_ref(item),
                    &format!("{path}.{list}"),
                    &mut HashSet::new(),
                    errors,
                );
            }
        }
        if list == "containers" {
            host_ports(
                items,
                &format!("{path}.{list}"),
                &mut HashSet::new(),
                errors,
            );
        }
    }
    host_network_ports(spec, path, errors);
    errors.one_of(
        format!("{path}.restartPolicy"),
        &spec["restartPolicy"],
        &RESTART_POLICIES,
    );
    dns_policy(spec, path, errors);
    labels(
        &spec["nodeSelector"],
        &format!("{path}.nodeSelector"),
        errors,
    );
    pod_security_ids(spec, path, errors);
    // A negative grace period is let through (with a warning, `warnings.rs`): upstream only
    // requires one, which the defaults give.
    scheduling_rules(spec, path, errors);
    tolerations(&spec["tolerations"], &format!("{path}.tolerations"), errors);
    dns::host_aliases(spec, path, errors);
    pod_os(spec, path, errors);
    Ok(())
}

/// The rest of `ValidatePodSpec`, in its order: affinity, DNS config, readiness and
/// scheduling gates, spread constraints, the active deadline.
fn scheduling_rules(spec: &Value, path: &str, errors: &mut Errors) {
    affinity(spec, path, errors);
    dns::dns_config(spec, path, errors);
    // `validateReadinessGates`.
    for (i, gate) in spec["readinessGates"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let condition = gate["conditionType"].as_str().unwrap_or_default();
        for message in qualified_name(condition) {
            errors.invalid(
                format!("{path}.readinessGates[{i}].conditionType"),
                &Value::String(condition.to_string()),
                &message,
            );
        }
    }
    scheduling_gates(spec, path, errors);
    topology_spread(spec, path, errors);
    if let Some(seconds) = spec["activeDeadlineSeconds"].as_i64()
        && !(1..=i64::from(i32::MAX)).contains(&seconds)
    {
        errors.invalid(
            format!("{path}.activeDeadlineSeconds"),
            &spec["activeDeadlineSeconds"],
            "must be between 1 and 2147483647, inclusive",
        );
    }
}

/// `validatePodHostNetworkDeps`: on the host's network a container port is its host port (a
/// template may leave the host port to the Pod's defaults).
fn host_network_ports(spec: &Value, path: &str, errors: &mut Errors) {
    if spec["hostNetwork"] != true {
        return;
    }
    for (c, container) in spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        for (p, port) in container["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let host = port["hostPort"].as_i64().unwrap_or(0);
            if host != 0 && Some(host) != port["containerPort"].as_i64() {
                errors.invalid(
                    format!("{path}.containers[{c}].ports[{p}].hostPort"),
                    &port["hostPort"],
                    "must match `containerPort` when `hostNetwork` is true",
                );
            }
        }
    }
}
