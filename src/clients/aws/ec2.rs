//! EC2: security groups and their rules in one normalized shape, authorize and revoke, and the
//! network around them.

use aws_sdk_ec2::types::{Filter, IpPermission, IpRange, UserIdGroupPair};
use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;

/// One rule to authorize or revoke: a protocol, a port range and one source (a CIDR or a
/// security group).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSpec {
    pub egress: bool,
    /// `tcp`, `udp`, `icmp`, or `-1` for all.
    pub protocol: String,
    pub from_port: i32,
    pub to_port: i32,
    pub cidr: Option<String>,
    pub group: Option<String>,
    pub description: Option<String>,
}

impl RuleSpec {
    fn permission(&self) -> IpPermission {
        let mut permission = IpPermission::builder().ip_protocol(&self.protocol);
        if self.protocol != "-1" {
            permission = permission.from_port(self.from_port).to_port(self.to_port);
        }
        if let Some(cidr) = &self.cidr {
            let mut range = IpRange::builder().cidr_ip(cidr);
            if let Some(description) = &self.description {
                range = range.description(description);
            }
            permission = permission.ip_ranges(range.build());
        }
        if let Some(group) = &self.group {
            let mut pair = UserIdGroupPair::builder().group_id(group);
            if let Some(description) = &self.description {
                pair = pair.description(description);
            }
            permission = permission.user_id_group_pairs(pair.build());
        }
        permission.build()
    }
}

/// The value of a resource's `Name` tag, as the console shows it.
pub(super) fn name_tag(tags: &[aws_sdk_ec2::types::Tag]) -> Option<&str> {
    tags.iter()
        .find(|t| t.key() == Some("Name"))
        .and_then(|t| t.value())
}

fn rule_ids(rules: &[aws_sdk_ec2::types::SecurityGroupRule]) -> Vec<String> {
    rules
        .iter()
        .filter_map(|r| r.security_group_rule_id().map(str::to_string))
        .collect()
}

fn group_filter(group: &str) -> Filter {
    Filter::builder().name("group-id").values(group).build()
}

impl AwsClients {
    pub async fn security_group(&self, id: &str) -> Result<Value, AwsError> {
        let out = self
            .sdk()
            .await
            .ec2
            .describe_security_groups()
            .group_ids(id)
            .send()
            .await
            .map_err(|e| self.failed("DescribeSecurityGroups", e))?;
        let group = out.security_groups().first().ok_or_else(|| {
            AwsError::new(
                "DescribeSecurityGroups",
                "InvalidGroup.NotFound",
                format!("The security group '{id}' does not exist"),
            )
        })?;
        let tags: serde_json::Map<String, Value> = group
            .tags()
            .iter()
            .filter_map(|t| Some((t.key()?.to_string(), json!(t.value()))))
            .collect();
        Ok(json!({
            "group_id": group.group_id(),
            "group_name": group.group_name(),
            "description": group.description(),
            "vpc_id": group.vpc_id(),
            "ingress_permissions": group.ip_permissions().len(),
            "egress_permissions": group.ip_permissions_egress().len(),
            "tags": tags,
        }))
    }

