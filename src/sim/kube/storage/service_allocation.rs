//! What the Service registry does before it validates (pkg/registry/core/service/storage):
//! the IP family fields, a cluster IP from the service range and node ports from theirs, each
//! refused alone (422, or 500 for the health check's port) when taken or out of range; an
//! update keeps what was allocated and drops what the new type no longer needs.
//!
//! Ranges: EKS's default service range 10.100.0.0/16 (the lab's `serviceIpv4Cidr`) and
//! Kubernetes' node ports 30000-32767. Dynamic picks come from the upper part of each range
//! first (KEP-3070: the lower 256 addresses and 86 ports are left for static requests), and
//! deterministically from the Service's name, so a rehearsal shows the same IPs every time.

use std::net::Ipv4Addr;

use serde_json::{Value, json};

use super::state::KubeState;
use super::state::built_in_key;
use super::status::ApiError;
use super::validation::errors::Errors;
use super::validation::service::{cluster_ips, strings};

/// The lab's service range (EKS picks 10.100.0.0/16 for a VPC outside 10/8).
const SERVICE_NETWORK: Ipv4Addr = Ipv4Addr::new(10, 100, 0, 0);
const SERVICE_PREFIX: u32 = 16;
/// `calculateRangeOffset` for a /16: min(max(16, 65536/16), 256).
const STATIC_IPS: u32 = 256;
const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;
/// `min(max(16, 2768/32), 128)`.
const STATIC_PORTS: i64 = 86;

/// [`strings`] owned, for a spec about to change.
fn owned(value: &Value) -> Vec<String> {
    strings(value).into_iter().map(str::to_string).collect()
}

