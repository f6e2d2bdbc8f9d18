//! Services, as 1.35's `ValidateService` and `ValidateServiceUpdate` check them: ports and
//! their names, the fields each type allows, cluster IPs and IP families, session affinity,
//! traffic policies. Allocation (which IP, which node port) is the registry's, in
//! `storage/service_allocation.rs`.

use std::collections::HashSet;
use std::net::IpAddr;

use serde_json::{Value, json};

use super::errors::Errors;
use super::metadata::labels;
use super::names::{dns_label, dns_subdomain, port_name, port_number, qualified_name};

const TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
const TRAFFIC_POLICIES: [&str; 2] = ["Cluster", "Local"];
const FAMILY_POLICIES: [&str; 3] = ["PreferDualStack", "RequireDualStack", "SingleStack"];
const LB_ONLY: &str = "may only be used when `type` is 'LoadBalancer'";
const EXTERNAL_NAME_ONLY: &str = "may not be set for ExternalName services";

/// The strings of a JSON list (`clusterIPs`, `ipFamilies`, `externalIPs`).
pub(crate) fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

fn headless(spec: &Value) -> bool {
    strings(&spec["clusterIPs"]) == ["None"]
}

fn kind(spec: &Value) -> &str {
    spec["type"].as_str().unwrap_or_default()
}

/// `ExternallyAccessible`.
pub(crate) fn externally_accessible(spec: &Value) -> bool {
    matches!(kind(spec), "LoadBalancer" | "NodePort")
        || (kind(spec) == "ClusterIP" && !strings(&spec["externalIPs"]).is_empty())
}

/// `validateServicePort`: names as DNS labels (unique, required when there are several),
/// the port, protocol, target port and application protocol.
fn port(port: &Value, at: &str, several: bool, names: &mut HashSet<String>, errors: &mut Errors) {
    match port["name"].as_str().filter(|n| !n.is_empty()) {
        None if several => errors.required(format!("{at}.name")),
        None => {}
        Some(name) => {
            for message in dns_label(name) {
                errors.invalid(format!("{at}.name"), &port["name"], &message);
            }
            if !names.insert(name.to_string()) {
                errors.duplicate(format!("{at}.name"), &port["name"]);
            }
        }
    }
    for message in port_number(port["port"].as_i64().unwrap_or(0)) {
        errors.invalid(
            format!("{at}.port"),
            &json!(port["port"].as_i64().unwrap_or(0)),
            &message,
        );
    }
    errors.one_of(format!("{at}.protocol"), &port["protocol"], &PROTOCOLS);
    let target = &port["targetPort"];
    let messages = match target {
        Value::String(name) => port_name(name),
        other => port_number(other.as_i64().unwrap_or(0)),
    };
    for message in messages {
        errors.invalid(format!("{at}.targetPort"), target, &message);
    }
    if let Some(protocol) = port["appProtocol"].as_str() {
        for message in qualified_name(protocol) {
            errors.invalid(format!("{at}.appProtocol"), &port["appProtocol"], &message);
        }
    }
}

/// `IsValidIP`.
pub(crate) fn ip_errors(text: &str) -> Option<&'static str> {
    text.parse::<IpAddr>()
        .is_err()
        .then_some("must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")
}

/// `ValidateServiceClusterIPsRelatedFields`, which the registry also runs before it allocates.
pub(crate) fn cluster_ips(spec: &Value, errors: &mut Errors) {
    if kind(spec) == "ExternalName" {
        return;
    }
    let ips = strings(&spec["clusterIPs"]);
    let field = "spec.clusterIPs";
    match spec["clusterIP"].as_str().filter(|ip| !ip.is_empty()) {
        Some(_) if ips.is_empty() => errors.required(field),
        Some(ip) if ips[0] != ip => {
            errors.invalid(
                field,
                &spec["clusterIPs"],
                "first value must match `clusterIP`",
            );
        }
        Some(_) => {}
        None if !ips.is_empty() => errors.invalid(
            field,
            &spec["clusterIPs"],
            "must be empty when `clusterIP` is not specified",
        ),
        None => {}
    }
    families(spec, errors);
    ip_values(spec, errors);
}

/// IP families: each known, none twice; the policy one of three.
fn families(spec: &Value, errors: &mut Errors) {
    let families = strings(&spec["ipFamilies"]);
    let mut seen = HashSet::new();
    for (i, family) in families.iter().enumerate() {
        errors.one_of(
            format!("spec.ipFamilies[{i}]"),
            &json!(family),
            &["IPv4", "IPv6"],
        );
        if !seen.insert(*family) {
            errors.duplicate(format!("spec.ipFamilies[{i}]"), &json!(family));
        }
    }
    errors.one_of(
        "spec.ipFamilyPolicy",
        &spec["ipFamilyPolicy"],
        &FAMILY_POLICIES,
    );
}

