//! EC2 over the query protocol: every action the twin serves is a function of its own, chosen
//! by name from one table; security groups' rules are served here (describe, authorize, revoke
//! by permission or by rule id), the other resources in the modules the table names.

use super::ec2_query::{Params, Wanted, name_xml};
use super::error::AwsError;
use super::launch_templates;
use super::state::{AwsState, Rule, SecurityGroup};
use super::wire::{Member, Xml, members, numbered};
use super::{addresses, ec2_lifecycle, instance_terminate, instance_types, instances};
use super::{parameters, seed_ids, topology};
use crate::lab;

/// One EC2 action: reads the request's parameters, changes the state, writes the body of the
/// answer inside its `<ActionResponse>`.
type Action = fn(&mut AwsState, &Params, &mut Xml) -> Result<(), AwsError>;

/// Every EC2 action the twin serves, by name.
const ACTIONS: &[(&str, Action)] = &[
    ("DescribeSecurityGroups", describe_security_groups),
    ("DescribeSecurityGroupRules", describe_security_group_rules),
    ("AuthorizeSecurityGroupIngress", authorize_ingress),
    ("AuthorizeSecurityGroupEgress", authorize_egress),
    ("RevokeSecurityGroupIngress", revoke_ingress),
    ("RevokeSecurityGroupEgress", revoke_egress),
    ("DescribeInstances", instances::describe_instances),
    ("RebootInstances", instances::reboot_instances),
    (
        "TerminateInstances",
        instance_terminate::terminate_instances,
    ),
    ("DescribeVpcs", ec2_lifecycle::describe_vpcs),
    ("CreateVpc", ec2_lifecycle::create_vpc),
    ("DeleteVpc", ec2_lifecycle::delete_vpc),
    ("DescribeSubnets", ec2_lifecycle::describe_subnets),
    ("CreateSubnet", ec2_lifecycle::create_subnet),
    ("DeleteSubnet", ec2_lifecycle::delete_subnet),
    ("DescribeNatGateways", ec2_lifecycle::describe_nat_gateways),
    ("CreateNatGateway", ec2_lifecycle::create_nat_gateway),
    ("DeleteNatGateway", ec2_lifecycle::delete_nat_gateway),
    ("CreateSecurityGroup", ec2_lifecycle::create_security_group),
    ("DeleteSecurityGroup", ec2_lifecycle::delete_security_group),
    (
        "CreatePlacementGroup",
        launch_templates::create_placement_group,
    ),
    (
        "DescribePlacementGroups",
        launch_templates::describe_placement_groups,
    ),
    (
        "DeletePlacementGroup",
        launch_templates::delete_placement_group,
    ),
    (
        "CreateLaunchTemplate",
        launch_templates::create_launch_template,
    ),
    (
        "DescribeLaunchTemplates",
        launch_templates::describe_launch_templates,
    ),
    (
        "DescribeLaunchTemplateVersions",
        launch_templates::describe_launch_template_versions,
    ),
    (
        "DeleteLaunchTemplate",
        launch_templates::delete_launch_template,
    ),
    ("AllocateAddress", addresses::allocate_address),
    ("DescribeAddresses", addresses::describe_addresses),
    ("ReleaseAddress", addresses::release_address),
    (
        "DescribeInstanceTypes",
        instance_types::describe_instance_types,
    ),
    (
        "DescribeInstanceTopology",
        topology::describe_instance_topology,
    ),
];

/// Serves one EC2 action into `xml` (the body inside the response element).
pub(crate) fn handle(
    state: &mut AwsState,
    action: &str,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    match ACTIONS.iter().find(|(name, _)| *name == action) {
        Some((_, serve)) => serve(state, params, xml),
        None => Err(invalid_action(action)),
    }
}

fn invalid_action(action: &str) -> AwsError {
    AwsError::new(
        400,
        "InvalidAction",
        format!(
            "The action {action} is not valid for this web service (the lab twin serves EC2 for VPCs, subnets, NAT gateways, Elastic IPs, instances, instance types, security groups, placement groups and launch templates)"
        ),
    )
}

/// A group id that names no group: malformed (EC2 reads the id's shape first), or not found.
pub(super) fn group_missing(id: &str) -> AwsError {
    if let Err(malformed) = parameters::group_id(id) {
        return malformed;
    }
    AwsError::new(
        400,
        "InvalidGroup.NotFound",
        format!("The security group '{id}' does not exist"),
    )
}

fn describe_security_groups(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let wanted = Wanted::listed(params, "GroupId").or_filtered(params, "group-id");
    wanted.all_exist(|id| state.groups.contains_key(id), group_missing)?;
    let groups = state.groups.values().filter(|g| wanted.accepts(&g.id));
    xml.items("securityGroupInfo", groups, |xml, group| {
        group_xml(xml, group, &state.rules);
    });
    Ok(())
}

