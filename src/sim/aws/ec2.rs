//! EC2 over the query protocol: VPCs, subnets, NAT gateways, instances, security groups and
//! their rules (describe, authorize, revoke by permission or by rule id).

use std::collections::BTreeMap;

use super::error::AwsError;
use super::state::{AwsState, Rule};
use super::wire::{Xml, iso, members, numbered};
use super::{ec2_lifecycle, parameters, seed_ids};
use crate::lab;

pub(super) type Params = BTreeMap<String, String>;

pub(super) fn group_missing(id: &str) -> AwsError {
    AwsError::new(
        400,
        "InvalidGroup.NotFound",
        format!("The security group '{id}' does not exist"),
    )
}

/// `Filter.N.Name` / `Filter.N.Value.M` pairs.
pub(super) fn filters(params: &Params) -> Vec<(String, Vec<String>)> {
    members(params, "Filter")
        .iter()
        .filter_map(|filter| Some((filter.get("Name")?.clone(), filter.values("Value"))))
        .collect()
}

pub(super) fn rule_xml(xml: &mut Xml, rule: &Rule) {
    xml.open("item")
        .leaf("securityGroupRuleId", &rule.id)
        .leaf("groupId", &rule.group_id)
        .leaf("groupOwnerId", lab::ACCOUNT_ID)
        .leaf("isEgress", rule.egress)
        .leaf("ipProtocol", &rule.protocol)
        .leaf("fromPort", rule.from_port)
        .leaf("toPort", rule.to_port);
    if let Some(cidr) = &rule.cidr {
        xml.leaf("cidrIpv4", cidr);
    }
    if let Some(group) = &rule.referenced_group {
        xml.open("referencedGroupInfo")
            .leaf("groupId", group)
            .leaf("userId", lab::ACCOUNT_ID)
            .close("referencedGroupInfo");
    }
    xml.leaf("description", &rule.description)
        .raw("<tagSet/>")
        .close("item");
}

/// Rules grouped into IpPermissions by protocol and ports, as DescribeSecurityGroups shows them.
fn permissions_xml(xml: &mut Xml, tag: &str, rules: &[&Rule]) {
    xml.open(tag);
    let mut keys: Vec<(String, i32, i32)> = rules
        .iter()
        .map(|r| (r.protocol.clone(), r.from_port, r.to_port))
        .collect();
    keys.dedup();
    let mut seen = Vec::new();
    for key in keys {
        if seen.contains(&key) {
            continue;
        }
        seen.push(key.clone());
        let same: Vec<&&Rule> = rules
            .iter()
            .filter(|r| (r.protocol.clone(), r.from_port, r.to_port) == key)
            .collect();
        xml.open("item").leaf("ipProtocol", &key.0);
        if key.0 != "-1" {
            xml.leaf("fromPort", key.1).leaf("toPort", key.2);
        }
        xml.open("groups");
        for rule in same.iter().filter(|r| r.referenced_group.is_some()) {
            xml.open("item")
                .leaf("description", &rule.description)
                .leaf(
                    "groupId",
                    rule.referenced_group.as_deref().unwrap_or_default(),
                )
                .leaf("userId", lab::ACCOUNT_ID)
                .close("item");
        }
        xml.close("groups").open("ipRanges");
        for rule in same.iter().filter(|r| r.cidr.is_some()) {
            xml.open("item")
                .leaf("cidrIp", rule.cidr.as_deref().unwrap_or_default())
                .leaf("description", &rule.description)
                .close("item");
        }
        xml.close("ipRanges")
            .raw("<ipv6Ranges/><prefixListIds/>")
            .close("item");
    }
    xml.close(tag);
}

/// The rules a request's `IpPermissions.N.*` describe, for `group` in one direction.
fn requested_rules(
    state: &mut AwsState,
    params: &Params,
    group: &str,
    egress: bool,
) -> Result<Vec<Rule>, AwsError> {
    let mut rules = Vec::new();
    for permission in members(params, "IpPermissions") {
        let Some(protocol) = permission.get("IpProtocol") else {
            break;
        };
        let protocol = parameters::protocol(protocol)?;
        let port = |key: &str| -> Result<i32, AwsError> {
            match permission.get(key) {
                Some(v) => v.parse().map_err(|_| {
                    AwsError::new(
                        400,
                        "InvalidParameterValue",
                        format!("Invalid value '{v}' for {key}"),
                    )
                }),
                None if protocol == "-1" => Ok(-1),
                None => Err(AwsError::new(
                    400,
                    "MissingParameter",
                    format!("The request must contain the parameter {key} for protocol {protocol}"),
                )),
            }
        };
        let (from, to) = (port("FromPort")?, port("ToPort")?);
        parameters::ports(&protocol, from, to)?;
        let mut sources: Vec<(Option<String>, Option<String>, String)> = Vec::new();
        for range in permission.members("IpRanges") {
            let Some(cidr) = range.get("CidrIp") else {
                break;
            };
            parameters::ipv4_cidr(cidr)?;
            sources.push((Some(cidr.clone()), None, range.text("Description")));
        }
        // The CLI sends `UserIdGroupPairs`, older SDKs `Groups`.
        let pairs = [
            permission.members("Groups"),
            permission.members("UserIdGroupPairs"),
        ]
        .concat();
        for pair in pairs {
            let Some(source) = pair.get("GroupId") else {
                break;
            };
            if !state.groups.contains_key(source) {
                return Err(group_missing(source));
            }
            sources.push((None, Some(source.clone()), pair.text("Description")));
        }
        if sources.is_empty() {
            return Err(AwsError::new(
                400,
                "MissingParameter",
                "The request must contain the parameter ipPermissions (a CIDR range or a security group)",
            ));
        }
        for (cidr, referenced_group, description) in sources {
            rules.push(Rule {
                id: String::new(),
                group_id: group.to_string(),
                egress,
                protocol: protocol.clone(),
                from_port: from,
                to_port: to,
                cidr,
                referenced_group,
                description,
            });
        }
    }
    Ok(rules)
}

