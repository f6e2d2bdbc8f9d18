//! EC2 create and delete for the lab's network: VPC, subnets, NAT gateway, security groups.

use std::time::Duration;

use aws_sdk_ec2::types::{ResourceType, Tag, TagSpecification};
use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;
use super::waiter::{classify, wait_for};
use crate::clock::Clock;

/// What `ec2::create_subnet` needs.
#[derive(Debug, Clone)]
pub struct SubnetSpec {
    pub vpc: String,
    pub cidr: String,
    pub zone: String,
    pub name: String,
    /// Public subnets get the load-balancer role tag, private ones the internal one, as
    /// terraform-aws-modules/vpc does for EKS.
    pub public: bool,
}

pub(super) fn tags(resource: ResourceType, pairs: &[(&str, &str)]) -> TagSpecification {
    let mut spec = TagSpecification::builder().resource_type(resource);
    for (key, value) in pairs {
        spec = spec.tags(Tag::builder().key(*key).value(*value).build());
    }
    spec.build()
}

pub(super) fn missing(operation: &str, what: &str) -> AwsError {
    AwsError::new(
        operation,
        "InvalidResponse",
        format!("{operation} answered without {what}"),
    )
}

impl AwsClients {
    pub async fn create_vpc(&self, cidr: &str, name: &str) -> Result<String, AwsError> {
        let out = self
            .sdk()
            .await
            .ec2
            .create_vpc()
            .cidr_block(cidr)
            .tag_specifications(tags(ResourceType::Vpc, &[("Name", name)]))
            .send()
            .await
            .map_err(|e| self.failed("CreateVpc", e))?;
        out.vpc()
            .and_then(|v| v.vpc_id())
            .map(str::to_string)
            .ok_or_else(|| missing("CreateVpc", "a VPC id"))
    }

    pub async fn delete_vpc(&self, id: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .ec2
            .delete_vpc()
            .vpc_id(id)
            .send()
            .await
            .map_err(|e| self.failed("DeleteVpc", e))?;
        Ok(())
    }

    pub async fn create_subnet(&self, spec: &SubnetSpec) -> Result<String, AwsError> {
        let role = if spec.public {
            "kubernetes.io/role/elb"
        } else {
            "kubernetes.io/role/internal-elb"
        };
        let out = self
            .sdk()
            .await
            .ec2
            .create_subnet()
            .vpc_id(&spec.vpc)
            .cidr_block(&spec.cidr)
            .availability_zone(&spec.zone)
            .tag_specifications(tags(
                ResourceType::Subnet,
                &[("Name", &spec.name), (role, "1")],
            ))
            .send()
            .await
            .map_err(|e| self.failed("CreateSubnet", e))?;
        out.subnet()
            .and_then(|s| s.subnet_id())
            .map(str::to_string)
            .ok_or_else(|| missing("CreateSubnet", "a subnet id"))
    }

    pub async fn delete_subnet(&self, id: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .ec2
            .delete_subnet()
            .subnet_id(id)
            .send()
            .await
            .map_err(|e| self.failed("DeleteSubnet", e))?;
        Ok(())
    }

    /// A public NAT gateway; real AWS needs an Elastic IP allocation for it.
    pub async fn create_nat_gateway(
        &self,
        subnet: &str,
        name: &str,
        allocation_id: Option<&str>,
    ) -> Result<String, AwsError> {
        let out = self
            .sdk()
            .await
            .ec2
            .create_nat_gateway()
            .subnet_id(subnet)
            .set_allocation_id(allocation_id.map(str::to_string))
            .tag_specifications(tags(ResourceType::Natgateway, &[("Name", name)]))
            .send()
            .await
            .map_err(|e| self.failed("CreateNatGateway", e))?;
        out.nat_gateway()
            .and_then(|n| n.nat_gateway_id())
            .map(str::to_string)
            .ok_or_else(|| missing("CreateNatGateway", "a NAT gateway id"))
    }

    pub async fn delete_nat_gateway(&self, id: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .ec2
            .delete_nat_gateway()
            .nat_gateway_id(id)
            .send()
            .await
            .map_err(|e| self.failed("DeleteNatGateway", e))?;
        Ok(())
    }

    /// NAT gateways: #{ nat_gateway_id, state, subnet_id, vpc_id, name }.
    pub async fn nat_gateways(&self) -> Result<Vec<Value>, AwsError> {
        let out = self
            .sdk()
            .await
            .ec2
            .describe_nat_gateways()
            .into_paginator()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.failed("DescribeNatGateways", e))?;
        Ok(out
            .iter()
            .flat_map(|page| page.nat_gateways())
            .map(|n| {
                let name = super::ec2::name_tag(n.tags());
                json!({
                    "nat_gateway_id": n.nat_gateway_id(),
                    "state": n.state().map(|s| s.as_str()),
                    "subnet_id": n.subnet_id(),
                    "vpc_id": n.vpc_id(),
                    "name": name,
                    "allocation_id": n.nat_gateway_addresses().first().and_then(|a| a.allocation_id()),
                })
            })
            .collect())
    }

    pub async fn wait_nat_gateway_available(
        &self,
        id: &str,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<(), AwsError> {
        let what = format!("NAT gateway {id}");
        wait_for(
            clock,
            timeout,
            "DescribeNatGateways",
            &what,
            "available",
            || async move {
                let state = self
                    .nat_gateways()
                    .await?
                    .into_iter()
                    .find(|n| n["nat_gateway_id"] == id)
                    .and_then(|n| n["state"].as_str().map(str::to_string))
                    .unwrap_or_else(|| "missing".into());
                Ok(classify(
                    &state,
                    &["available"],
                    &["failed", "deleted", "missing"],
                ))
            },
        )
        .await
        .map(|_| ())
    }

    pub async fn create_security_group(
        &self,
        name: &str,
        description: &str,
        vpc: &str,
    ) -> Result<String, AwsError> {
        let out = self
            .sdk()
            .await
            .ec2
            .create_security_group()
            .group_name(name)
            .description(description)
            .vpc_id(vpc)
            .send()
            .await
            .map_err(|e| self.failed("CreateSecurityGroup", e))?;
        out.group_id()
            .map(str::to_string)
            .ok_or_else(|| missing("CreateSecurityGroup", "a group id"))
    }

    /// Every security group: #{ group_id, group_name, description, vpc_id }.
    pub async fn security_groups(&self) -> Result<Vec<Value>, AwsError> {
        let out = self
            .sdk()
            .await
            .ec2
            .describe_security_groups()
            .into_paginator()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.failed("DescribeSecurityGroups", e))?;
        Ok(out
            .iter()
            .flat_map(|page| page.security_groups())
            .map(|g| {
                json!({
                    "group_id": g.group_id(),
                    "group_name": g.group_name(),
                    "description": g.description(),
                    "vpc_id": g.vpc_id(),
                })
            })
            .collect())
    }

    pub async fn delete_security_group(&self, id: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .ec2
            .delete_security_group()
            .group_id(id)
            .send()
            .await
            .map_err(|e| self.failed("DeleteSecurityGroup", e))?;
        Ok(())
    }
}
