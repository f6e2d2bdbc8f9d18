//! DescribeInstanceTypes: what an account says an instance type is (its GPUs, EFA, network
//! cards, vCPUs, memory, placement strategies), read the same way from real AWS and the twin.

use aws_sdk_ec2::types::InstanceType;
use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;

impl AwsClients {
    /// The named instance types (all pages), in the order asked for; an unknown name is EC2's
    /// `InvalidInstanceType` error.
    pub async fn instance_types(&self, names: &[String]) -> Result<Vec<Value>, AwsError> {
        let pages = self
            .sdk()
            .await
            .ec2
            .describe_instance_types()
            .set_instance_types(Some(
                names
                    .iter()
                    .map(|n| InstanceType::from(n.as_str()))
                    .collect(),
            ))
            .into_paginator()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.failed("DescribeInstanceTypes", e))?;
        let mut found: Vec<Value> = pages
            .iter()
            .flat_map(|page| page.instance_types())
            .map(|t| {
                let gpus = t.gpu_info();
                let network = t.network_info();
                json!({
                    "instance_type": t.instance_type().map(|i| i.as_str()),
                    "vcpus": t.v_cpu_info().and_then(|v| v.default_v_cpus()),
                    "memory_mib": t.memory_info().and_then(|m| m.size_in_mib()),
                    "gpus": gpus.map(|g| g.gpus().iter().map(|d| json!({
                        "name": d.name(),
                        "manufacturer": d.manufacturer(),
                        "count": d.count(),
                        "memory_mib": d.memory_info().and_then(|m| m.size_in_mib()),
                    })).collect::<Vec<_>>()).unwrap_or_default(),
                    "gpu_count": gpus.map(|g| g.gpus().iter().filter_map(|d| d.count()).sum::<i32>()).unwrap_or(0),
                    "total_gpu_memory_mib": gpus.and_then(|g| g.total_gpu_memory_in_mib()),
                    "network_performance": network.and_then(|n| n.network_performance()),
                    "maximum_network_cards": network.and_then(|n| n.maximum_network_cards()),
                    "efa_supported": network.and_then(|n| n.efa_supported()).unwrap_or(false),
                    "maximum_efa_interfaces": network.and_then(|n| n.efa_info()).and_then(|e| e.maximum_efa_interfaces()),
                    "placement_strategies": t.placement_group_info().map(|p| p.supported_strategies().iter().map(|s| s.as_str()).collect::<Vec<_>>()).unwrap_or_default(),
                })
            })
            .collect();
        // EC2 answers in its own order; a runbook reads them as it asked.
        found.sort_by_key(|t| {
            names
                .iter()
                .position(|n| t["instance_type"].as_str() == Some(n.as_str()))
                .unwrap_or(usize::MAX)
        });
        Ok(found)
    }
}