fn describe_permission(rule: &Rule) -> String {
    let peer = rule
        .cidr
        .clone()
        .or(rule.referenced_group.clone())
        .unwrap_or_default();
    let protocol = if rule.protocol == "-1" {
        "ALL".to_string()
    } else {
        rule.protocol.to_uppercase()
    };
    format!(
        "peer: {peer}, {protocol}, from port: {}, to port: {}, ALLOW",
        rule.from_port, rule.to_port
    )
}

/// The request's `GroupId`, which must name an existing group.
fn existing_group(state: &AwsState, params: &Params) -> Result<String, AwsError> {
    let group = params.get("GroupId").cloned().ok_or_else(|| {
        AwsError::new(
            400,
            "MissingParameter",
            "The request must contain the parameter groupId",
        )
    })?;
    if !state.groups.contains_key(&group) {
        return Err(group_missing(&group));
    }
    Ok(group)
}

fn authorize(
    state: &mut AwsState,
    params: &Params,
    egress: bool,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let group = existing_group(state, params)?;
    let mut added = Vec::new();
    for mut rule in requested_rules(state, params, &group, egress)? {
        if state
            .rules
            .iter()
            .chain(added.iter())
            .any(|r| r.same_permission(&rule))
        {
            return Err(AwsError::new(
                400,
                "InvalidPermission.Duplicate",
                format!(
                    "the specified rule \"{}\" already exists",
                    describe_permission(&rule)
                ),
            ));
        }
        rule.id = seed_ids::rule(state, &rule).unwrap_or_else(|| state.next_id("sgr"));
        added.push(rule);
    }
    xml.leaf("return", true).open("securityGroupRuleSet");
    for rule in &added {
        rule_xml(xml, rule);
    }
    xml.close("securityGroupRuleSet");
    state.rules.extend(added);
    Ok(())
}

fn revoke(
    state: &mut AwsState,
    params: &Params,
    egress: bool,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let group = existing_group(state, params)?;
    let ids = numbered(params, "SecurityGroupRuleId");
    let mut remove: Vec<usize> = Vec::new();
    if !ids.is_empty() {
        for id in &ids {
            let index = state
                .rules
                .iter()
                .position(|r| r.id == *id && r.group_id == group && r.egress == egress)
                .ok_or_else(|| {
                    AwsError::new(
                        400,
                        "InvalidSecurityGroupRuleId.NotFound",
                        format!("The security group rule ID '{id}' does not exist"),
                    )
                })?;
            remove.push(index);
        }
    } else {
        for rule in requested_rules(state, params, &group, egress)? {
            let index = state
                .rules
                .iter()
                .position(|r| r.same_permission(&rule))
                .ok_or_else(|| {
                    AwsError::new(
                        400,
                        "InvalidPermission.NotFound",
                        "The specified rule does not exist in this security group.",
                    )
                })?;
            remove.push(index);
        }
    }
    remove.sort_unstable();
    remove.dedup();
    for index in remove.into_iter().rev() {
        state.rules.remove(index);
    }
    xml.leaf("return", true);
    Ok(())
}

