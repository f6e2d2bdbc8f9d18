//! The network half of a capture's AWS state: the cluster's VPC, its subnets, NAT gateways and
//! the Elastic IPs they hold, its security groups with their rules, and the instances in its
//! subnets. Describe calls only.

use std::collections::BTreeSet;

use futures::future::try_join_all;
use serde_json::Value;

use super::error::CaptureError;
use super::fields::{count, text, texts};
use crate::clients::aws::AwsClients;
use crate::lab_state::{Address, Instance, NatGateway, Rule, SecurityGroup, Subnet, Vpc};

/// What a capture reads of one VPC.
pub(super) struct Network {
    pub(super) vpcs: Vec<Vpc>,
    pub(super) subnets: Vec<Subnet>,
    pub(super) nat_gateways: Vec<NatGateway>,
    pub(super) addresses: Vec<Address>,
    pub(super) security_groups: Vec<SecurityGroup>,
    pub(super) instances: Vec<Instance>,
}

/// The VPC `vpc` and what is in it, read in this order.
pub(super) async fn read(aws: &AwsClients, vpc: &str) -> Result<Network, CaptureError> {
    let vpcs = vpcs(aws, vpc).await?;
    let subnets = subnets(aws, vpc).await?;
    let nat_gateways = nat_gateways(aws, vpc).await?;
    let addresses = addresses(aws, &nat_gateways).await?;
    let security_groups = security_groups(aws, vpc).await?;
    let instances = instances(aws, &subnets).await?;
    Ok(Network {
        vpcs,
        subnets,
        nat_gateways,
        addresses,
        security_groups,
        instances,
    })
}

fn in_vpc(record: &Value, vpc: &str) -> bool {
    record["vpc_id"].as_str() == Some(vpc)
}

async fn vpcs(aws: &AwsClients, vpc: &str) -> Result<Vec<Vpc>, CaptureError> {
    let vpcs = aws.vpcs().await.map_err(CaptureError::aws("the VPCs"))?;
    Ok(vpcs
        .iter()
        .filter(|v| in_vpc(v, vpc))
        .map(|v| Vpc {
            id: text(&v["vpc_id"]),
            cidr: text(&v["cidr_block"]),
            name: text(&v["name"]),
        })
        .collect())
}

async fn subnets(aws: &AwsClients, vpc: &str) -> Result<Vec<Subnet>, CaptureError> {
    Ok(aws
        .subnets()
        .await
        .map_err(CaptureError::aws("the subnets"))?
        .iter()
        .filter(|s| in_vpc(s, vpc))
        .map(|s| Subnet {
            id: text(&s["subnet_id"]),
            vpc: vpc.to_string(),
            cidr: text(&s["cidr_block"]),
            zone: text(&s["availability_zone"]),
            public: s["map_public_ip_on_launch"].as_bool().unwrap_or(false),
            name: text(&s["name"]),
        })
        .collect())
}

/// The VPC's NAT gateways, those not deleted.
async fn nat_gateways(aws: &AwsClients, vpc: &str) -> Result<Vec<NatGateway>, CaptureError> {
    Ok(aws
        .nat_gateways()
        .await
        .map_err(CaptureError::aws("the NAT gateways"))?
        .iter()
        .filter(|n| in_vpc(n, vpc) && n["state"] != "deleted")
        .map(|n| NatGateway {
            id: text(&n["nat_gateway_id"]),
            subnet: text(&n["subnet_id"]),
            vpc: vpc.to_string(),
            state: text(&n["state"]),
            name: text(&n["name"]),
            allocation: n["allocation_id"].as_str().map(str::to_string),
        })
        .collect())
}

/// The Elastic IPs the NAT gateways hold.
async fn addresses(
    aws: &AwsClients,
    nat_gateways: &[NatGateway],
) -> Result<Vec<Address>, CaptureError> {
    let held: BTreeSet<&str> = nat_gateways
        .iter()
        .filter_map(|n| n.allocation.as_deref())
        .collect();
    Ok(aws
        .addresses(None)
        .await
        .map_err(CaptureError::aws("the Elastic IPs"))?
        .iter()
        .filter(|a| {
            a["allocation_id"]
                .as_str()
                .is_some_and(|id| held.contains(id))
        })
        .map(|a| Address {
            allocation_id: text(&a["allocation_id"]),
            public_ip: text(&a["public_ip"]),
            name: text(&a["name"]),
        })
        .collect())
}

async fn security_groups(aws: &AwsClients, vpc: &str) -> Result<Vec<SecurityGroup>, CaptureError> {
    let mut groups: Vec<Value> = aws
        .security_groups()
        .await
        .map_err(CaptureError::aws("the security groups"))?
        .into_iter()
        .filter(|g| in_vpc(g, vpc))
        .collect();
    groups.sort_by(|a, b| a["group_id"].as_str().cmp(&b["group_id"].as_str()));
    let rules = try_join_all(groups.iter().map(|g| {
        let id = text(&g["group_id"]);
        async move {
            aws.rules(&id)
                .await
                .map_err(CaptureError::aws(format!("the rules of {id}")))
        }
    }))
    .await?;
    Ok(groups
        .iter()
        .zip(rules)
        .map(|(g, rules)| SecurityGroup {
            id: text(&g["group_id"]),
            name: text(&g["group_name"]),
            description: text(&g["description"]),
            vpc: vpc.to_string(),
            rules: rules.iter().map(rule).collect(),
        })
        .collect())
}

fn rule(r: &Value) -> Rule {
    Rule {
        id: text(&r["id"]),
        direction: text(&r["direction"]),
        protocol: text(&r["protocol"]),
        from_port: r["from_port"].as_i64().unwrap_or(-1) as i32,
        to_port: r["to_port"].as_i64().unwrap_or(-1) as i32,
        source: text(&r["source"]),
        description: text(&r["description"]),
    }
}

/// The instances, not terminated, in the VPC's subnets, by id.
async fn instances(aws: &AwsClients, subnets: &[Subnet]) -> Result<Vec<Instance>, CaptureError> {
    let subnet_ids: BTreeSet<&str> = subnets.iter().map(|s| s.id.as_str()).collect();
    let mut instances: Vec<Instance> = aws
        .instances()
        .await
        .map_err(CaptureError::aws("the EC2 instances"))?
        .iter()
        .filter(|i| {
            i["state"] != "terminated"
                && i["subnet_id"]
                    .as_str()
                    .is_some_and(|s| subnet_ids.contains(s))
        })
        .map(instance)
        .collect();
    instances.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(instances)
}

fn instance(i: &Value) -> Instance {
    Instance {
        id: text(&i["instance_id"]),
        state: text(&i["state"]),
        instance_type: text(&i["instance_type"]),
        zone: text(&i["availability_zone"]),
        subnet: text(&i["subnet_id"]),
        private_ip: text(&i["private_ip_address"]),
        security_groups: texts(&i["security_groups"]),
        image: text(&i["image_id"]),
        nodegroup: i["nodegroup"].as_str().map(str::to_string),
        placement_group: i["placement_group"].as_str().map(str::to_string),
        efa_interfaces: count(&i["efa_interfaces"]),
    }
}
