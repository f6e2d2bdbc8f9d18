//! `ec2::reachable` on live data: resolves instance and group ids to endpoints, fetches the
//! groups' rules, and asks the pure evaluator.

use aws_sdk_ec2::types::Filter;

use super::client::AwsClients;
use super::error::AwsError;
use crate::lab::reachability::{Endpoint, Peer, SgRule, Verdict, reachable};

/// `10.80.1.11` or `10.80.0.0/16`.
fn is_network(text: &str) -> bool {
    let (address, prefix) = text.split_once('/').unwrap_or((text, "32"));
    let octets: Vec<&str> = address.split('.').collect();
    octets.len() == 4
        && octets.iter().all(|o| o.parse::<u8>().is_ok())
        && prefix.parse::<u8>().is_ok_and(|p| p <= 32)
}

impl AwsClients {
    /// An endpoint from instance ids (`i-...`: their groups and address) and group ids.
    async fn endpoint(&self, ids: &[String]) -> Result<Endpoint, AwsError> {
        let mut endpoint = Endpoint::default();
        let instances: Vec<&String> = ids.iter().filter(|id| id.starts_with("i-")).collect();
        for id in ids.iter().filter(|id| !id.starts_with("i-")) {
            if is_network(id) {
                // An address or network outside the VPC: hybrid nodes, their pods.
                if ids.len() > 1 {
                    return Err(AwsError::new(
                        "ec2::reachable",
                        "InvalidParameterValue",
                        format!("`{id}` is a network outside the VPC: give it alone, not with ids"),
                    ));
                }
                endpoint.ip = Some(id.clone());
                endpoint.outside = true;
                continue;
            }
            if !id.starts_with("sg-") {
                return Err(AwsError::new(
                    "ec2::reachable",
                    "InvalidParameterValue",
                    format!(
                        "`{id}` is neither an instance id (i-...), a security group id (sg-...) nor an IPv4 network (10.80.0.0/16)"
                    ),
                ));
            }
            endpoint.groups.push(id.clone());
        }
        if !instances.is_empty() {
            let out = self
                .sdk()
                .await
                .ec2
                .describe_instances()
                .set_instance_ids(Some(instances.iter().map(|s| s.to_string()).collect()))
                .send()
                .await
                .map_err(|e| self.failed("DescribeInstances", e))?;
            for instance in out.reservations().iter().flat_map(|r| r.instances()) {
                endpoint.groups.extend(
                    instance
                        .security_groups()
                        .iter()
                        .filter_map(|g| g.group_id().map(str::to_string)),
                );
                if instances.len() == 1 {
                    endpoint.ip = instance.private_ip_address().map(str::to_string);
                }
            }
        }
        endpoint.groups.sort();
        endpoint.groups.dedup();
        Ok(endpoint)
    }

    pub async fn reachable(
        &self,
        from: &[String],
        to: &[String],
        protocol: &str,
        port: i32,
    ) -> Result<Verdict, AwsError> {
        let (from, to) = (self.endpoint(from).await?, self.endpoint(to).await?);
        let mut groups: Vec<String> = from.groups.iter().chain(&to.groups).cloned().collect();
        groups.sort();
        groups.dedup();
        for group in &groups {
            // An unknown group is an error, not an empty rule set.
            self.security_group(group).await?;
        }
        let out = self
            .sdk()
            .await
            .ec2
            .describe_security_group_rules()
            .filters(
                Filter::builder()
                    .name("group-id")
                    .set_values(Some(groups))
                    .build(),
            )
            .send()
            .await
            .map_err(|e| self.failed("DescribeSecurityGroupRules", e))?;
        let rules: Vec<SgRule> = out
            .security_group_rules()
            .iter()
            .map(|r| SgRule {
                id: r.security_group_rule_id().unwrap_or_default().to_string(),
                group: r.group_id().unwrap_or_default().to_string(),
                egress: r.is_egress().unwrap_or(false),
                protocol: r.ip_protocol().unwrap_or("-1").to_string(),
                from_port: r.from_port().unwrap_or(-1),
                to_port: r.to_port().unwrap_or(-1),
                peer: match (
                    r.cidr_ipv4(),
                    r.referenced_group_info().and_then(|g| g.group_id()),
                ) {
                    (Some(cidr), _) => Peer::Cidr(cidr.to_string()),
                    (None, Some(group)) => Peer::Group(group.to_string()),
                    (None, None) => Peer::Cidr(String::new()),
                },
            })
            .collect();
        Ok(reachable(&from, &to, protocol, port, &rules))
    }
}