/// FNV-1a of the Service's key: where its dynamic picks start.
fn seed(object: &Value) -> u64 {
    let key = format!(
        "{}/{}",
        object["metadata"]["namespace"].as_str().unwrap_or_default(),
        object["metadata"]["name"].as_str().unwrap_or_default()
    );
    key.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What every other Service holds: its cluster IPs and node ports.
struct Taken {
    ips: Vec<String>,
    ports: Vec<i64>,
}

fn taken(state: &KubeState, object: &Value) -> Taken {
    let (namespace, name) = (
        &object["metadata"]["namespace"],
        &object["metadata"]["name"],
    );
    let others = state
        .store
        .list(&built_in_key("services"), None)
        .filter(|s| s["metadata"]["namespace"] != *namespace || s["metadata"]["name"] != *name);
    let mut taken = Taken {
        ips: Vec::new(),
        ports: Vec::new(),
    };
    for service in others {
        taken.ips.extend(owned(&service["spec"]["clusterIPs"]));
        for port in service["spec"]["ports"].as_array().into_iter().flatten() {
            taken
                .ports
                .extend(port["nodePort"].as_i64().filter(|p| *p != 0));
        }
        taken.ports.extend(
            service["spec"]["healthCheckNodePort"]
                .as_i64()
                .filter(|p| *p != 0),
        );
    }
    taken
}

fn invalid(object: &Value, field: String, value: Value, detail: &str) -> ApiError {
    let mut errors = Errors::default();
    errors.invalid(field, &value, detail);
    refused(object, errors)
}

fn refused(object: &Value, errors: Errors) -> ApiError {
    errors.into_invalid(
        "Service",
        object["metadata"]["name"].as_str().unwrap_or_default(),
    )
}

/// Whether `ip` is a host address of the service range (not its network or broadcast).
fn in_range(ip: &str) -> bool {
    let Ok(ip) = ip.parse::<Ipv4Addr>() else {
        return false;
    };
    let (ip, network) = (u32::from(ip), u32::from(SERVICE_NETWORK));
    let size = 1u32 << (32 - SERVICE_PREFIX);
    ip > network && ip < network + size - 1
}

fn pick_ip(object: &Value, taken: &Taken) -> Result<String, ApiError> {
    let size = (1u32 << (32 - SERVICE_PREFIX)) - 2;
    let dynamic = size - STATIC_IPS;
    let start = (seed(object) % u64::from(dynamic)) as u32;
    // The upper part first, then the lower, as the allocator falls back.
    let offsets = (0..dynamic)
        .map(|i| STATIC_IPS + (start + i) % dynamic)
        .chain(0..STATIC_IPS);
    offsets
        .map(|offset| Ipv4Addr::from(u32::from(SERVICE_NETWORK) + 1 + offset).to_string())
        .find(|ip| !taken.ips.contains(ip))
        .ok_or_else(|| ApiError::internal("failed to allocate a serviceIP: range is full"))
}

fn pick_port(object: &Value, taken: &[i64]) -> Option<i64> {
    let (low, high) = (*NODE_PORTS.start(), *NODE_PORTS.end());
    let dynamic = high - low + 1 - STATIC_PORTS;
    let start = (seed(object) % dynamic as u64) as i64;
    (0..dynamic)
        .map(|i| low + STATIC_PORTS + (start + i) % dynamic)
        .chain(low..low + STATIC_PORTS)
        .find(|port| !taken.contains(port))
}

/// `portallocator`'s refusal of a requested port, if it refuses it.
fn port_refusal(port: i64, taken: &[i64]) -> Option<String> {
    if !NODE_PORTS.contains(&port) {
        return Some(format!(
            "provided port is not in the valid range. The range of valid ports is {}-{}",
            NODE_PORTS.start(),
            NODE_PORTS.end()
        ));
    }
    taken
        .contains(&port)
        .then(|| "provided port is already allocated".to_string())
}

fn needs_cluster_ip(spec: &Value) -> bool {
    spec["type"] != "ExternalName"
}

fn needs_node_ports(spec: &Value) -> bool {
    spec["type"] == "NodePort" || spec["type"] == "LoadBalancer"
}

fn needs_health_check(spec: &Value) -> bool {
    spec["type"] == "LoadBalancer" && spec["externalTrafficPolicy"] == "Local"
}

fn remove(spec: &mut Value, field: &str) {
    if let Some(map) = spec.as_object_mut() {
        map.remove(field);
    }
}

/// `dropTypeDependentFields` and `patchAllocatedValues`: what an update leaves out that was
/// allocated is kept; what the new type does not use, unchanged from the old, is dropped.
fn carry_over(old: &Value, spec: &mut Value) {
    if needs_cluster_ip(old) && !needs_cluster_ip(spec) {
        for field in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            if spec[field] == old[field] {
                remove(spec, field);
            }
        }
    }
    if needs_cluster_ip(old)
        && needs_cluster_ip(spec)
        && spec["clusterIP"].as_str().is_none_or(str::is_empty)
    {
        spec["clusterIP"] = old["clusterIP"].clone();
        spec["clusterIPs"] = old["clusterIPs"].clone();
    }
    // `normalizeClusterIPs` on update: a client that changed only `clusterIP` changed both.
    let same_ips = spec["clusterIPs"] == old["clusterIPs"];
    if spec["clusterIP"] != old["clusterIP"] && same_ips {
        match spec["clusterIP"].as_str().filter(|ip| !ip.is_empty()) {
            Some(ip) => spec["clusterIPs"] = json!([ip]),
            None => remove(spec, "clusterIPs"),
        }
    }
    let old_ports = old["ports"].as_array().cloned().unwrap_or_default();
    let (had, has) = (needs_node_ports(old), needs_node_ports(spec));
    let ports = spec.get_mut("ports").and_then(Value::as_array_mut);
    for port in ports.into_iter().flatten() {
        let previous = old_ports.iter().find(|p| p["name"] == port["name"]);
        let same = previous.is_some_and(|p| p["nodePort"] == port["nodePort"]);
        if had && !has && same {
            remove(port, "nodePort");
        } else if had
            && has
            && port["nodePort"].as_i64().unwrap_or(0) == 0
            && let Some(previous) = previous
        {
            port["nodePort"] = previous["nodePort"].clone();
        }
    }
    if needs_health_check(old) && spec["healthCheckNodePort"].as_i64().unwrap_or(0) == 0 {
        spec["healthCheckNodePort"] = old["healthCheckNodePort"].clone();
    }
    if !needs_health_check(spec)
        && needs_health_check(old)
        && spec["healthCheckNodePort"] == old["healthCheckNodePort"]
    {
        remove(spec, "healthCheckNodePort");
    }
    if old["type"] == "LoadBalancer" && spec["type"] != "LoadBalancer" {
        for field in ["allocateLoadBalancerNodePorts", "loadBalancerClass"] {
            if spec[field] == old[field] {
                remove(spec, field);
            }
        }
    }
    if needs_node_ports(old)
        && !needs_node_ports(spec)
        && spec["externalTrafficPolicy"] == old["externalTrafficPolicy"]
    {
        remove(spec, "externalTrafficPolicy");
    }
}