/// Serves one EC2 action into `xml` (the body inside the response element).
pub(crate) fn handle(
    state: &mut AwsState,
    action: &str,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    match action {
        "DescribeSecurityGroups" => {
            let mut wanted = numbered(params, "GroupId");
            for (name, values) in filters(params) {
                if name == "group-id" {
                    wanted.extend(values);
                }
            }
            if let Some(missing) = wanted.iter().find(|id| !state.groups.contains_key(*id)) {
                return Err(group_missing(missing));
            }
            xml.open("securityGroupInfo");
            for group in state
                .groups
                .values()
                .filter(|g| wanted.is_empty() || wanted.contains(&g.id))
            {
                xml.open("item")
                    .leaf("ownerId", lab::ACCOUNT_ID)
                    .leaf("groupId", &group.id)
                    .leaf("groupName", &group.name)
                    .leaf("groupDescription", &group.description)
                    .leaf("vpcId", &group.vpc_id);
                let ingress: Vec<&Rule> = state
                    .rules
                    .iter()
                    .filter(|r| r.group_id == group.id && !r.egress)
                    .collect();
                let egress: Vec<&Rule> = state
                    .rules
                    .iter()
                    .filter(|r| r.group_id == group.id && r.egress)
                    .collect();
                permissions_xml(xml, "ipPermissions", &ingress);
                permissions_xml(xml, "ipPermissionsEgress", &egress);
                xml.open("tagSet")
                    .open("item")
                    .leaf("key", "Name")
                    .leaf("value", &group.name)
                    .close("item")
                    .close("tagSet")
                    .close("item");
            }
            xml.close("securityGroupInfo");
            Ok(())
        }
        "DescribeSecurityGroupRules" => {
            let mut groups = Vec::new();
            let mut ids = numbered(params, "SecurityGroupRuleId");
            for (name, values) in filters(params) {
                match name.as_str() {
                    "group-id" => groups.extend(values),
                    "security-group-rule-id" => ids.extend(values),
                    _ => {}
                }
            }
            xml.open("securityGroupRuleSet");
            for rule in state.rules.iter().filter(|r| {
                (groups.is_empty() || groups.contains(&r.group_id))
                    && (ids.is_empty() || ids.contains(&r.id))
            }) {
                rule_xml(xml, rule);
            }
            xml.close("securityGroupRuleSet");
            Ok(())
        }
        "AuthorizeSecurityGroupIngress" => authorize(state, params, false, xml),
        "AuthorizeSecurityGroupEgress" => authorize(state, params, true, xml),
        "RevokeSecurityGroupIngress" => revoke(state, params, false, xml),
        "RevokeSecurityGroupEgress" => revoke(state, params, true, xml),
        "DescribeInstances" => {
            let wanted = numbered(params, "InstanceId");
            if let Some(missing) = wanted.iter().find(|id| !state.instances.contains_key(*id)) {
                return Err(AwsError::new(
                    400,
                    "InvalidInstanceID.NotFound",
                    format!("The instance ID '{missing}' does not exist"),
                ));
            }
            xml.open("reservationSet");
            for instance in state
                .instances
                .values()
                .filter(|i| wanted.is_empty() || wanted.contains(&i.id))
            {
                let code = match instance.state.as_str() {
                    "pending" => 0,
                    "running" => 16,
                    "shutting-down" => 32,
                    _ => 48,
                };
                xml.open("item")
                    .leaf("reservationId", format!("r-{}", &instance.id[2..]))
                    .leaf("ownerId", lab::ACCOUNT_ID)
                    .open("instancesSet")
                    .open("item")
                    .leaf("instanceId", &instance.id)
                    .leaf("imageId", &instance.ami)
                    .open("instanceState")
                    .leaf("code", code)
                    .leaf("name", &instance.state)
                    .close("instanceState")
                    .leaf(
                        "privateDnsName",
                        format!(
                            "ip-{}.{}.compute.internal",
                            instance.private_ip.replace('.', "-"),
                            lab::REGION
                        ),
                    )
                    .leaf("instanceType", &instance.instance_type)
                    .leaf("launchTime", iso(instance.launched_at))
                    .open("placement")
                    .leaf("availabilityZone", &instance.zone);
                if let Some(group) = &instance.placement_group {
                    xml.leaf("groupName", group);
                }
                xml.close("placement")
                    .leaf("subnetId", &instance.subnet)
                    .leaf(
                        "vpcId",
                        state
                            .subnets
                            .get(&instance.subnet)
                            .map_or(lab::VPC_ID, |s| s.vpc.as_str()),
                    )
                    .leaf("privateIpAddress", &instance.private_ip)
                    .open("groupSet");
                for group in &instance.groups {
                    let name = state
                        .groups
                        .get(group)
                        .map_or(group.as_str(), |g| g.name.as_str());
                    xml.open("item")
                        .leaf("groupId", group)
                        .leaf("groupName", name)
                        .close("item");
                }
                xml.close("groupSet");
                // The EFA interfaces, one per network card, as the launch template asked.
                if instance.efa_interfaces > 0 {
                    xml.open("networkInterfaceSet");
                    for card in 0..instance.efa_interfaces {
                        xml.open("item")
                            .leaf("interfaceType", "efa")
                            .open("attachment")
                            .leaf("deviceIndex", u32::from(card > 0))
                            .leaf("networkCardIndex", card)
                            .close("attachment")
                            .close("item");
                    }
                    xml.close("networkInterfaceSet");
                }
                xml.open("tagSet")
                    .open("item")
                    .leaf("key", "eks:nodegroup-name")
                    .leaf("value", &instance.nodegroup)
                    .close("item")
                    .open("item")
                    .leaf("key", "eks:cluster-name")
                    .leaf("value", lab::CLUSTER_NAME)
                    .close("item")
                    .close("tagSet")
                    .close("item")
                    .close("instancesSet")
                    .close("item");
            }
            xml.close("reservationSet");
            Ok(())
        }
        other => ec2_lifecycle::handle(state, other, params, xml),
    }
}