/// The cluster IPs themselves: addresses, at most one per family, of the families asked for.
fn ip_values(spec: &Value, errors: &mut Errors) {
    let ips = strings(&spec["clusterIPs"]);
    let families = strings(&spec["ipFamilies"]);
    let field = "spec.clusterIPs";
    let mut invalid = false;
    for (i, ip) in ips.iter().enumerate() {
        if i == 0 && *ip == "None" {
            if ips.len() > 1 {
                invalid = true;
                errors.invalid(
                    field,
                    &spec["clusterIPs"],
                    "'None' must be the first and only value",
                );
            }
            continue;
        }
        if let Some(message) = ip_errors(ip) {
            invalid = true;
            errors.invalid(format!("{field}[{i}]"), &json!(ip), message);
        }
    }
    if ips.len() > 2 {
        errors.invalid(field, &spec["clusterIPs"], "may only hold up to 2 values");
    }
    if invalid {
        return;
    }
    let v6 = |ip: &str| ip.parse::<IpAddr>().is_ok_and(|ip| ip.is_ipv6());
    if ips.len() > 1 && v6(ips[0]) == v6(ips[1]) {
        errors.invalid(
            field,
            &spec["clusterIPs"],
            "may specify no more than one IP for each IP family",
        );
    }
    if !headless(spec) {
        for (i, (ip, family)) in ips.iter().zip(&families).enumerate() {
            let wanted = match (*family, v6(ip)) {
                ("IPv4", true) => "IPv4",
                ("IPv6", false) => "IPv6",
                _ => continue,
            };
            errors.invalid(
                format!("{field}[{i}]"),
                &json!(ip),
                &format!("expected an {wanted} value as indicated by `ipFamilies[{i}]`"),
            );
        }
    }
}

/// What only some types allow, and what ExternalName requires.
fn type_fields(spec: &Value, errors: &mut Errors) {
    match kind(spec) {
        kind @ ("LoadBalancer" | "NodePort") if headless(spec) => errors.invalid(
            "spec.clusterIPs[0]",
            &json!("None"),
            &format!("may not be set to 'None' for {kind} services"),
        ),
        "ExternalName" => {
            for field in ["clusterIPs", "ipFamilies"] {
                if !strings(&spec[field]).is_empty() {
                    errors.forbidden(format!("spec.{field}"), EXTERNAL_NAME_ONLY);
                }
            }
            if !spec["ipFamilyPolicy"].is_null() {
                errors.forbidden("spec.ipFamilyPolicy", EXTERNAL_NAME_ONLY);
            }
            let name = spec["externalName"].as_str().unwrap_or_default();
            let cname = name.strip_suffix('.').unwrap_or(name);
            if cname.is_empty() {
                errors.required("spec.externalName");
            }
            for message in dns_subdomain(cname)
                .into_iter()
                .filter(|_| !cname.is_empty())
            {
                errors.invalid("spec.externalName", &json!(cname), &message);
            }
        }
        _ => {}
    }
}

/// Session affinity and its ClientIP timeout (1 to 86400 seconds).
fn affinity(spec: &Value, errors: &mut Errors) {
    errors.one_of(
        "spec.sessionAffinity",
        &spec["sessionAffinity"],
        &["ClientIP", "None"],
    );
    let timeout = &spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"];
    if spec["sessionAffinity"] == "ClientIP"
        && timeout.as_i64().is_some_and(|t| !(1..=86400).contains(&t))
    {
        errors.invalid(
            "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
            timeout,
            "must be greater than 0 and less than 86400",
        );
    }
}

/// Node ports: none on a ClusterIP Service, none twice for one protocol; then ports twice.
fn duplicates(spec: &Value, errors: &mut Errors) {
    let ports = spec["ports"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut node_ports = HashSet::new();
    let mut seen = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let node_port = port["nodePort"].as_i64().unwrap_or(0);
        if node_port != 0 && kind(spec) == "ClusterIP" {
            errors.forbidden(
                format!("spec.ports[{i}].nodePort"),
                "may not be used when `type` is 'ClusterIP'",
            );
        }
        if node_port != 0 && !node_ports.insert((port["protocol"].to_string(), node_port)) {
            errors.duplicate(format!("spec.ports[{i}].nodePort"), &port["nodePort"]);
        }
    }
    for (i, port) in ports.iter().enumerate() {
        let (protocol, number) = (&port["protocol"], port["port"].as_i64().unwrap_or(0));
        if !seen.insert((protocol.to_string(), number)) {
            // Newer servers show the internal ServicePort key as JSON.
            let key = json!({"Name": "", "Protocol": protocol, "AppProtocol": null, "Port": number, "TargetPort": 0, "NodePort": 0});
            errors.duplicate(format!("spec.ports[{i}]"), &key);
        }
    }
}

