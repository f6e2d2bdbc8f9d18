//! The warnings a write's strategy adds (`Warning: 299 - "..."` headers, after field
//! validation's): a Service's (`pkg/api/service/warnings.go`, `GetWarningsForService`), a new
//! Pod's and a new pod template's (`pkg/api/pod/warnings.go`; the pod strategy's
//! `WarningsOnCreate`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde_json::Value;

use super::resources::ResourceType;
use super::validation::errors::quoted;
use super::validation::names::dns_label;
use super::validation::service::strings;

/// The warnings of a create.
pub(crate) fn on_create(resource: &ResourceType, object: &Value) -> Vec<String> {
    let template = match (resource.group.as_str(), resource.kind.as_str()) {
        ("", "Service") => return service(object),
        ("", "Pod") => return pod(object),
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") | ("batch", "Job") => {
            "spec.template"
        }
        ("batch", "CronJob") => "spec.jobTemplate.spec.template",
        _ => return Vec::new(),
    };
    let mut spec = object;
    for part in template.split('.') {
        spec = &spec[part];
    }
    pod_spec(&spec["spec"], &format!("{template}.spec"))
}

/// The warnings of an update: a Service's (the pod strategy gives none on update).
pub(crate) fn on_update(resource: &ResourceType, object: &Value) -> Vec<String> {
    match (resource.group.as_str(), resource.kind.as_str()) {
        ("", "Service") => service(object),
        _ => Vec::new(),
    }
}

/// `WarningsOnCreate` of the pod strategy: a name that is not a DNS label, then
/// `GetWarningsForPod`'s rules the twin carries (the negative grace period).
fn pod(object: &Value) -> Vec<String> {
    let mut warnings = Vec::new();
    let messages = dns_label(object["metadata"]["name"].as_str().unwrap_or_default());
    if !messages.is_empty() {
        warnings.push(format!(
            "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [{}]",
            messages.join(" ")
        ));
    }
    warnings.extend(pod_spec(&object["spec"], "spec"));
    warnings
}

/// `warningsForPodSpecAndMeta`: a negative termination grace period.
fn pod_spec(spec: &Value, path: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    if spec["terminationGracePeriodSeconds"]
        .as_i64()
        .is_some_and(|g| g < 0)
    {
        warnings.push(format!(
            "{path}.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"
        ));
    }
    warnings
}

/// `GetWarningsForService`, less its `externalIPs` deprecation and `trafficDistribution`
/// rules (newer than 1.35 in the copy read).
fn service(object: &Value) -> Vec<String> {
    let spec = &object["spec"];
    let kind = spec["type"].as_str().unwrap_or_default();
    let mut warnings = Vec::new();
    if !object["metadata"]["annotations"]["service.kubernetes.io/topology-aware-hints"].is_null() {
        warnings.push("annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead".to_string());
    }
    let cluster_ip = spec["clusterIP"].as_str().unwrap_or_default();
    if !cluster_ip.is_empty() && cluster_ip != "None" {
        for (i, ip) in strings(&spec["clusterIPs"]).iter().enumerate() {
            warnings.extend(ip_warning(&format!("spec.clusterIPs[{i}]"), ip));
        }
    }
    let headless = kind == "ClusterIP" && cluster_ip == "None";
    let external_ips = strings(&spec["externalIPs"]);
    let load_balancer_ip = spec["loadBalancerIP"].as_str().unwrap_or_default();
    if headless {
        if !load_balancer_ip.is_empty() {
            warnings.push("spec.loadBalancerIP is ignored for headless services".into());
        }
        if !external_ips.is_empty() {
            warnings.push("spec.externalIPs is ignored for headless services".into());
        }
        if spec["sessionAffinity"]
            .as_str()
            .is_some_and(|a| a != "None")
        {
            warnings.push("spec.SessionAffinity is ignored for headless services".into());
        }
    }
    for (i, ip) in external_ips.iter().enumerate() {
        warnings.extend(ip_warning(&format!("spec.externalIPs[{i}]"), ip));
    }
    if !load_balancer_ip.is_empty() {
        warnings.extend(ip_warning("spec.loadBalancerIP", load_balancer_ip));
    }
    for (i, cidr) in strings(&spec["loadBalancerSourceRanges"])
        .iter()
        .enumerate()
    {
        warnings.extend(cidr_warning(
            &format!("spec.loadBalancerSourceRanges[{i}]"),
            cidr,
        ));
    }
    if kind == "ExternalName" && !external_ips.is_empty() {
        warnings.push("spec.externalIPs is ignored when spec.type is \"ExternalName\"".into());
    }
    if kind != "ExternalName" && spec["externalName"].as_str().is_some_and(|n| !n.is_empty()) {
        warnings.push("spec.externalName is ignored when spec.type is not \"ExternalName\"".into());
    }
    warnings
}

/// `GetWarningsForIP`: an IPv6 address not in RFC 5952's form (Rust prints that form; an
/// IPv4 address with leading zeros does not parse here and is refused by validation).
fn ip_warning(path: &str, text: &str) -> Option<String> {
    let ip = text.parse::<Ipv6Addr>().ok()?;
    let canonical = ip.to_string();
    (canonical != text).then(|| {
        format!(
            "{path}: IPv6 address {} is not in RFC 5952 canonical format ({}), which may cause controller apply-loops",
            quoted(text),
            quoted(&canonical)
        )
    })
}

/// The network of `ip` with `bits` of prefix.
fn network(ip: IpAddr, bits: u32) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask))
        }
        IpAddr::V6(v6) => {
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))
        }
    }
}

/// `GetWarningsForCIDR`: bits set past the prefix make the value ambiguous.
fn cidr_warning(path: &str, text: &str) -> Option<String> {
    let (address, bits) = text.split_once('/')?;
    let ip = address.parse::<IpAddr>().ok()?;
    let bits = bits.parse::<u32>().ok()?;
    let width = if ip.is_ipv4() { 32 } else { 128 };
    if bits > width {
        return None;
    }
    let net = network(ip, bits);
    (net != ip).then(|| {
        format!(
            "{path}: CIDR value {} is ambiguous in this context (should be {} or {}?)",
            quoted(text),
            quoted(&format!("{net}/{bits}")),
            quoted(&format!("{ip}/{width}"))
        )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn services_warn_in_the_servers_words() {
        let warnings = service(&json!({"spec": {
            "type": "ClusterIP",
            "clusterIP": "10.100.0.5",
            "clusterIPs": ["10.100.0.5"],
            "externalName": "example.com",
            "loadBalancerSourceRanges": ["10.0.0.1/16", "10.1.0.0/16"],
        }}));
        assert_eq!(
            warnings,
            [
                r#"spec.loadBalancerSourceRanges[0]: CIDR value "10.0.0.1/16" is ambiguous in this context (should be "10.0.0.0/16" or "10.0.0.1/32"?)"#,
                r#"spec.externalName is ignored when spec.type is not "ExternalName""#,
            ]
        );
    }

    #[test]
    fn a_negative_grace_period_is_warned_of_on_create() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"terminationGracePeriodSeconds": -5}});
        assert_eq!(
            super::pod(&pod),
            [
                "spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"
            ]
        );
    }
}