    /// Every rule of a group in one shape: `#{ id, direction, protocol, from_port, to_port,
    /// source, description }`, where `source` is a CIDR, a group id, or `self`; ingress first,
    /// then egress, each ordered by port.
    pub async fn rules(&self, group: &str) -> Result<Vec<Value>, AwsError> {
        let pages = self
            .sdk()
            .await
            .ec2
            .describe_security_group_rules()
            .filters(group_filter(group))
            .into_paginator()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.failed("DescribeSecurityGroupRules", e))?;
        let mut rules: Vec<(bool, i32, i32, String, Value)> = pages
            .iter()
            .flat_map(|page| page.security_group_rules())
            .map(|r| {
                let referenced = r.referenced_group_info().and_then(|g| g.group_id());
                let source = match (r.cidr_ipv4(), referenced) {
                    (Some(cidr), _) => cidr.to_string(),
                    (None, Some(g)) if g == group => "self".to_string(),
                    (None, Some(g)) => g.to_string(),
                    (None, None) => r.prefix_list_id().unwrap_or_default().to_string(),
                };
                let egress = r.is_egress().unwrap_or(false);
                let (from, to) = (r.from_port().unwrap_or(-1), r.to_port().unwrap_or(-1));
                let value = json!({
                    "id": r.security_group_rule_id(),
                    "direction": if egress { "egress" } else { "ingress" },
                    "protocol": r.ip_protocol(),
                    "from_port": from,
                    "to_port": to,
                    "source": source,
                    "description": r.description().unwrap_or_default(),
                });
                (egress, from, to, source, value)
            })
            .collect();
        // The filter answers nothing for a group that does not exist: only then is the group
        // described, to tell "no rules" from InvalidGroup.NotFound.
        if rules.is_empty() {
            self.security_group(group).await?;
        }
        rules.sort_by(|a, b| (a.0, a.1, a.2, &a.3).cmp(&(b.0, b.1, b.2, &b.3)));
        Ok(rules.into_iter().map(|(.., v)| v).collect())
    }

    /// Authorizes one rule; returns the new rule's id.
    pub async fn authorize(&self, group: &str, rule: &RuleSpec) -> Result<String, AwsError> {
        let ids: Vec<String> = if rule.egress {
            let out = self
                .sdk()
                .await
                .ec2
                .authorize_security_group_egress()
                .group_id(group)
                .ip_permissions(rule.permission())
                .send()
                .await
                .map_err(|e| self.failed("AuthorizeSecurityGroupEgress", e).about(group))?;
            rule_ids(out.security_group_rules())
        } else {
            let out = self
                .sdk()
                .await
                .ec2
                .authorize_security_group_ingress()
                .group_id(group)
                .ip_permissions(rule.permission())
                .send()
                .await
                .map_err(|e| self.failed("AuthorizeSecurityGroupIngress", e).about(group))?;
            rule_ids(out.security_group_rules())
        };
        Ok(ids.into_iter().next().unwrap_or_default())
    }

    /// Revokes one rule by its permission.
    pub async fn revoke(&self, group: &str, rule: &RuleSpec) -> Result<(), AwsError> {
        if rule.egress {
            self.sdk()
                .await
                .ec2
                .revoke_security_group_egress()
                .group_id(group)
                .ip_permissions(rule.permission())
                .send()
                .await
                .map_err(|e| self.failed("RevokeSecurityGroupEgress", e).about(group))?;
        } else {
            self.sdk()
                .await
                .ec2
                .revoke_security_group_ingress()
                .group_id(group)
                .ip_permissions(rule.permission())
                .send()
                .await
                .map_err(|e| self.failed("RevokeSecurityGroupIngress", e).about(group))?;
        }
        Ok(())
    }

    /// Revokes one rule by its id (`sgr-...`), ingress or egress (the rule says which).
    pub async fn revoke_rule_id(&self, group: &str, id: &str) -> Result<(), AwsError> {
        let described = self
            .sdk()
            .await
            .ec2
            .describe_security_group_rules()
            .security_group_rule_ids(id)
            .send()
            .await
            .map_err(|e| self.failed("DescribeSecurityGroupRules", e))?;
        let egress = described
            .security_group_rules()
            .iter()
            .find(|r| r.security_group_rule_id() == Some(id))
            .map(|r| r.is_egress().unwrap_or(false))
            .ok_or_else(|| {
                AwsError::new(
                    "RevokeSecurityGroupIngress",
                    "InvalidSecurityGroupRuleId.NotFound",
                    format!("The security group rule ID '{id}' does not exist"),
                )
            })?;
        if egress {
            self.sdk()
                .await
                .ec2
                .revoke_security_group_egress()
                .group_id(group)
                .security_group_rule_ids(id)
                .send()
                .await
                .map_err(|e| self.failed("RevokeSecurityGroupEgress", e).about(group))?;
        } else {
            self.sdk()
                .await
                .ec2
                .revoke_security_group_ingress()
                .group_id(group)
                .security_group_rule_ids(id)
                .send()
                .await
                .map_err(|e| self.failed("RevokeSecurityGroupIngress", e).about(group))?;
        }
        Ok(())
    }

    pub async fn subnets(&self) -> Result<Vec<Value>, AwsError> {
        let pages = self
            .sdk()
            .await
            .ec2
            .describe_subnets()
            .into_paginator()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.failed("DescribeSubnets", e))?;
        let mut subnets: Vec<Value> = pages
            .iter()
            .flat_map(|page| page.subnets())
            .map(|s| {
                let name = name_tag(s.tags());
                json!({
                    "subnet_id": s.subnet_id(),
                    "cidr_block": s.cidr_block(),
                    "availability_zone": s.availability_zone(),
                    "vpc_id": s.vpc_id(),
                    "map_public_ip_on_launch": s.map_public_ip_on_launch(),
                    "name": name,
                })
            })
            .collect();
        subnets.sort_by(|a, b| a["cidr_block"].as_str().cmp(&b["cidr_block"].as_str()));
        Ok(subnets)
    }

    pub async fn vpcs(&self) -> Result<Vec<Value>, AwsError> {
        let pages = self
            .sdk()
            .await
            .ec2
            .describe_vpcs()
            .into_paginator()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.failed("DescribeVpcs", e))?;
        Ok(pages
            .iter()
            .flat_map(|page| page.vpcs())
            .map(|v| {
                let name = name_tag(v.tags());
                json!({"vpc_id": v.vpc_id(), "cidr_block": v.cidr_block(), "state": v.state().map(|s| s.as_str()), "name": name})
            })
            .collect())
    }

    /// Instances, with their state, type, zone, address, security groups, placement group and
    /// EFA interfaces.
    pub async fn instances(&self) -> Result<Vec<Value>, AwsError> {
        let pages = self
            .sdk()
            .await
            .ec2
            .describe_instances()
            .into_paginator()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.failed("DescribeInstances", e))?;
        Ok(pages
            .iter()
            .flat_map(|page| page.reservations())
            .flat_map(|r| r.instances())
            .map(|i| {
                let nodegroup = i.tags().iter().find(|t| t.key() == Some("eks:nodegroup-name")).and_then(|t| t.value());
                json!({
                    "instance_id": i.instance_id(),
                    "state": i.state().and_then(|s| s.name()).map(|n| n.as_str()),
                    "instance_type": i.instance_type().map(|t| t.as_str()),
                    "availability_zone": i.placement().and_then(|p| p.availability_zone()),
                    "private_ip_address": i.private_ip_address(),
                    "subnet_id": i.subnet_id(),
                    "security_groups": i.security_groups().iter().filter_map(|g| g.group_id()).collect::<Vec<_>>(),
                    "nodegroup": nodegroup,
                    "image_id": i.image_id(),
                    "placement_group": i.placement().and_then(|p| p.group_name()),
                    "efa_interfaces": i.network_interfaces().iter().filter(|n| n.interface_type().is_some_and(|t| t.starts_with("efa"))).count(),
                })
            })
            .collect())
    }
}
