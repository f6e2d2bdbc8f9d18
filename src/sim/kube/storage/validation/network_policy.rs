//! NetworkPolicies (networking.k8s.io/v1), as 1.35's `ValidateNetworkPolicySpec` checks them
//! (`pkg/apis/networking/validation/validation.go`): the pod selector, each rule's ports (a
//! number or a named port, an end port only after a lower number) and peers (exactly one
//! kind, an IP block alone, its exceptions strictly inside its CIDR), and the policy types.

use std::net::IpAddr;

use serde_json::{Value, json};

use super::errors::Errors;
use super::label_selector::label_selector;
use super::names::{port_name, port_number};
use super::service::valid_cidr;

/// In upstream's order (not sorted: the list is written out).
const PROTOCOLS: [&str; 3] = ["TCP", "UDP", "SCTP"];
const POLICY_TYPES: [&str; 2] = ["Ingress", "Egress"];
const CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// `ValidateNetworkPolicyPort`.
fn port(port: &Value, at: &str, errors: &mut Errors) {
    errors.one_of(format!("{at}.protocol"), &port["protocol"], &PROTOCOLS);
    let (number, end) = (&port["port"], &port["endPort"]);
    let end_at = format!("{at}.endPort");
    match number {
        Value::Null if !end.is_null() => errors.invalid(
            end_at,
            end,
            "may not be specified when `port` is not specified",
        ),
        Value::Null => {}
        Value::String(name) => {
            if !end.is_null() {
                errors.invalid(
                    &end_at,
                    end,
                    "may not be specified when `port` is non-numeric",
                );
            }
            for message in port_name(name) {
                errors.invalid(format!("{at}.port"), number, &message);
            }
        }
        _ => {
            let low = number.as_i64().unwrap_or(0);
            for message in port_number(low) {
                errors.invalid(format!("{at}.port"), number, &message);
            }
            if let Some(high) = end.as_i64() {
                if high < low {
                    errors.invalid(&end_at, end, "must be greater than or equal to `port`");
                }
                for message in port_number(high) {
                    errors.invalid(&end_at, end, &message);
                }
            }
        }
    }
}

/// A CIDR's address, masked to its prefix, and the prefix's length.
fn network(text: &str) -> Option<(IpAddr, u8)> {
    let (ip, bits) = text.trim().split_once('/')?;
    let bits: u8 = bits.parse().ok()?;
    let masked = match ip.parse().ok()? {
        IpAddr::V4(v4) => {
            let mask = u32::MAX
                .checked_shl(32u32.checked_sub(bits.into())?)
                .unwrap_or(0);
            IpAddr::from((u32::from(v4) & mask).to_be_bytes())
        }
        IpAddr::V6(v6) => {
            let mask = u128::MAX
                .checked_shl(128u32.checked_sub(bits.into())?)
                .unwrap_or(0);
            IpAddr::from((u128::from(v6) & mask).to_be_bytes())
        }
    };
    Some((masked, bits))
}

/// `cidr.Contains(except.IP)` and a longer prefix: a strict subset.
fn strict_subset(outer: (IpAddr, u8), inner: (IpAddr, u8)) -> bool {
    let contained = match (outer.0, inner.0) {
        (IpAddr::V4(_), IpAddr::V4(ip)) => {
            network(&format!("{ip}/{}", outer.1)).is_some_and(|n| n.0 == outer.0)
        }
        (IpAddr::V6(_), IpAddr::V6(ip)) => {
            network(&format!("{ip}/{}", outer.1)).is_some_and(|n| n.0 == outer.0)
        }
        _ => false,
    };
    contained && outer.1 < inner.1
}

/// `ValidateIPBlock` (CIDRs as the legacy, non-strict parser reads them: `StrictIPCIDRValidation`
/// is alpha in 1.35).
fn ip_block(block: &Value, at: &str, errors: &mut Errors) {
    let cidr = block["cidr"].as_str().unwrap_or_default();
    if cidr.is_empty() {
        return errors.required(format!("{at}.cidr"));
    }
    if !valid_cidr(cidr.trim()) {
        return errors.invalid(format!("{at}.cidr"), &block["cidr"], CIDR);
    }
    let Some(outer) = network(cidr) else { return };
    for (i, except) in block["except"].as_array().into_iter().flatten().enumerate() {
        let at = format!("{at}.except[{i}]");
        let text = except.as_str().unwrap_or_default();
        if !valid_cidr(text.trim()) {
            errors.invalid(&at, except, CIDR);
            continue;
        }
        if !network(text).is_some_and(|inner| strict_subset(outer, inner)) {
            errors.invalid(&at, except, "must be a strict subset of `cidr`");
        }
    }
}

