//! EC2 resources the lab blueprint creates and destroys: VPCs, subnets, NAT gateways (with
//! their Elastic IPs) and security groups, with describe calls over the twin's state and AWS's dependency errors.

use std::collections::BTreeMap;
use std::time::Duration;

use super::ec2::group_missing;
use super::ec2_query::{Params, Wanted, name_tag, name_xml, required, tags};
use super::error::AwsError;
use super::seed_ids;
use super::state::{Address, AwsState, AwsTimer, NatGateway, Rule, SecurityGroup, Subnet, Vpc};
use super::wire::Xml;
use crate::lab;

/// How long a new NAT gateway stays `pending`. The seed gives no time for it; real ones take
/// a minute or two, and the blueprint waits for it in parallel with the control plane.
const NAT_PENDING: Duration = Duration::from_secs(60);

fn vpc_xml(xml: &mut Xml, vpc: &Vpc) {
    xml.leaf("vpcId", &vpc.id)
        .leaf("state", "available")
        .leaf("cidrBlock", &vpc.cidr)
        .leaf("ownerId", lab::ACCOUNT_ID)
        .leaf("isDefault", false)
        .leaf("instanceTenancy", "default");
    name_xml(xml, &vpc.name);
}

fn subnet_xml(xml: &mut Xml, subnet: &Subnet) {
    xml.leaf("subnetId", &subnet.id)
        .leaf("state", "available")
        .leaf("vpcId", &subnet.vpc)
        .leaf("cidrBlock", &subnet.cidr)
        .leaf("availabilityZone", &subnet.zone)
        .leaf("availabilityZoneId", lab::zone_id(&subnet.zone))
        .leaf("mapPublicIpOnLaunch", subnet.public)
        .leaf("ownerId", lab::ACCOUNT_ID);
    name_xml(xml, &subnet.name);
}

fn nat_xml(xml: &mut Xml, nat: &NatGateway, addresses: &BTreeMap<String, Address>) {
    xml.leaf("natGatewayId", &nat.id)
        .leaf("state", &nat.state)
        .leaf("subnetId", &nat.subnet)
        .leaf("vpcId", &nat.vpc)
        .leaf("connectivityType", "public");
    if let Some(address) = nat.allocation.as_ref().and_then(|a| addresses.get(a)) {
        xml.open("natGatewayAddressSet")
            .open("item")
            .leaf("allocationId", &address.allocation_id)
            .leaf("publicIp", &address.public_ip)
            .leaf("isPrimary", true)
            .leaf("status", "succeeded")
            .close("item")
            .close("natGatewayAddressSet");
    }
    name_xml(xml, &nat.name);
}

fn vpc_missing(id: &str) -> AwsError {
    AwsError::new(
        400,
        "InvalidVpcID.NotFound",
        format!("The vpc ID '{id}' does not exist"),
    )
}

fn subnet_missing(id: &str) -> AwsError {
    AwsError::new(
        400,
        "InvalidSubnetID.NotFound",
        format!("The subnet ID '{id}' does not exist"),
    )
}

fn dependency(message: String) -> AwsError {
    AwsError::new(400, "DependencyViolation", message)
}

/// Whether two IPv4 CIDR blocks overlap.
fn overlaps(a: &str, b: &str) -> bool {
    fn range(cidr: &str) -> Option<(u32, u32)> {
        let (ip, bits) = cidr.split_once('/')?;
        let octets: Vec<u32> = ip
            .split('.')
            .map(|o| o.parse().ok())
            .collect::<Option<_>>()?;
        let [a, b, c, d] = octets.as_slice() else {
            return None;
        };
        let start = (a << 24) | (b << 16) | (c << 8) | d;
        let bits: u32 = bits.parse().ok()?;
        let size = if bits == 0 {
            u32::MAX
        } else {
            (1u32 << (32 - bits.min(32))) - 1
        };
        Some((start, start.saturating_add(size)))
    }
    match (range(a), range(b)) {
        (Some((a0, a1)), Some((b0, b1))) => a0 <= b1 && b0 <= a1,
        _ => false,
    }
}

pub(super) fn describe_vpcs(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let wanted = Wanted::listed(params, "VpcId");
    wanted.all_exist(|id| state.vpcs.contains_key(id), vpc_missing)?;
    let vpcs = state.vpcs.values().filter(|v| wanted.accepts(&v.id));
    xml.items("vpcSet", vpcs, vpc_xml);
    Ok(())
}

