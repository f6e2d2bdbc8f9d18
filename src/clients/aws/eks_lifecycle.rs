//! EKS create, delete and wait: the cluster, node groups and add-ons the lab blueprint builds.

use std::time::Duration;

use aws_sdk_eks::types::{
    AmiTypes, AuthenticationMode, CreateAccessConfigRequest, EncryptionConfig,
    LaunchTemplateSpecification, NodegroupScalingConfig, Provider, ResolveConflicts, Taint,
    TaintEffect, VpcConfigRequest,
};
use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;
use super::waiter::{Probe, classify, wait_for};
use crate::clock::Clock;

/// What `eks::create_cluster` needs.
#[derive(Debug, Clone)]
pub struct ClusterSpec {
    pub name: String,
    pub version: Option<String>,
    pub role_arn: String,
    pub subnets: Vec<String>,
    pub security_groups: Vec<String>,
    /// A KMS key ARN to encrypt the cluster's Secrets with.
    pub secrets_key: Option<String>,
}

/// What `eks::create_nodegroup` needs.
#[derive(Debug, Clone)]
pub struct NodegroupSpec {
    pub name: String,
    pub instance_type: String,
    pub ami_type: String,
    pub desired: i32,
    pub min: i32,
    pub max: i32,
    pub subnets: Vec<String>,
    pub node_role: String,
    pub labels: Vec<(String, String)>,
    /// `(key, value, effect)` with the effect as Kubernetes spells it (`NoSchedule`).
    pub taints: Vec<(String, String, String)>,
    /// The EC2 launch template (by name) its instances start from, at its default version.
    pub launch_template: Option<String>,
    /// Node auto repair (`nodeRepairConfig`), when given.
    pub repair: Option<super::NodeRepair>,
}

fn not_found(error: &AwsError) -> bool {
    error.code == "ResourceNotFoundException"
}

fn taint_effect(effect: &str) -> Result<TaintEffect, AwsError> {
    match effect {
        "NoSchedule" | "NO_SCHEDULE" => Ok(TaintEffect::NoSchedule),
        "NoExecute" | "NO_EXECUTE" => Ok(TaintEffect::NoExecute),
        "PreferNoSchedule" | "PREFER_NO_SCHEDULE" => Ok(TaintEffect::PreferNoSchedule),
        other => Err(AwsError::new(
            "CreateNodegroup",
            "InvalidParameterException",
            format!("taint effect {other} is not NoSchedule, NoExecute or PreferNoSchedule"),
        )),
    }
}

/// An EKS resource a waiter watches.
#[derive(Debug, Clone, Copy)]
pub enum EksResource<'a> {
    Cluster(&'a str),
    Nodegroup { cluster: &'a str, name: &'a str },
    Addon { cluster: &'a str, name: &'a str },
}

impl EksResource<'_> {
    fn describe_operation(self) -> &'static str {
        match self {
            EksResource::Cluster(_) => "DescribeCluster",
            EksResource::Nodegroup { .. } => "DescribeNodegroup",
            EksResource::Addon { .. } => "DescribeAddon",
        }
    }
}

impl std::fmt::Display for EksResource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EksResource::Cluster(name) => write!(f, "cluster {name}"),
            EksResource::Nodegroup { cluster, name } => {
                write!(f, "node group {name} of cluster {cluster}")
            }
            EksResource::Addon { cluster, name } => write!(f, "add-on {name} of cluster {cluster}"),
        }
    }
}

