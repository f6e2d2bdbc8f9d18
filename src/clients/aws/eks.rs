//! EKS: the cluster, node groups and their scaling, add-ons.

use std::time::Duration;

use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;
use super::waiter::{Probe, classify, wait_for};
use crate::clock::Clock;

fn time(value: Option<&aws_smithy_types::DateTime>) -> Value {
    value.map_or(Value::Null, |t| json!(t.to_string()))
}

/// A node group's sizes and what it runs (DescribeNodegroup), typed.
#[derive(Debug, Clone, PartialEq)]
pub struct NodegroupSizing {
    /// None when EKS does not say (it always does for a managed node group).
    pub desired: Option<i32>,
    pub max: Option<i32>,
    pub instance_types: Vec<String>,
    /// `AL2023_x86_64_NVIDIA`, `BOTTLEROCKET_x86_64_NVIDIA`, ...
    pub ami_type: String,
}

impl NodegroupSizing {
    /// Whether it runs GPU nodes (by its AMI or its instance types).
    pub fn runs_gpus(&self) -> bool {
        crate::lab::is_gpu_node_group(
            &self.ami_type,
            self.instance_types.iter().map(String::as_str),
        )
    }
}

impl AwsClients {
    /// `describe-cluster`, as snake_case JSON (plus `node_security_group` for runbooks).
    pub async fn cluster(&self, name: &str) -> Result<Value, AwsError> {
        super::path_values::checked("DescribeCluster", &[("cluster name", name)])?;
        let out = self
            .sdk()
            .await
            .eks
            .describe_cluster()
            .name(name)
            .send()
            .await
            .map_err(|e| self.failed("DescribeCluster", e))?;
        let c = out.cluster().ok_or_else(|| {
            AwsError::new(
                "DescribeCluster",
                "ResourceNotFoundException",
                format!("no cluster {name}"),
            )
        })?;
        let vpc = c.resources_vpc_config();
        // Hybrid nodes' networks, only on a cluster that has them.
        let remote = c.remote_network_config().map(|r| {
            json!({
                "remote_node_networks": r.remote_node_networks().iter().flat_map(|n| n.cidrs().to_vec()).collect::<Vec<_>>(),
                "remote_pod_networks": r.remote_pod_networks().iter().flat_map(|n| n.cidrs().to_vec()).collect::<Vec<_>>(),
            })
        });
        let logging: Vec<Value> = c
            .logging()
            .map(|l| l.cluster_logging().iter().map(|s| json!({"types": s.types().iter().map(|t| t.as_str()).collect::<Vec<_>>(), "enabled": s.enabled()})).collect())
            .unwrap_or_default();
        let mut cluster = json!({
            "name": c.name(),
            "arn": c.arn(),
            "created_at": time(c.created_at()),
            "version": c.version(),
            "endpoint": c.endpoint(),
            "status": c.status().map(|s| s.as_str()),
            "platform_version": c.platform_version(),
            "role_arn": c.role_arn(),
            "resources_vpc_config": {
                "subnet_ids": vpc.map(|v| v.subnet_ids().to_vec()).unwrap_or_default(),
                "security_group_ids": vpc.map(|v| v.security_group_ids().to_vec()).unwrap_or_default(),
                "cluster_security_group_id": vpc.and_then(|v| v.cluster_security_group_id()),
                "vpc_id": vpc.and_then(|v| v.vpc_id()),
                "endpoint_public_access": vpc.map(|v| v.endpoint_public_access()),
                "endpoint_private_access": vpc.map(|v| v.endpoint_private_access()),
            },
            "node_security_group": vpc.and_then(|v| v.security_group_ids().first().cloned()),
            "kubernetes_network_config": {"service_ipv4_cidr": c.kubernetes_network_config().and_then(|k| k.service_ipv4_cidr())},
            "logging": {"cluster_logging": logging},
            "identity": {"oidc": {"issuer": c.identity().and_then(|i| i.oidc()).and_then(|o| o.issuer())}},
            "certificate_authority": {"data": c.certificate_authority().and_then(|a| a.data())},
            // The KMS key that encrypts the cluster's Secrets, if one does.
            "access_config": {"authentication_mode": c.access_config().and_then(|a| a.authentication_mode()).map(|m| m.as_str())},
            "secrets_key": c.encryption_config().first().and_then(|e| e.provider()).and_then(|p| p.key_arn()),
            "tags": c.tags(),
        });
        if let Some(remote) = remote {
            cluster["remote_network_config"] = remote;
        }
        Ok(cluster)
    }