fn group_xml(xml: &mut Xml, group: &SecurityGroup, rules: &[Rule]) {
    xml.leaf("ownerId", lab::ACCOUNT_ID)
        .leaf("groupId", &group.id)
        .leaf("groupName", &group.name)
        .leaf("groupDescription", &group.description)
        .leaf("vpcId", &group.vpc_id);
    let direction = |egress: bool| -> Vec<&Rule> {
        rules
            .iter()
            .filter(|r| r.group_id == group.id && r.egress == egress)
            .collect()
    };
    permissions_xml(xml, "ipPermissions", &direction(false));
    permissions_xml(xml, "ipPermissionsEgress", &direction(true));
    name_xml(xml, &group.name);
}

fn describe_security_group_rules(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let groups = Wanted::filtered(params, "group-id");
    let ids =
        Wanted::listed(params, "SecurityGroupRuleId").or_filtered(params, "security-group-rule-id");
    let rules = state
        .rules
        .iter()
        .filter(|r| groups.accepts(&r.group_id) && ids.accepts(&r.id));
    xml.items("securityGroupRuleSet", rules, rule_xml);
    Ok(())
}

/// A rule's fields, as an item of a `securityGroupRuleSet`.
fn rule_xml(xml: &mut Xml, rule: &Rule) {
    xml.leaf("securityGroupRuleId", &rule.id)
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
    xml.leaf("description", &rule.description).raw("<tagSet/>");
}

/// What an IpPermission groups its rules by: protocol and ports.
type PermissionKey = (String, i32, i32);

fn permission_key(rule: &Rule) -> PermissionKey {
    (rule.protocol.clone(), rule.from_port, rule.to_port)
}