/// `normalizeClusterIPs`: `clusterIP` and `clusterIPs` agree before anyone looks at them.
fn normalize_cluster_ips(spec: &mut Value) {
    let ip = spec["clusterIP"].as_str().unwrap_or_default().to_string();
    let ips = owned(&spec["clusterIPs"]);
    if !ip.is_empty() && ips.is_empty() {
        spec["clusterIPs"] = json!([ip]);
    } else if ip.is_empty() && !ips.is_empty() {
        spec["clusterIP"] = json!(ips[0]);
    }
}

/// `initIPFamilyFields` for the single-stack IPv4 lab.
fn family_fields(object: &Value, spec: &mut Value) -> Result<(), ApiError> {
    let mut errors = Errors::default();
    cluster_ips(spec, &mut errors);
    if !errors.is_empty() {
        return Err(refused(object, errors));
    }
    if spec["ipFamilyPolicy"] == "SingleStack" {
        for (field, what) in [("clusterIPs", "cluster IPs"), ("ipFamilies", "IP families")] {
            if strings(&spec[field]).len() > 1 {
                return Err(invalid(
                    object,
                    "spec.ipFamilyPolicy".into(),
                    spec["ipFamilyPolicy"].clone(),
                    &format!(
                        "must be 'RequireDualStack' or 'PreferDualStack' when multiple {what} are specified"
                    ),
                ));
            }
        }
    }
    for (i, ip) in strings(&spec["clusterIPs"]).iter().enumerate() {
        if ip.parse::<std::net::Ipv6Addr>().is_ok() {
            return Err(invalid(
                object,
                format!("spec.clusterIPs[{i}]"),
                spec["clusterIPs"].clone(),
                "IPv6 is not configured on this cluster",
            ));
        }
    }
    for (i, family) in strings(&spec["ipFamilies"]).iter().enumerate() {
        if *family == "IPv6" {
            return Err(invalid(
                object,
                format!("spec.ipFamilies[{i}]"),
                json!(family),
                "not configured on this cluster",
            ));
        }
    }
    if spec["ipFamilyPolicy"] == "RequireDualStack" {
        return Err(invalid(
            object,
            "spec.ipFamilyPolicy".into(),
            spec["ipFamilyPolicy"].clone(),
            "this cluster is not configured for dual-stack services",
        ));
    }
    if spec["ipFamilyPolicy"].is_null() {
        spec["ipFamilyPolicy"] = json!("SingleStack");
    }
    if spec["ipFamilies"].as_array().is_none_or(Vec::is_empty) {
        spec["ipFamilies"] = json!(["IPv4"]);
    }
    Ok(())
}

/// A cluster IP: the one asked for, if free and in range, else the next free one.
fn cluster_ip(
    object: &Value,
    spec: &mut Value,
    old: Option<&Value>,
    taken: &Taken,
) -> Result<(), ApiError> {
    let ips = owned(&spec["clusterIPs"]);
    let kept = old.is_some_and(|o| owned(&o["clusterIPs"]) == ips);
    match ips.first().map(String::as_str) {
        Some("None") => {}
        _ if kept => {}
        Some(ip) => {
            let refusal = if !in_range(ip) {
                Some("the provided network does not match the current range")
            } else if taken.ips.iter().any(|t| t == ip) {
                Some("provided IP is already allocated")
            } else {
                None
            };
            if let Some(why) = refusal {
                return Err(invalid(
                    object,
                    "spec.clusterIPs".into(),
                    spec["clusterIPs"].clone(),
                    &format!("failed to allocate IP {ip}: {why}"),
                ));
            }
        }
        None => {
            let ip = pick_ip(object, taken)?;
            spec["clusterIP"] = json!(ip);
            spec["clusterIPs"] = json!([ip]);
        }
    }
    Ok(())
}