    pub async fn nodegroups(&self, cluster: &str) -> Result<Vec<String>, AwsError> {
        super::path_values::checked("ListNodegroups", &[("cluster name", cluster)])?;
        let out = self
            .sdk()
            .await
            .eks
            .list_nodegroups()
            .cluster_name(cluster)
            .into_paginator()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.failed("ListNodegroups", e))?;
        Ok(out
            .iter()
            .flat_map(|page| page.nodegroups().iter().cloned())
            .collect())
    }

    /// DescribeNodegroup's node group, as the SDK types it.
    pub(super) async fn described_nodegroup(
        &self,
        cluster: &str,
        name: &str,
    ) -> Result<aws_sdk_eks::types::Nodegroup, AwsError> {
        super::path_values::checked(
            "DescribeNodegroup",
            &[("cluster name", cluster), ("node group name", name)],
        )?;
        let out = self
            .sdk()
            .await
            .eks
            .describe_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(name)
            .send()
            .await
            .map_err(|e| self.failed("DescribeNodegroup", e))?;
        out.nodegroup.ok_or_else(|| {
            AwsError::new(
                "DescribeNodegroup",
                "ResourceNotFoundException",
                format!("no node group {name}"),
            )
        })
    }

    /// A node group's sizes and what it runs, typed: what a scale's undo is built from.
    pub async fn nodegroup_sizing(
        &self,
        cluster: &str,
        name: &str,
    ) -> Result<NodegroupSizing, AwsError> {
        let n = self.described_nodegroup(cluster, name).await?;
        let scaling = n.scaling_config();
        Ok(NodegroupSizing {
            desired: scaling.and_then(|s| s.desired_size()),
            max: scaling.and_then(|s| s.max_size()),
            instance_types: n.instance_types().to_vec(),
            ami_type: n
                .ami_type()
                .map(|a| a.as_str().to_string())
                .unwrap_or_default(),
        })
    }

    pub async fn nodegroup(&self, cluster: &str, name: &str) -> Result<Value, AwsError> {
        let n = &self.described_nodegroup(cluster, name).await?;
        let scaling = n.scaling_config();
        Ok(json!({
            "nodegroup_name": n.nodegroup_name(),
            "cluster_name": n.cluster_name(),
            "status": n.status().map(|s| s.as_str()),
            "capacity_type": n.capacity_type().map(|c| c.as_str()),
            "ami_type": n.ami_type().map(|a| a.as_str()),
            "instance_types": n.instance_types(),
            "scaling_config": {
                "min_size": scaling.and_then(|s| s.min_size()),
                "max_size": scaling.and_then(|s| s.max_size()),
                "desired_size": scaling.and_then(|s| s.desired_size()),
            },
            "subnets": n.subnets(),
            "labels": n.labels(),
            "taints": n.taints().iter().map(|t| json!({"key": t.key(), "value": t.value(), "effect": t.effect().map(|e| e.as_str())})).collect::<Vec<_>>(),
            "node_role": n.node_role(),
            "launch_template": n.launch_template().map(|t| json!({"name": t.name(), "id": t.id(), "version": t.version()})),
            "repair": n.node_repair_config().map(super::NodeRepair::from_sdk),
            "version": n.version(),
            "release_version": n.release_version(),
            "created_at": time(n.created_at()),
            "health": {"issues": n.health().map(|h| h.issues()).unwrap_or_default().iter().map(|i| json!({
                "code": i.code().map(|c| c.as_str()),
                "message": i.message(),
                "resource_ids": i.resource_ids(),
            })).collect::<Vec<_>>()},
        }))
    }

    /// Add-ons by name: `#{ "vpc-cni": #{ version, status } }`.
    pub async fn addons(&self, cluster: &str) -> Result<Value, AwsError> {
        super::path_values::checked("ListAddons", &[("cluster name", cluster)])?;
        let names = self
            .sdk()
            .await
            .eks
            .list_addons()
            .cluster_name(cluster)
            .send()
            .await
            .map_err(|e| self.failed("ListAddons", e))?;
        // One DescribeAddon per add-on, all at once: seven round trips cost one.
        let described = futures::future::try_join_all(
            names.addons().iter().map(|name| self.addon(cluster, name)),
        )
        .await?;
        let addons: serde_json::Map<String, Value> =
            names.addons().iter().cloned().zip(described).collect();
        Ok(Value::Object(addons))
    }

    /// One add-on: `#{version, status}`.
    pub async fn addon(&self, cluster: &str, name: &str) -> Result<Value, AwsError> {
        super::path_values::checked(
            "DescribeAddon",
            &[("cluster name", cluster), ("add-on name", name)],
        )?;
        let out = self
            .sdk()
            .await
            .eks
            .describe_addon()
            .cluster_name(cluster)
            .addon_name(name)
            .send()
            .await
            .map_err(|e| self.failed("DescribeAddon", e))?;
        let addon = out.addon();
        let mut answer = json!({"version": addon.and_then(|a| a.addon_version()), "status": addon.and_then(|a| a.status()).map(|s| s.as_str())});
        // Only an add-on with settings has them (most have none).
        if let Some(values) = addon.and_then(|a| a.configuration_values()) {
            answer["configuration_values"] = json!(values);
        }
        Ok(answer)
    }

    /// Starts scaling a node group; returns the update (`id`, `status`).
    pub async fn scale_nodegroup(
        &self,
        cluster: &str,
        name: &str,
        desired: i32,
        max: Option<i32>,
    ) -> Result<Value, AwsError> {
        super::path_values::checked(
            "UpdateNodegroupConfig",
            &[("cluster name", cluster), ("node group name", name)],
        )?;
        let scaling = aws_sdk_eks::types::NodegroupScalingConfig::builder()
            .desired_size(desired)
            .set_max_size(max)
            .build();
        let out = self
            .sdk()
            .await
            .eks
            .update_nodegroup_config()
            .cluster_name(cluster)
            .nodegroup_name(name)
            .scaling_config(scaling)
            .send()
            .await
            .map_err(|e| self.failed("UpdateNodegroupConfig", e).about(name))?;
        let update = out.update();
        Ok(
            json!({"id": update.and_then(|u| u.id()), "status": update.and_then(|u| u.status()).map(|s| s.as_str()), "type": update.and_then(|u| u.r#type()).map(|t| t.as_str())}),
        )
    }

    pub async fn update_status(
        &self,
        cluster: &str,
        nodegroup: &str,
        id: &str,
    ) -> Result<String, AwsError> {
        super::path_values::checked(
            "DescribeUpdate",
            &[
                ("cluster name", cluster),
                ("node group name", nodegroup),
                ("update id", id),
            ],
        )?;
        let out = self
            .sdk()
            .await
            .eks
            .describe_update()
            .name(cluster)
            .nodegroup_name(nodegroup)
            .update_id(id)
            .send()
            .await
            .map_err(|e| self.failed("DescribeUpdate", e))?;
        let update = out.update();
        let status = update
            .and_then(|u| u.status())
            .map_or("Unknown".to_string(), |s| s.as_str().to_string());
        // A failed update says why (NodeCreationFailure: Instances failed to join ...).
        let errors: Vec<String> = update
            .map(|u| u.errors())
            .unwrap_or_default()
            .iter()
            .map(|e| {
                format!(
                    "{}: {} ({})",
                    e.error_code().map_or("Error", |c| c.as_str()),
                    e.error_message().unwrap_or_default(),
                    e.resource_ids().join(", ")
                )
            })
            .collect();
        Ok(if errors.is_empty() {
            status
        } else {
            format!("{status} with {}", errors.join("; "))
        })
    }

    /// Waits on the run's clock until an update is Successful; Failed or Cancelled, or the
    /// timeout, is an error.
    pub async fn wait_update(
        &self,
        cluster: &str,
        nodegroup: &str,
        id: &str,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<(), AwsError> {
        let what = format!("update {id} of node group {nodegroup}");
        wait_for(
            clock,
            timeout,
            "DescribeUpdate",
            &what,
            "Successful",
            || async move {
                let status = self.update_status(cluster, nodegroup, id).await?;
                let state = status.split(' ').next().unwrap_or_default();
                Ok(
                    match classify(state, &["Successful"], &["Failed", "Cancelled"]) {
                        Probe::Failed(_) => Probe::Failed(status),
                        other => other,
                    },
                )
            },
        )
        .await
        .map(|_| ())
    }
}