pub(super) fn create_vpc(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let cidr = required(params, "CidrBlock")?.to_string();
    let id = seed_ids::vpc(state, &cidr).unwrap_or_else(|| state.next_id("vpc"));
    let vpc = Vpc {
        name: name_tag(params).unwrap_or_default(),
        id: id.clone(),
        cidr,
    };
    xml.element("vpc", |xml| vpc_xml(xml, &vpc));
    state.vpcs.insert(id, vpc);
    Ok(())
}

pub(super) fn delete_vpc(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let id = required(params, "VpcId")?;
    if !state.vpcs.contains_key(id) {
        return Err(vpc_missing(id));
    }
    let blocked = state.subnets.values().any(|s| s.vpc == id)
        || state.groups.values().any(|g| g.vpc_id == id)
        || state
            .nat_gateways
            .values()
            .any(|n| n.vpc == id && n.state != "deleted");
    if blocked {
        return Err(dependency(format!(
            "The vpc '{id}' has dependencies and cannot be deleted."
        )));
    }
    state.vpcs.remove(id);
    xml.leaf("return", true);
    Ok(())
}

pub(super) fn describe_subnets(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let wanted = Wanted::listed(params, "SubnetId").or_filtered(params, "subnet-id");
    let vpcs = Wanted::filtered(params, "vpc-id");
    wanted.all_exist(|id| state.subnets.contains_key(id), subnet_missing)?;
    let subnets = state
        .subnets
        .values()
        .filter(|s| wanted.accepts(&s.id) && vpcs.accepts(&s.vpc));
    xml.items("subnetSet", subnets, subnet_xml);
    Ok(())
}

pub(super) fn create_subnet(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let vpc = required(params, "VpcId")?.to_string();
    let cidr = required(params, "CidrBlock")?.to_string();
    if !state.vpcs.contains_key(&vpc) {
        return Err(vpc_missing(&vpc));
    }
    if let Some(other) = state
        .subnets
        .values()
        .find(|s| s.vpc == vpc && overlaps(&s.cidr, &cidr))
    {
        return Err(AwsError::new(
            400,
            "InvalidSubnet.Conflict",
            format!(
                "The CIDR '{cidr}' conflicts with another subnet ({})",
                other.id
            ),
        ));
    }
    let subnet = new_subnet(state, params, vpc, cidr);
    xml.element("subnet", |xml| subnet_xml(xml, &subnet));
    state.subnets.insert(subnet.id.clone(), subnet);
    Ok(())
}

/// The subnet a CreateSubnet asks for, with the seed's id and name when its CIDR is the seed's.
fn new_subnet(state: &mut AwsState, params: &Params, vpc: String, cidr: String) -> Subnet {
    let zone = params
        .get("AvailabilityZone")
        .cloned()
        .unwrap_or_else(|| format!("{}a", lab::REGION));
    // terraform-aws-modules/vpc tags public subnets for load balancers; that tag is
    // what marks a subnet public here.
    let public = tags(params)
        .iter()
        .any(|(k, _)| k == "kubernetes.io/role/elb");
    let (id, seed_name) = match seed_ids::subnet(state, &cidr) {
        Some((id, name, _)) => (id, name),
        None => (state.next_id("subnet"), String::new()),
    };
    Subnet {
        id,
        vpc,
        cidr,
        zone,
        public,
        name: name_tag(params).unwrap_or(seed_name),
    }
}

pub(super) fn delete_subnet(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let id = required(params, "SubnetId")?;
    if !state.subnets.contains_key(id) {
        return Err(subnet_missing(id));
    }
    let in_use = state
        .instances
        .values()
        .any(|i| i.subnet == id && i.state != "terminated")
        || state
            .nat_gateways
            .values()
            .any(|n| n.subnet == id && n.state != "deleted");
    if in_use {
        return Err(dependency(format!(
            "The subnet '{id}' has dependencies and cannot be deleted."
        )));
    }
    state.subnets.remove(id);
    xml.leaf("return", true);
    Ok(())
}

pub(super) fn describe_nat_gateways(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let wanted = Wanted::listed(params, "NatGatewayId");
    let nats = state
        .nat_gateways
        .values()
        .filter(|n| wanted.accepts(&n.id));
    xml.items("natGatewaySet", nats, |xml, nat| {
        nat_xml(xml, nat, &state.addresses);
    });
    Ok(())
}