impl AwsClients {
    pub async fn clusters(&self) -> Result<Vec<String>, AwsError> {
        let out = self
            .sdk()
            .await
            .eks
            .list_clusters()
            .into_paginator()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.failed("ListClusters", e))?;
        Ok(out
            .iter()
            .flat_map(|page| page.clusters().iter().cloned())
            .collect())
    }

    pub async fn create_cluster(&self, spec: &ClusterSpec) -> Result<Value, AwsError> {
        super::path_values::checked("CreateCluster", &[("cluster name", &spec.name)])?;
        let vpc = VpcConfigRequest::builder()
            .set_subnet_ids(Some(spec.subnets.clone()))
            .set_security_group_ids(Some(spec.security_groups.clone()))
            .endpoint_public_access(true)
            .endpoint_private_access(true)
            .build();
        let out = self
            .sdk()
            .await
            .eks
            .create_cluster()
            .name(&spec.name)
            .set_version(spec.version.clone())
            .role_arn(&spec.role_arn)
            .resources_vpc_config(vpc)
            // EKS's API default is CONFIG_MAP; the seed's Terraform (terraform-aws-eks v20) asks
            // for access entries too, with the creator as cluster admin through one.
            .access_config(
                CreateAccessConfigRequest::builder()
                    .authentication_mode(AuthenticationMode::ApiAndConfigMap)
                    .bootstrap_cluster_creator_admin_permissions(true)
                    .build(),
            )
            .set_encryption_config(spec.secrets_key.as_ref().map(|key| {
                vec![
                    // `resources` is deprecated: EKS now encrypts all API data with the key.
                    EncryptionConfig::builder()
                        .provider(Provider::builder().key_arn(key).build())
                        .build(),
                ]
            }))
            .send()
            .await
            .map_err(|e| self.failed("CreateCluster", e))?;
        let cluster = out.cluster();
        Ok(json!({
            "name": cluster.and_then(|c| c.name()),
            "status": cluster.and_then(|c| c.status()).map(|s| s.as_str()),
            "version": cluster.and_then(|c| c.version()),
        }))
    }

    pub async fn delete_cluster(&self, name: &str) -> Result<(), AwsError> {
        super::path_values::checked("DeleteCluster", &[("cluster name", name)])?;
        self.sdk()
            .await
            .eks
            .delete_cluster()
            .name(name)
            .send()
            .await
            .map_err(|e| self.failed("DeleteCluster", e))?;
        Ok(())
    }

    pub async fn create_nodegroup(
        &self,
        cluster: &str,
        spec: &NodegroupSpec,
    ) -> Result<Value, AwsError> {
        super::path_values::checked(
            "CreateNodegroup",
            &[("cluster name", cluster), ("node group name", &spec.name)],
        )?;
        let scaling = NodegroupScalingConfig::builder()
            .min_size(spec.min)
            .max_size(spec.max)
            .desired_size(spec.desired)
            .build();
        let mut request = self
            .sdk()
            .await
            .eks
            .create_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(&spec.name)
            .scaling_config(scaling)
            .set_subnets(Some(spec.subnets.clone()))
            .instance_types(&spec.instance_type)
            .ami_type(AmiTypes::from(spec.ami_type.as_str()))
            .node_role(&spec.node_role);
        for (key, value) in &spec.labels {
            request = request.labels(key, value);
        }
        for (key, value, effect) in &spec.taints {
            request = request.taints(
                Taint::builder()
                    .key(key)
                    .value(value)
                    .effect(taint_effect(effect)?)
                    .build(),
            );
        }
        if let Some(template) = &spec.launch_template {
            request = request.launch_template(
                // No version: EKS takes the template's default one.
                LaunchTemplateSpecification::builder()
                    .name(template)
                    .build(),
            );
        }
        if let Some(repair) = &spec.repair {
            request = request.node_repair_config(repair.to_sdk());
        }
        let out = request
            .send()
            .await
            .map_err(|e| self.failed("CreateNodegroup", e))?;
        let nodegroup = out.nodegroup();
        Ok(json!({
            "nodegroup_name": nodegroup.and_then(|n| n.nodegroup_name()),
            "status": nodegroup.and_then(|n| n.status()).map(|s| s.as_str()),
        }))
    }

    pub async fn delete_nodegroup(&self, cluster: &str, name: &str) -> Result<(), AwsError> {
        super::path_values::checked(
            "DeleteNodegroup",
            &[("cluster name", cluster), ("node group name", name)],
        )?;
        self.sdk()
            .await
            .eks
            .delete_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(name)
            .send()
            .await
            .map_err(|e| self.failed("DeleteNodegroup", e))?;
        Ok(())
    }

    pub async fn create_addon(
        &self,
        cluster: &str,
        name: &str,
        version: Option<&str>,
    ) -> Result<Value, AwsError> {
        super::path_values::checked(
            "CreateAddon",
            &[("cluster name", cluster), ("add-on name", name)],
        )?;
        let out = self
            .sdk()
            .await
            .eks
            .create_addon()
            .cluster_name(cluster)
            .addon_name(name)
            .set_addon_version(version.map(str::to_string))
            .resolve_conflicts(ResolveConflicts::Overwrite)
            .send()
            .await
            .map_err(|e| self.failed("CreateAddon", e))?;
        let addon = out.addon();
        Ok(json!({
            "addon_name": addon.and_then(|a| a.addon_name()),
            "addon_version": addon.and_then(|a| a.addon_version()),
            "status": addon.and_then(|a| a.status()).map(|s| s.as_str()),
        }))
    }

    pub async fn delete_addon(&self, cluster: &str, name: &str) -> Result<(), AwsError> {
        super::path_values::checked(
            "DeleteAddon",
            &[("cluster name", cluster), ("add-on name", name)],
        )?;
        self.sdk()
            .await
            .eks
            .delete_addon()
            .cluster_name(cluster)
            .addon_name(name)
            .send()
            .await
            .map_err(|e| self.failed("DeleteAddon", e))?;
        Ok(())
    }

    /// The resource's status, through the same describes as `eks::cluster`, `eks::nodegroup`
    /// and `eks::addons`.
    async fn status(&self, resource: EksResource<'_>) -> Result<String, AwsError> {
        let described = match resource {
            EksResource::Cluster(name) => self.cluster(name).await?,
            EksResource::Nodegroup { cluster, name } => self.nodegroup(cluster, name).await?,
            EksResource::Addon { cluster, name } => self.addon(cluster, name).await?,
        };
        let status = described["status"].as_str().unwrap_or("UNKNOWN");
        // What EKS says keeps it from ACTIVE (`health.issues`), so a failed wait says why.
        let issues: Vec<String> = described["health"]["issues"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| {
                format!(
                    "{}: {}",
                    i["code"].as_str().unwrap_or_default(),
                    i["message"].as_str().unwrap_or_default()
                )
            })
            .collect();
        Ok(if issues.is_empty() {
            status.to_string()
        } else {
            format!("{status} ({})", issues.join("; "))
        })
    }

    /// Waits on `clock` until the resource is ACTIVE; a state it will not leave is WaiterFailed.
    pub async fn wait_active(
        &self,
        resource: EksResource<'_>,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<(), AwsError> {
        until_active(
            clock,
            timeout,
            resource.describe_operation(),
            &resource.to_string(),
            || self.status(resource),
        )
        .await
    }

    /// Waits on `clock` until describing the resource answers that it does not exist.
    pub async fn wait_deleted(
        &self,
        resource: EksResource<'_>,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<(), AwsError> {
        until_gone(
            clock,
            timeout,
            resource.describe_operation(),
            &resource.to_string(),
            || self.status(resource),
        )
        .await
    }
}

