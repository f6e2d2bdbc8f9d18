//! Security-group reachability: may traffic of a protocol and port go from one endpoint to
//! another? Egress of the source's groups and ingress of the destination's groups must both
//! allow it (CIDRs, group references including self, protocol `-1`, port ranges). Pure logic:
//! the twin decides NCCL's fate with it, and `ec2::reachable` answers with it on real data.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peer {
    Cidr(String),
    Group(String),
}

/// One rule of one group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SgRule {
    pub id: String,
    pub group: String,
    pub egress: bool,
    /// `tcp`, `udp`, `icmp`, or `-1` for all.
    pub protocol: String,
    pub from_port: i32,
    pub to_port: i32,
    pub peer: Peer,
}

/// Either side of a flow: the groups it is in, and its address when known (an instance).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endpoint {
    pub groups: Vec<String>,
    pub ip: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub allowed: bool,
    /// Ids of the source's egress rules that allow the flow.
    pub egress_rules: Vec<String>,
    /// Ids of the destination's ingress rules that allow the flow.
    pub ingress_rules: Vec<String>,
    /// Why, in words.
    pub reason: String,
}

fn parse_ipv4(text: &str) -> Option<u32> {
    let parts: Vec<u32> = text
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    (parts.len() == 4 && parts.iter().all(|p| *p < 256))
        .then(|| parts.iter().fold(0, |acc, p| (acc << 8) | p))
}

/// Whether `ip` is in `cidr`; `0.0.0.0/0` holds every address, even an unknown one.
pub fn cidr_contains(cidr: &str, ip: Option<&str>) -> bool {
    let Some((network, bits)) = cidr.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u32>() else {
        return false;
    };
    if bits == 0 {
        return true;
    }
    let (Some(network), Some(ip)) = (parse_ipv4(network), ip.and_then(parse_ipv4)) else {
        return false;
    };
    let mask = if bits >= 32 {
        u32::MAX
    } else {
        !(u32::MAX >> bits)
    };
    network & mask == ip & mask
}

fn protocol_matches(rule: &SgRule, protocol: &str, port: i32) -> bool {
    if rule.protocol == "-1" {
        return true;
    }
    rule.protocol.eq_ignore_ascii_case(protocol) && rule.from_port <= port && port <= rule.to_port
}

/// Whether the peer of a rule is the other side of the flow.
fn peer_matches(peer: &Peer, other: &Endpoint) -> bool {
    match peer {
        Peer::Group(group) => other.groups.contains(group),
        Peer::Cidr(cidr) => cidr_contains(cidr, other.ip.as_deref()),
    }
}

pub fn reachable(
    from: &Endpoint,
    to: &Endpoint,
    protocol: &str,
    port: i32,
    rules: &[SgRule],
) -> Verdict {
    let allowing = |egress: bool, own: &Endpoint, other: &Endpoint| -> Vec<String> {
        rules
            .iter()
            .filter(|r| {
                r.egress == egress
                    && own.groups.contains(&r.group)
                    && protocol_matches(r, protocol, port)
                    && peer_matches(&r.peer, other)
            })
            .map(|r| r.id.clone())
            .collect()
    };
    let egress_rules = allowing(true, from, to);
    let ingress_rules = allowing(false, to, from);
    let flow = format!("{protocol}/{port}");
    let reason = match (egress_rules.is_empty(), ingress_rules.is_empty()) {
        (false, false) => format!(
            "{flow} is allowed out by {} and in by {}",
            egress_rules.join(", "),
            ingress_rules.join(", ")
        ),
        (true, false) => format!(
            "no egress rule of {} allows {flow} to the destination",
            from.groups.join(", ")
        ),
        (false, true) => format!(
            "no ingress rule of {} allows {flow} from the source",
            to.groups.join(", ")
        ),
        (true, true) => format!(
            "neither an egress rule of {} nor an ingress rule of {} allows {flow}",
            from.groups.join(", "),
            to.groups.join(", ")
        ),
    };
    let unknown_address = to.ip.is_none() || from.ip.is_none();
    let reason = if unknown_address && egress_rules.is_empty() != ingress_rules.is_empty() {
        format!(
            "{reason} (an endpoint without an address matches CIDR rules only through 0.0.0.0/0)"
        )
    } else {
        reason
    };
    Verdict {
        allowed: !egress_rules.is_empty() && !ingress_rules.is_empty(),
        egress_rules,
        ingress_rules,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::{AUX_SG, AUX_SG_RULES, NODE_SG, NODE_SG_RULES, RuleFact};

    fn rules_of(group: &str, facts: &[RuleFact]) -> Vec<SgRule> {
        facts
            .iter()
            .map(|(id, egress, protocol, from, to, source, _)| SgRule {
                id: (*id).into(),
                group: group.into(),
                egress: *egress,
                protocol: (*protocol).into(),
                from_port: *from,
                to_port: *to,
                peer: match *source {
                    "self" => Peer::Group(group.into()),
                    s if s.starts_with("sg-") => Peer::Group(s.into()),
                    s => Peer::Cidr(s.into()),
                },
            })
            .collect()
    }

    fn gpu_node(ip: &str) -> Endpoint {
        Endpoint {
            groups: vec![NODE_SG.into(), AUX_SG.into()],
            ip: Some(ip.into()),
        }
    }

    fn lab_rules() -> Vec<SgRule> {
        let mut rules = rules_of(NODE_SG, &NODE_SG_RULES);
        rules.extend(rules_of(AUX_SG, &AUX_SG_RULES));
        rules
    }

    #[test]
    fn the_block_experiment_needs_both_paths_gone() {
        let (a, b) = (gpu_node("192.168.13.10"), gpu_node("192.168.14.20"));
        let all = lab_rules();
        assert!(reachable(&a, &b, "tcp", 43000, &all).allowed);

        let without_self: Vec<SgRule> = all
            .iter()
            .filter(|r| r.id != "sgr-0n0000000000000a")
            .cloned()
            .collect();
        let verdict = reachable(&a, &b, "tcp", 43000, &without_self);
        assert!(
            verdict.allowed,
            "the auxiliary SG's VPC allow keeps a path: {verdict:?}"
        );
        assert_eq!(verdict.ingress_rules, ["sgr-0a00000000000001"]);

        let without_both: Vec<SgRule> = without_self
            .iter()
            .filter(|r| r.id != "sgr-0a00000000000001")
            .cloned()
            .collect();
        let verdict = reachable(&a, &b, "tcp", 43000, &without_both);
        assert!(!verdict.allowed);
        assert!(
            verdict.reason.starts_with("no ingress rule"),
            "{}",
            verdict.reason
        );
    }

    #[test]
    fn ports_protocols_and_cidrs() {
        let all = lab_rules();
        let (a, b) = (gpu_node("192.168.13.10"), gpu_node("192.168.14.20"));
        assert!(reachable(&a, &b, "udp", 53, &all).allowed);
        let outsider = Endpoint {
            groups: vec!["sg-other".into()],
            ip: Some("10.0.0.1".into()),
        };
        assert!(
            !reachable(&outsider, &b, "tcp", 43000, &all).allowed,
            "no rule admits 10.0.0.1"
        );
        assert!(cidr_contains("192.168.0.0/16", Some("192.168.21.118")));
        assert!(!cidr_contains("192.168.12.0/22", Some("192.168.16.1")));
        assert!(cidr_contains("0.0.0.0/0", None));
        assert!(!cidr_contains("garbage", Some("1.2.3.4")));
    }
}
