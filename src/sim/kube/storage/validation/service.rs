//! Services: type, ports and their numbers, protocols and names (`ValidateService`).

use std::collections::HashSet;

use serde_json::Value;

use super::errors::Errors;

const TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

pub(crate) fn service(object: &Value, errors: &mut Errors) {
    let spec = &object["spec"];
    errors.one_of("spec.type", &spec["type"], &TYPES);
    errors.one_of(
        "spec.sessionAffinity",
        &spec["sessionAffinity"],
        &["ClientIP", "None"],
    );
    let kind = spec["type"].as_str().unwrap_or("ClusterIP");
    if kind == "ExternalName" && spec["externalName"].as_str().is_none_or(str::is_empty) {
        errors.required("spec.externalName");
    }
    let ports = spec["ports"].as_array();
    let headless = spec["clusterIP"] == "None";
    if ports.is_none_or(Vec::is_empty) && !headless && kind != "ExternalName" {
        errors.required("spec.ports");
    }
    let ports = ports.map(Vec::as_slice).unwrap_or_default();
    let mut names: HashSet<&str> = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let at = format!("spec.ports[{i}]");
        let name = port["name"].as_str().unwrap_or_default();
        if ports.len() > 1 && name.is_empty() {
            errors.required(format!("{at}.name"));
        } else if !name.is_empty() && !names.insert(name) {
            errors.duplicate(format!("{at}.name"), &port["name"]);
        }
        if port["port"].as_i64().unwrap_or(0) == 0 {
            errors.required(format!("{at}.port"));
        } else {
            errors.port(format!("{at}.port"), &port["port"]);
        }
        errors.one_of(format!("{at}.protocol"), &port["protocol"], &PROTOCOLS);
        if port["targetPort"].is_number() {
            errors.port(format!("{at}.targetPort"), &port["targetPort"]);
        }
        let node_port = port["nodePort"].as_i64().unwrap_or(0);
        if node_port != 0 {
            if kind == "ClusterIP" {
                errors.forbidden(
                    format!("{at}.nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                );
            } else if !(30000..=32767).contains(&node_port) {
                errors.invalid(
                    format!("{at}.nodePort"),
                    &port["nodePort"],
                    "provided port is not in the valid range. The range of valid ports is 30000-32767",
                );
            }
        }
    }
}