/// Until `status` says ACTIVE; a failed or deleting resource will not get there.
async fn until_active<F, Fut>(
    clock: &dyn Clock,
    timeout: Duration,
    operation: &str,
    what: &str,
    mut status: F,
) -> Result<(), AwsError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<String, AwsError>>,
{
    const FAILED: [&str; 5] = [
        "FAILED",
        "CREATE_FAILED",
        "DELETE_FAILED",
        "DEGRADED",
        "DELETING",
    ];
    wait_for(clock, timeout, operation, what, "ACTIVE", || {
        let status = status();
        async move { Ok(classify(&status.await?, &["ACTIVE"], &FAILED)) }
    })
    .await
    .map(|_| ())
}

/// Until describing the resource answers ResourceNotFoundException.
async fn until_gone<F, Fut>(
    clock: &dyn Clock,
    timeout: Duration,
    operation: &str,
    what: &str,
    mut status: F,
) -> Result<(), AwsError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<String, AwsError>>,
{
    wait_for(clock, timeout, operation, what, "deleted", || {
        let status = status();
        async move {
            match status.await {
                Ok(status) => Ok(classify(&status, &[], &["FAILED", "DELETE_FAILED"])),
                Err(error) if not_found(&error) => Ok(Probe::Done("deleted".into())),
                Err(error) => Err(error),
            }
        }
    })
    .await
    .map(|_| ())
}
