//! DescribeInstanceTopology: where each instance sits in AWS's network (its network nodes, the
//! top layer first), read the same way from real AWS and the twin, all pages.

use aws_sdk_ec2::types::Filter;
use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;

/// EC2 takes at most 100 instance ids in one call.
const IDS_PER_CALL: usize = 100;

impl AwsClients {
    /// The topology of the named instances (all of the account's when `ids` is empty), only
    /// those whose type matches `instance_type` (EC2's filter: a type, or a family with `*`
    /// and `?` wildcards) when one is given. An instance that is not running, or of a type AWS
    /// gives no topology for, has no network nodes.
    pub async fn instance_topology(
        &self,
        ids: &[String],
        instance_type: Option<&str>,
    ) -> Result<Vec<Value>, AwsError> {
        let batches: Vec<&[String]> = if ids.is_empty() {
            vec![&[]]
        } else {
            ids.chunks(IDS_PER_CALL).collect()
        };
        let mut found = Vec::new();
        for batch in batches {
            found.extend(self.topology_batch(batch, instance_type).await?);
        }
        Ok(found)
    }

    async fn topology_batch(
        &self,
        ids: &[String],
        instance_type: Option<&str>,
    ) -> Result<Vec<Value>, AwsError> {
        let mut call = self
            .sdk()
            .await
            .ec2
            .describe_instance_topology()
            .set_instance_ids((!ids.is_empty()).then(|| ids.to_vec()));
        if let Some(instance_type) = instance_type {
            call = call.filters(
                Filter::builder()
                    .name("instance-type")
                    .values(instance_type)
                    .build(),
            );
        }
        // MaxResults may not go with instance ids; alone, the largest page saves round trips.
        if ids.is_empty() {
            call = call.max_results(100);
        }
        let pages = call
            .into_paginator()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.failed("DescribeInstanceTopology", e))?;
        Ok(pages
            .iter()
            .flat_map(|page| page.instances())
            .map(|i| {
                json!({
                    "instance_id": i.instance_id(),
                    "instance_type": i.instance_type(),
                    "group_name": i.group_name(),
                    "network_nodes": i.network_nodes(),
                    "availability_zone": i.availability_zone(),
                    "zone_id": i.zone_id(),
                    "capacity_block_id": i.capacity_block_id(),
                })
            })
            .collect())
    }
}
