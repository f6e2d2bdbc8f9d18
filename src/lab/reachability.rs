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

/// Either side of a flow: the groups it is in, and its address when known (an instance, or a
/// network outside the VPC such as hybrid nodes' `10.80.0.0/16`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endpoint {
    pub groups: Vec<String>,
    pub ip: Option<String>,
    /// Outside the VPC (an on-premises network): no security group stands on its side; its own
    /// firewall does, which AWS cannot show.
    pub outside: bool,
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

/// Whether `ip` (an address, or a whole network `10.80.0.0/16`) is in `cidr`; `0.0.0.0/0` holds
/// every address, even an unknown one.
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
    // A network is inside when the rule's prefix is no longer than its own and covers its start.
    let (ip, ip_bits) = match ip.map(|ip| ip.split_once('/').unwrap_or((ip, "32"))) {
        Some((address, prefix)) => (Some(address), prefix.parse::<u32>().unwrap_or(32)),
        None => (None, 32),
    };
    if ip_bits < bits {
        return false;
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
    if from.outside || to.outside {
        return across_the_border(from, to, &flow, egress_rules, ingress_rules);
    }
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

/// A flow with one side outside the VPC: only the VPC side's groups are AWS's to judge; the
/// other side's firewall is named as what remains to check.
fn across_the_border(
    from: &Endpoint,
    to: &Endpoint,
    flow: &str,
    egress_rules: Vec<String>,
    ingress_rules: Vec<String>,
) -> Verdict {
    let network = |e: &Endpoint| e.ip.clone().unwrap_or_else(|| "the remote network".into());
    let (allowed, reason) = match (from.outside, to.outside) {
        (true, true) => (
            false,
            format!(
                "both {} and {} are outside the VPC: no security group decides {flow} between them",
                network(from),
                network(to)
            ),
        ),
        (true, false) if ingress_rules.is_empty() => (
            false,
            format!(
                "no ingress rule of {} allows {flow} from {}",
                to.groups.join(", "),
                network(from)
            ),
        ),
        (true, false) => (
            true,
            format!(
                "{flow} from {} is allowed in by {}; {}'s own firewall must let it out",
                network(from),
                ingress_rules.join(", "),
                network(from)
            ),
        ),
        (false, true) if egress_rules.is_empty() => (
            false,
            format!(
                "no egress rule of {} allows {flow} to {}",
                from.groups.join(", "),
                network(to)
            ),
        ),
        (false, true) => (
            true,
            format!(
                "{flow} to {} is allowed out by {}; {}'s own firewall must let it in",
                network(to),
                egress_rules.join(", "),
                network(to)
            ),
        ),
        (false, false) => unreachable!("one side is outside"),
    };
    Verdict {
        allowed,
        egress_rules,
        ingress_rules,
        reason,
    }
}

/// Whether EFA's SRD traffic may go from one instance to another. AWS matches it only by
/// rules of protocol `-1` (All traffic) that name a security group, never by CIDR rules, so a
/// group with `egress 0.0.0.0/0` still drops it: "An EFA requires a security group that allows
/// all inbound and outbound traffic to and from the security group itself" (EC2 User Guide,
/// efa-start; gardener/gardener-extension-provider-aws#1832).
pub fn efa_reachable(from: &Endpoint, to: &Endpoint, rules: &[SgRule]) -> Verdict {
    let allowing = |egress: bool, own: &Endpoint, other: &Endpoint| -> Vec<String> {
        rules
            .iter()
            .filter(|r| {
                r.egress == egress
                    && own.groups.contains(&r.group)
                    && r.protocol == "-1"
                    && matches!(&r.peer, Peer::Group(group) if other.groups.contains(group))
            })
            .map(|r| r.id.clone())
            .collect()
    };
    let egress_rules = allowing(true, from, to);
    let ingress_rules = allowing(false, to, from);
    let reason = match (egress_rules.is_empty(), ingress_rules.is_empty()) {
        (false, false) => format!(
            "EFA traffic is allowed out by {} and in by {}",
            egress_rules.join(", "),
            ingress_rules.join(", ")
        ),
        (true, _) => format!(
            "no All-traffic egress rule of {} names the destination's security group (EFA needs one; CIDR rules do not carry it)",
            from.groups.join(", ")
        ),
        (false, true) => format!(
            "no All-traffic ingress rule of {} names the source's security group (EFA needs one; CIDR rules do not carry it)",
            to.groups.join(", ")
        ),
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
            outside: false,
        }
    }

    #[test]
    fn a_remote_network_is_judged_by_the_vpc_side_only() {
        let remote = Endpoint {
            groups: Vec::new(),
            ip: Some("10.80.0.0/16".into()),
            outside: true,
        };
        let cluster = Endpoint {
            groups: vec!["sg-cluster".into()],
            ip: None,
            outside: false,
        };
        let rule = |id: &str, egress: bool, cidr: &str, port: i32| SgRule {
            id: id.into(),
            group: "sg-cluster".into(),
            egress,
            protocol: "tcp".into(),
            from_port: port,
            to_port: port,
            peer: Peer::Cidr(cidr.into()),
        };
        let rules = vec![
            rule("sgr-in", false, "10.80.0.0/16", 443),
            rule("sgr-out", true, "0.0.0.0/0", 10250),
        ];
        let session_a = reachable(&remote, &cluster, "tcp", 443, &rules);
        assert!(session_a.allowed, "{session_a:?}");
        assert!(session_a.reason.contains("own firewall must let it out"));
        let session_b = reachable(&cluster, &remote, "tcp", 10250, &rules);
        assert!(session_b.allowed && session_b.egress_rules == ["sgr-out"]);
        // A rule for a narrower network does not cover the whole remote network.
        let narrow = vec![rule("sgr-in", false, "10.80.1.0/24", 443)];
        assert!(!reachable(&remote, &cluster, "tcp", 443, &narrow).allowed);
        assert!(cidr_contains("10.80.0.0/16", Some("10.80.1.11")));
        assert!(cidr_contains("10.0.0.0/8", Some("10.80.0.0/16")));
        assert!(!cidr_contains("10.80.1.0/24", Some("10.80.0.0/16")));
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
            outside: false,
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

    #[test]
    fn efa_needs_all_traffic_rules_naming_the_group_both_ways() {
        let node = |ip: &str| Endpoint {
            groups: vec!["sg-nodes".into()],
            ip: Some(ip.into()),
            outside: false,
        };
        let rule = |id: &str, egress: bool, protocol: &str, peer: Peer| SgRule {
            id: id.into(),
            group: "sg-nodes".into(),
            egress,
            protocol: protocol.into(),
            from_port: 0,
            to_port: 65535,
            peer,
        };
        let (a, b) = (node("10.0.1.5"), node("10.0.2.7"));
        let wide_open = vec![
            rule("sgr-out", true, "-1", Peer::Cidr("0.0.0.0/0".into())),
            rule("sgr-in", false, "-1", Peer::Group("sg-nodes".into())),
        ];
        let verdict = efa_reachable(&a, &b, &wide_open);
        assert!(!verdict.allowed, "egress 0.0.0.0/0 does not carry EFA");
        assert!(verdict.reason.contains("egress"), "{}", verdict.reason);
        let mut with_self = wide_open.clone();
        with_self.push(rule(
            "sgr-self-out",
            true,
            "-1",
            Peer::Group("sg-nodes".into()),
        ));
        assert!(efa_reachable(&a, &b, &with_self).allowed);
        let tcp_only = vec![
            rule("t-out", true, "tcp", Peer::Group("sg-nodes".into())),
            rule("t-in", false, "tcp", Peer::Group("sg-nodes".into())),
        ];
        assert!(!efa_reachable(&a, &b, &tcp_only).allowed);
    }
}