/// `ValidateNetworkPolicyPeer`: exactly one kind of peer, or selectors together.
fn peer(peer: &Value, at: &str, errors: &mut Errors) {
    let mut kinds = 0;
    for selector in ["podSelector", "namespaceSelector"] {
        if !peer[selector].is_null() {
            kinds += 1;
            label_selector(&peer[selector], &format!("{at}.{selector}"), errors);
        }
    }
    if !peer["ipBlock"].is_null() {
        kinds += 1;
        ip_block(&peer["ipBlock"], &format!("{at}.ipBlock"), errors);
    }
    if kinds == 0 {
        errors.required_because(at, "must specify a peer");
    } else if kinds > 1 && !peer["ipBlock"].is_null() {
        errors.forbidden(at, "may not specify both ipBlock and another peer");
    }
}

fn items(value: &Value) -> impl Iterator<Item = (usize, &Value)> {
    value.as_array().into_iter().flatten().enumerate()
}

/// `ValidateNetworkPolicySpec`.
pub(crate) fn network_policy(object: &Value, errors: &mut Errors) {
    let spec = &object["spec"];
    label_selector(&spec["podSelector"], "spec.podSelector", errors);
    for (direction, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in items(&spec[direction]) {
            let at = format!("spec.{direction}[{i}]");
            for (j, each) in items(&rule["ports"]) {
                port(each, &format!("{at}.ports[{j}]"), errors);
            }
            for (j, each) in items(&rule[peers]) {
                peer(each, &format!("{at}.{peers}[{j}]"), errors);
            }
        }
    }
    let types = spec["policyTypes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if types.len() > POLICY_TYPES.len() {
        return errors.invalid(
            "spec.policyTypes",
            &json!(types),
            "may not specify more than two policyTypes",
        );
    }
    for (i, kind) in types.iter().enumerate() {
        let text = kind.as_str().unwrap_or_default();
        if !POLICY_TYPES.contains(&text) {
            errors.not_supported(format!("spec.policyTypes[{i}]"), text, &POLICY_TYPES);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(spec: Value) -> Vec<String> {
        let mut errors = Errors::default();
        network_policy(&json!({ "spec": spec }), &mut errors);
        errors
            .0
            .into_iter()
            .map(|(f, m)| format!("{f}: {m}"))
            .collect()
    }

    #[test]
    fn ports_and_end_ports() {
        let cases = [
            (
                json!({"ingress": [{"ports": [{"port": 70000, "protocol": "TCP"}]}]}),
                "spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
            ),
            (
                json!({"egress": [{"ports": [{"port": 8080, "endPort": 80, "protocol": "TCP"}]}]}),
                "spec.egress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`",
            ),
            (
                json!({"ingress": [{"ports": [{"port": "http", "endPort": 90, "protocol": "TCP"}]}]}),
                "spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
            ),
            (
                json!({"ingress": [{"ports": [{"endPort": 90, "protocol": "TCP"}]}]}),
                "spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is not specified",
            ),
            (
                json!({"ingress": [{"ports": [{"port": 53, "protocol": "ICMP"}]}]}),
                r#"spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP""#,
            ),
        ];
        for (spec, expected) in cases {
            assert_eq!(causes(spec), [expected]);
        }
        assert!(
            causes(
                json!({"ingress": [{"ports": [{"port": 80, "endPort": 90, "protocol": "UDP"}]}]})
            )
            .is_empty()
        );
    }

    #[test]
    fn peers_and_ip_blocks() {
        let from = |peer: Value| json!({"ingress": [{"from": [peer]}]});
        assert_eq!(
            causes(from(
                json!({"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24"]}})
            )),
            [
                r#"spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`"#
            ]
        );
        assert_eq!(
            causes(from(
                json!({"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.0.0.0/16"]}})
            )),
            [
                r#"spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.0.0.0/16": must be a strict subset of `cidr`"#
            ]
        );
        assert!(
            causes(from(
                json!({"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.0.3.0/24"]}})
            ))
            .is_empty()
        );
        assert_eq!(
            causes(from(
                json!({"ipBlock": {"cidr": "10.0.0.0/16"}, "podSelector": {}})
            )),
            ["spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer"]
        );
        assert_eq!(
            causes(from(json!({}))),
            ["spec.ingress[0].from[0]: Required value: must specify a peer"]
        );
        assert!(causes(from(json!({"podSelector": {}, "namespaceSelector": {}}))).is_empty());
    }

    #[test]
    fn policy_types() {
        assert_eq!(
            causes(json!({"policyTypes": ["Both"]})),
            [
                r#"spec.policyTypes[0]: Unsupported value: "Both": supported values: "Ingress", "Egress""#
            ]
        );
        assert_eq!(
            causes(json!({"policyTypes": ["Ingress", "Egress", "Ingress"]})),
            [
                r#"spec.policyTypes: Invalid value: ["Ingress","Egress","Ingress"]: may not specify more than two policyTypes"#
            ]
        );
    }
}
