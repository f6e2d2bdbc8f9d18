//! The ids the seed's Terraform apply gave its resources. When a runbook creates a resource
//! that matches a seed fact (the VPC by CIDR, a subnet by CIDR, a group by name, a baseline rule
//! by permission), the twin hands out the seed's id, so a lab deployed from `empty` is the same
//! world as scenario `deployed`, down to the ids the runbooks and snapshots show.

use super::state::{AwsState, Rule};
use crate::lab;

pub(crate) fn vpc(state: &AwsState, cidr: &str) -> Option<String> {
    (cidr == lab::VPC_CIDR && !state.vpcs.contains_key(lab::VPC_ID)).then(|| lab::VPC_ID.into())
}

/// `(id, name, public)` of the seed's subnet with this CIDR, when it is free.
pub(crate) fn subnet(state: &AwsState, cidr: &str) -> Option<(String, String, bool)> {
    lab::SUBNETS
        .iter()
        .find(|(id, c, ..)| *c == cidr && !state.subnets.contains_key(*id))
        .map(|(id, _, _, public, name)| ((*id).into(), (*name).into(), *public))
}

pub(crate) fn nat_gateway(state: &AwsState) -> Option<String> {
    (!state.nat_gateways.contains_key(lab::NAT_GATEWAY_ID)).then(|| lab::NAT_GATEWAY_ID.into())
}

pub(crate) fn security_group(state: &AwsState, name: &str) -> Option<String> {
    lab::SECURITY_GROUPS
        .iter()
        .find(|(id, n, ..)| *n == name && !state.groups.contains_key(*id))
        .map(|(id, ..)| (*id).into())
}

/// The baseline rule id for a rule with the same permission on the same group, when no live
/// rule holds it.
pub(crate) fn rule(state: &AwsState, rule: &Rule) -> Option<String> {
    let (_, _, _, facts) = lab::SECURITY_GROUPS
        .iter()
        .find(|(id, ..)| *id == rule.group_id)?;
    facts
        .iter()
        .find(|(_, egress, protocol, from, to, source, _)| {
            let (cidr, group) = match *source {
                "self" => (None, Some(rule.group_id.as_str())),
                s if s.starts_with("sg-") => (None, Some(s)),
                s => (Some(s), None),
            };
            *egress == rule.egress
                && *protocol == rule.protocol
                && *from == rule.from_port
                && *to == rule.to_port
                && cidr == rule.cidr.as_deref()
                && group == rule.referenced_group.as_deref()
        })
        .map(|(id, ..)| (*id).to_string())
        .filter(|id| !state.rules.iter().any(|r| r.id == *id))
}