pub(super) fn create_nat_gateway(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let subnet_id = required(params, "SubnetId")?.to_string();
    let vpc = state
        .subnets
        .get(&subnet_id)
        .map(|s| s.vpc.clone())
        .ok_or_else(|| subnet_missing(&subnet_id))?;
    let allocation = params.get("AllocationId").cloned();
    if let Some(allocation) = &allocation {
        super::addresses::check_free(state, allocation)?;
    }
    let id = seed_ids::nat_gateway(state).unwrap_or_else(|| state.next_id("nat"));
    if let Some(address) = allocation.as_ref().and_then(|a| state.addresses.get_mut(a)) {
        address.nat_gateway = Some(id.clone());
    }
    let nat = NatGateway {
        id: id.clone(),
        subnet: subnet_id,
        vpc,
        state: "pending".into(),
        name: name_tag(params).unwrap_or_default(),
        allocation,
    };
    xml.element("natGateway", |xml| nat_xml(xml, &nat, &state.addresses));
    state.nat_gateways.insert(id.clone(), nat);
    let now = state.now;
    state.meter.start(&id, "nat-gateway", now);
    state.schedule(NAT_PENDING, AwsTimer::NatAvailable { id });
    Ok(())
}

pub(super) fn delete_nat_gateway(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let id = required(params, "NatGatewayId")?.to_string();
    let nat = state
        .nat_gateways
        .get_mut(&id)
        .filter(|n| n.state != "deleted")
        .ok_or_else(|| {
            AwsError::new(
                400,
                "NatGatewayNotFound",
                format!("The Nat Gateway {id} was not found"),
            )
        })?;
    nat.state = "deleting".into();
    xml.leaf("natGatewayId", &id);
    state.schedule(Duration::from_secs(30), AwsTimer::NatDeleted { id });
    Ok(())
}

pub(super) fn create_security_group(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let name = required(params, "GroupName")?.to_string();
    let description = required(params, "GroupDescription")?.to_string();
    let vpc = required(params, "VpcId")?.to_string();
    if !state.vpcs.contains_key(&vpc) {
        return Err(vpc_missing(&vpc));
    }
    if state
        .groups
        .values()
        .any(|g| g.name == name && g.vpc_id == vpc)
    {
        return Err(AwsError::new(
            400,
            "InvalidGroup.Duplicate",
            format!("The security group '{name}' already exists for VPC '{vpc}'"),
        ));
    }
    let id = seed_ids::security_group(state, &name).unwrap_or_else(|| state.next_id("sg"));
    let group = SecurityGroup {
        id: id.clone(),
        name,
        description,
        vpc_id: vpc,
    };
    state.groups.insert(id.clone(), group);
    add_default_egress(state, &id);
    xml.leaf("return", true).leaf("groupId", &id).leaf(
        "securityGroupArn",
        format!(
            "arn:aws:ec2:{}:{}:security-group/{id}",
            lab::REGION,
            lab::ACCOUNT_ID
        ),
    );
    Ok(())
}

/// Every new group starts with AWS's default allow-all egress rule.
fn add_default_egress(state: &mut AwsState, group: &str) {
    let mut egress = Rule {
        id: String::new(),
        group_id: group.to_string(),
        egress: true,
        protocol: "-1".into(),
        from_port: -1,
        to_port: -1,
        cidr: Some("0.0.0.0/0".into()),
        referenced_group: None,
        description: String::new(),
    };
    egress.id = seed_ids::rule(state, &egress).unwrap_or_else(|| state.next_id("sgr"));
    state.rules.push(egress);
}

pub(super) fn delete_security_group(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let id = required(params, "GroupId")?.to_string();
    if !state.groups.contains_key(&id) {
        return Err(group_missing(&id));
    }
    let used_by_instance = state
        .instances
        .values()
        .any(|i| i.state != "terminated" && i.groups.contains(&id));
    let referenced = state
        .rules
        .iter()
        .any(|r| r.group_id != id && r.referenced_group.as_deref() == Some(id.as_str()));
    let used_by_cluster = state
        .clusters
        .values()
        .any(|c| c.config.cluster_security_group == id || c.config.security_groups.contains(&id));
    if used_by_instance || referenced || used_by_cluster {
        return Err(dependency(format!("resource {id} has a dependent object")));
    }
    state.groups.remove(&id);
    state.rules.retain(|r| r.group_id != id);
    xml.leaf("return", true);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::overlaps;

    #[test]
    fn cidr_overlap() {
        assert!(overlaps("192.168.0.0/16", "192.168.12.0/22"));
        assert!(overlaps("192.168.12.0/22", "192.168.13.0/24"));
        assert!(!overlaps("192.168.12.0/22", "192.168.16.0/22"));
        assert!(!overlaps("10.0.0.0/8", "192.168.0.0/16"));
    }
}