/// `initNodePorts`: ports with the same number share a node port; what is asked for is
/// checked, the rest picked.
fn node_ports(object: &Value, spec: &mut Value, taken: &mut Vec<i64>) -> Result<(), ApiError> {
    let allocate = spec["type"] != "LoadBalancer" || spec["allocateLoadBalancerNodePorts"] != false;
    let mut by_port: Vec<(i64, i64)> = Vec::new();
    let count = spec["ports"].as_array().map_or(0, Vec::len);
    for i in 0..count {
        let port = &spec["ports"][i];
        let (number, requested) = (
            port["port"].as_i64().unwrap_or(0),
            port["nodePort"].as_i64().unwrap_or(0),
        );
        if requested == 0 && !allocate {
            continue;
        }
        if let Some((_, shared)) = by_port.iter().find(|(n, _)| *n == number)
            && (requested == 0 || requested == *shared)
        {
            spec["ports"][i]["nodePort"] = json!(shared);
            continue;
        }
        let chosen = if requested != 0 {
            // The Service's own ports are not in `taken`: keeping one is no conflict.
            if let Some(why) = port_refusal(requested, taken) {
                return Err(invalid(
                    object,
                    format!("spec.ports[{i}].nodePort"),
                    json!(requested),
                    &why,
                ));
            }
            requested
        } else {
            pick_port(object, taken)
                .ok_or_else(|| ApiError::internal("failed to allocate a nodePort: range is full"))?
        };
        taken.push(chosen);
        by_port.push((number, chosen));
        spec["ports"][i]["nodePort"] = json!(chosen);
    }
    Ok(())
}

fn health_check_port(
    object: &Value,
    spec: &mut Value,
    old: Option<&Value>,
    taken: &mut Vec<i64>,
) -> Result<(), ApiError> {
    if !needs_health_check(spec) {
        return Ok(());
    }
    let requested = spec["healthCheckNodePort"].as_i64().unwrap_or(0);
    if old.is_some_and(|o| o["spec"]["healthCheckNodePort"].as_i64() == Some(requested))
        && requested != 0
    {
        return Ok(());
    }
    if requested != 0 {
        if let Some(why) = port_refusal(requested, taken) {
            return Err(ApiError::internal(format!(
                "failed to allocate requested HealthCheck NodePort {requested}: {why}"
            )));
        }
        taken.push(requested);
    } else {
        let port = pick_port(object, taken).ok_or_else(|| {
            ApiError::internal("failed to allocate a HealthCheck NodePort 0: range is full")
        })?;
        taken.push(port);
        spec["healthCheckNodePort"] = json!(port);
    }
    Ok(())
}

/// Allocates what a Service being created (`old` None) or updated needs, before validation.
pub(crate) fn allocate(
    state: &KubeState,
    object: &mut Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    let mut spec = object["spec"].take();
    let result = allocate_spec(state, object, &mut spec, old);
    object["spec"] = spec;
    result
}

fn allocate_spec(
    state: &KubeState,
    object: &Value,
    spec: &mut Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    if let Some(old) = old {
        carry_over(&old["spec"], spec);
    }
    normalize_cluster_ips(spec);
    if !needs_cluster_ip(spec) {
        return Ok(());
    }
    family_fields(object, spec)?;
    let mut taken = taken(state, object);
    cluster_ip(object, spec, old.map(|o| &o["spec"]), &taken)?;
    if needs_node_ports(spec) {
        node_ports(object, spec, &mut taken.ports)?;
    }
    health_check_port(object, spec, old, &mut taken.ports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_holds_host_addresses_only() {
        assert!(in_range("10.100.0.1"));
        assert!(in_range("10.100.255.254"));
        assert!(!in_range("10.100.0.0"));
        assert!(!in_range("10.100.255.255"));
        assert!(!in_range("10.0.0.1"));
    }
}