/// Source ranges, node-port allocation and the load balancer's class: LoadBalancer only.
fn load_balancer_fields(spec: &Value, errors: &mut Errors) {
    let balancer = kind(spec) == "LoadBalancer";
    let ranges = strings(&spec["loadBalancerSourceRanges"]);
    if !ranges.is_empty() {
        // Upstream's path, capital L and all.
        let path = "spec.LoadBalancerSourceRanges";
        if !balancer {
            errors.forbidden(path, LB_ONLY);
        }
        for (i, range) in ranges.iter().enumerate() {
            if !valid_cidr(range.trim()) {
                errors.invalid(
                    format!("{path}[{i}]"),
                    &json!(range.trim()),
                    "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                );
            }
        }
    }
    if !spec["allocateLoadBalancerNodePorts"].is_null() && !balancer {
        errors.forbidden("spec.allocateLoadBalancerNodePorts", LB_ONLY);
    }
    load_balancer_class(spec, errors);
}

/// `validateLoadBalancerClassField`'s checks of the class itself.
fn load_balancer_class(spec: &Value, errors: &mut Errors) {
    let class = &spec["loadBalancerClass"];
    match class.as_str() {
        Some(name) if kind(spec) == "LoadBalancer" => {
            for message in qualified_name(name) {
                errors.invalid("spec.loadBalancerClass", class, &message);
            }
        }
        Some(_) => errors.forbidden("spec.loadBalancerClass", LB_ONLY),
        None => {}
    }
}

/// The source ranges annotation, read where the field is not set.
fn source_ranges_annotation(object: &Value, errors: &mut Errors) {
    const KEY: &str = "service.beta.kubernetes.io/load-balancer-source-ranges";
    let Some(ranges) = object["metadata"]["annotations"][KEY].as_str() else {
        return;
    };
    if !strings(&object["spec"]["loadBalancerSourceRanges"]).is_empty() {
        return;
    }
    let path = format!("metadata.annotations[{KEY}]");
    if kind(&object["spec"]) != "LoadBalancer" {
        errors.forbidden(path.clone(), LB_ONLY);
    }
    for range in ranges
        .trim()
        .split(',')
        .filter(|_| !ranges.trim().is_empty())
    {
        if !valid_cidr(range.trim()) {
            errors.invalid(
                path.clone(),
                &json!(range.trim()),
                "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
            );
        }
    }
}

/// Both topology annotations, when set, agree.
fn topology_annotations(object: &Value, errors: &mut Errors) {
    let annotations = &object["metadata"]["annotations"];
    let hints = &annotations["service.kubernetes.io/topology-aware-hints"];
    let mode = &annotations["service.kubernetes.io/topology-mode"];
    if !hints.is_null() && !mode.is_null() && hints != mode {
        errors.invalid(
            "metadata.annotations[service.kubernetes.io/topology-mode]",
            mode,
            "must match annotations[service.kubernetes.io/topology-aware-hints] when both are specified",
        );
    }
}

pub(crate) fn valid_cidr(text: &str) -> bool {
    let Some((ip, bits)) = text.split_once('/') else {
        return false;
    };
    match (ip.parse::<IpAddr>(), bits.parse::<u8>()) {
        (Ok(IpAddr::V4(_)), Ok(bits)) => bits <= 32,
        (Ok(IpAddr::V6(_)), Ok(bits)) => bits <= 128,
        _ => false,
    }
}

/// External and internal traffic policies and the health check's node port.
fn traffic(spec: &Value, errors: &mut Errors) {
    let policy = &spec["externalTrafficPolicy"];
    if !externally_accessible(spec) {
        if policy.as_str().is_some_and(|p| !p.is_empty()) {
            errors.invalid(
                "spec.externalTrafficPolicy",
                policy,
                "may only be set for externally-accessible services",
            );
        }
    } else if policy.as_str().is_none_or(str::is_empty) {
        errors.required("spec.externalTrafficPolicy");
    } else {
        errors.one_of("spec.externalTrafficPolicy", policy, &TRAFFIC_POLICIES);
    }
    let health = &spec["healthCheckNodePort"];
    let health_port = health.as_i64().unwrap_or(0);
    if kind(spec) == "LoadBalancer" && policy == "Local" {
        if health_port == 0 {
            errors.required("spec.healthCheckNodePort");
        }
        for message in port_number(health_port)
            .into_iter()
            .filter(|_| health_port != 0)
        {
            errors.invalid("spec.healthCheckNodePort", health, &message);
        }
    } else if health_port != 0 {
        errors.invalid(
            "spec.healthCheckNodePort",
            health,
            "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
        );
    }
    errors.one_of(
        "spec.internalTrafficPolicy",
        &spec["internalTrafficPolicy"],
        &TRAFFIC_POLICIES,
    );
}

pub(crate) fn service(object: &Value, errors: &mut Errors) {
    let spec = &object["spec"];
    topology_annotations(object, errors);
    let ports = spec["ports"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if ports.is_empty() && !headless(spec) && kind(spec) != "ExternalName" {
        errors.required("spec.ports");
    }
    type_fields(spec, errors);
    let mut names = HashSet::new();
    for (i, item) in ports.iter().enumerate() {
        port(
            item,
            &format!("spec.ports[{i}]"),
            ports.len() > 1,
            &mut names,
            errors,
        );
    }
    labels(&spec["selector"], "spec.selector", errors);
    affinity(spec, errors);
    cluster_ips(spec, errors);
    for (i, ip) in strings(&spec["externalIPs"]).iter().enumerate() {
        let at = format!("spec.externalIPs[{i}]");
        match ip_errors(ip) {
            Some(message) => errors.invalid(at, &json!(ip), message),
            None => special_ip(ip, &at, errors),
        }
    }
    errors.one_of("spec.type", &spec["type"], &TYPES);
    duplicates(spec, errors);
    load_balancer_fields(spec, errors);
    source_ranges_annotation(object, errors);
    traffic(spec, errors);
}

/// `ValidateNonSpecialIP`.
fn special_ip(text: &str, at: &str, errors: &mut Errors) {
    let Ok(ip) = text.parse::<IpAddr>() else {
        return;
    };
    let value = json!(text);
    if ip.is_unspecified() {
        errors.invalid(at, &value, &format!("may not be unspecified ({text})"));
    }
    if ip.is_loopback() {
        errors.invalid(
            at,
            &value,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        );
    }
    let link_local = match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    };
    if link_local {
        errors.invalid(
            at,
            &value,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        );
    }
    let link_local_multicast = match ip {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    };
    if link_local_multicast {
        errors.invalid(
            at,
            &value,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        );
    }
}

/// `ValidateServiceUpdate`'s own rules: cluster IPs and families kept, the load balancer's
/// class kept, the health check's node port kept.
pub(crate) fn service_update(old: &Value, new: &Value, errors: &mut Errors) {
    let (before, after) = (&old["spec"], &new["spec"]);
    let external = |spec: &Value| kind(spec) == "ExternalName";
    let skipped = external(before) || external(after) || (headless(before) && headless(after));
    if !skipped {
        let (old_ips, new_ips) = (
            strings(&before["clusterIPs"]),
            strings(&after["clusterIPs"]),
        );
        let changed: Vec<usize> = if old_ips.len() == new_ips.len() {
            (0..old_ips.len())
                .filter(|i| old_ips[*i] != new_ips[*i])
                .collect()
        } else if !old_ips.is_empty() && new_ips.is_empty() {
            errors.invalid(
                "spec.clusterIPs[0]",
                &after["clusterIPs"],
                "primary clusterIP can not be unset",
            );
            Vec::new()
        } else if !old_ips.is_empty() && old_ips[0] != new_ips[0] {
            vec![0]
        } else {
            Vec::new()
        };
        for i in changed {
            errors.invalid(
                format!("spec.clusterIPs[{i}]"),
                &after["clusterIPs"],
                "may not change once set",
            );
        }
        let (old_families, new_families) = (
            strings(&before["ipFamilies"]),
            strings(&after["ipFamilies"]),
        );
        if !headless(before)
            && !headless(after)
            && old_families.len() == new_families.len()
            && old_families != new_families
        {
            errors.invalid(
                "spec.ipFamilies[0]",
                &after["ipFamilies"],
                "may not change once set",
            );
        }
    }
    if kind(before) == "LoadBalancer"
        && kind(after) == "LoadBalancer"
        && before["loadBalancerClass"] != after["loadBalancerClass"]
    {
        errors.invalid(
            "spec.loadBalancerClass",
            &after["loadBalancerClass"],
            "may not change once set",
        );
    }
    // Upstream checks the class again with the rest of the Service, so its errors show twice.
    load_balancer_class(after, errors);
    let needs_health =
        |spec: &Value| kind(spec) == "LoadBalancer" && spec["externalTrafficPolicy"] == "Local";
    if needs_health(before)
        && needs_health(after)
        && before["healthCheckNodePort"] != after["healthCheckNodePort"]
    {
        errors.forbidden("spec.healthCheckNodePort", "field is immutable");
    }
}