/// Rules grouped into IpPermissions by protocol and ports, as DescribeSecurityGroups shows them.
fn permissions_xml(xml: &mut Xml, tag: &str, rules: &[&Rule]) {
    let mut keys: Vec<PermissionKey> = Vec::new();
    for key in rules.iter().map(|r| permission_key(r)) {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    xml.items(tag, keys, |xml, key| {
        let same: Vec<&Rule> = rules
            .iter()
            .copied()
            .filter(|r| permission_key(r) == key)
            .collect();
        permission_xml(xml, &key, &same);
    });
}

/// One IpPermission: its protocol and ports, and the groups and CIDR ranges it allows.
fn permission_xml(xml: &mut Xml, (protocol, from, to): &PermissionKey, rules: &[&Rule]) {
    xml.leaf("ipProtocol", protocol);
    if protocol != "-1" {
        xml.leaf("fromPort", from).leaf("toPort", to);
    }
    let groups = rules
        .iter()
        .filter_map(|r| Some((r.referenced_group.as_deref()?, r)));
    xml.items("groups", groups, |xml, (group, rule)| {
        xml.leaf("description", &rule.description)
            .leaf("groupId", group)
            .leaf("userId", lab::ACCOUNT_ID);
    });
    let ranges = rules.iter().filter_map(|r| Some((r.cidr.as_deref()?, r)));
    xml.items("ipRanges", ranges, |xml, (cidr, rule)| {
        xml.leaf("cidrIp", cidr)
            .leaf("description", &rule.description);
    });
    xml.raw("<ipv6Ranges/><prefixListIds/>");
}

/// The rules a request's `IpPermissions.N.*` describe, for `group` in one direction.
fn requested_rules(
    state: &AwsState,
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
        let (from, to) = if parameters::has_ports(&protocol) {
            let from = port(&permission, "FromPort", &protocol)?;
            let to = port(&permission, "ToPort", &protocol)?;
            parameters::ports(&protocol, from, to)?;
            (from, to)
        } else {
            // All protocols, or one by number: every port, whatever ports were given (EC2
            // keeps -1 and ignores them, the IpPermission reference).
            (-1, -1)
        };
        for (cidr, referenced_group, description) in sources(state, &permission)? {
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

/// A permission's `FromPort` or `ToPort`, which TCP, UDP and ICMP must give ("Invalid value
/// for portRange. Must specify both from and to ports with TCP/UDP.", as EC2 answered
/// in aws-cloudformation/cfn-lint#2999 and a captured AmazonEC2 error).
fn port(permission: &Member<'_>, key: &str, protocol: &str) -> Result<i32, AwsError> {
    match permission.get(key) {
        Some(v) => v.parse().map_err(|_| {
            AwsError::new(
                400,
                "InvalidParameterValue",
                format!("Invalid value '{v}' for {key}"),
            )
        }),
        None => {
            let with = if protocol.starts_with("icmp") {
                "ICMP"
            } else {
                "TCP/UDP"
            };
            Err(AwsError::new(
                400,
                "InvalidParameterValue",
                format!(
                    "Invalid value for portRange. Must specify both from and to ports with {with}."
                ),
            ))
        }
    }
}

/// Where a rule lets traffic come from (or go to): a CIDR or a group, with its description.
type Source = (Option<String>, Option<String>, String);

/// A permission's CIDR ranges, then its groups; it must name at least one.
fn sources(state: &AwsState, permission: &Member<'_>) -> Result<Vec<Source>, AwsError> {
    let mut sources = Vec::new();
    for range in permission.members("IpRanges") {
        let Some(cidr) = range.get("CidrIp") else {
            break;
        };
        // Kept as its network (10.8.10.0/16 is 10.8.0.0/16), as EC2 keeps it.
        let network = parameters::ipv4_cidr(cidr)?;
        sources.push((Some(network), None, range.text("Description")));
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
    Ok(sources)
}

/// A rule as InvalidPermission.Duplicate names it: `peer: 0.0.0.0/0, TCP, from port: 22, to
/// port: 22, ALLOW`; `peer: 0.0.0.0/0, ALL, ALLOW` for all protocols (lucidsoftware/cumulus
/// #101); `peer: 0.0.0.0/0, protocol: 50, ALLOW` for one by number
/// (ansible/ansible-modules-core#3258).
fn describe_permission(rule: &Rule) -> String {
    let peer = rule
        .cidr
        .clone()
        .or(rule.referenced_group.clone())
        .unwrap_or_default();
    match rule.protocol.as_str() {
        "-1" => format!("peer: {peer}, ALL, ALLOW"),
        protocol if parameters::has_ports(protocol) => format!(
            "peer: {peer}, {}, from port: {}, to port: {}, ALLOW",
            protocol.to_uppercase(),
            rule.from_port,
            rule.to_port
        ),
        number => format!("peer: {peer}, protocol: {number}, ALLOW"),
    }
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

fn authorize_ingress(state: &mut AwsState, params: &Params, xml: &mut Xml) -> Result<(), AwsError> {
    authorize(state, params, false, xml)
}

fn authorize_egress(state: &mut AwsState, params: &Params, xml: &mut Xml) -> Result<(), AwsError> {
    authorize(state, params, true, xml)
}

fn revoke_ingress(state: &mut AwsState, params: &Params, xml: &mut Xml) -> Result<(), AwsError> {
    revoke(state, params, false, xml)
}

fn revoke_egress(state: &mut AwsState, params: &Params, xml: &mut Xml) -> Result<(), AwsError> {
    revoke(state, params, true, xml)
}

fn authorize(
    state: &mut AwsState,
    params: &Params,
    egress: bool,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let group = existing_group(state, params)?;
    let mut added: Vec<Rule> = Vec::new();
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
    xml.leaf("return", true)
        .items("securityGroupRuleSet", &added, rule_xml);
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
    let mut remove = if ids.is_empty() {
        indexes_by_permission(state, params, &group, egress)?
    } else {
        indexes_by_id(state, &ids, &group, egress)?
    };
    remove.sort_unstable();
    remove.dedup();
    for index in remove.into_iter().rev() {
        state.rules.remove(index);
    }
    xml.leaf("return", true);
    Ok(())
}

/// Where the rules `ids` name stand in the state, each of `group` in this direction.
fn indexes_by_id(
    state: &AwsState,
    ids: &[String],
    group: &str,
    egress: bool,
) -> Result<Vec<usize>, AwsError> {
    ids.iter()
        .map(|id| {
            state
                .rules
                .iter()
                .position(|r| r.id == *id && r.group_id == group && r.egress == egress)
                .ok_or_else(|| {
                    AwsError::new(
                        400,
                        "InvalidSecurityGroupRuleId.NotFound",
                        format!("The security group rule ID '{id}' does not exist"),
                    )
                })
        })
        .collect()
}

/// Where the rules with the permissions the request describes stand in the state.
fn indexes_by_permission(
    state: &AwsState,
    params: &Params,
    group: &str,
    egress: bool,
) -> Result<Vec<usize>, AwsError> {
    requested_rules(state, params, group, egress)?
        .iter()
        .map(|rule| {
            state
                .rules
                .iter()
                .position(|r| r.same_permission(rule))
                .ok_or_else(|| {
                    AwsError::new(
                        400,
                        "InvalidPermission.NotFound",
                        "The specified rule does not exist in this security group.",
                    )
                })
        })
        .collect()
}
