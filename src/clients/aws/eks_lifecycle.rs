//! EKS create, delete and wait: the cluster, node groups and add-ons the lab blueprint builds.

use std::time::Duration;

use aws_sdk_eks::types::{
    AmiTypes, NodegroupScalingConfig, ResolveConflicts, Taint, TaintEffect, VpcConfigRequest,
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

impl AwsClients {
    pub async fn clusters(&self) -> Result<Vec<String>, AwsError> {
        let out = self
            .sdk()
            .await
            .eks
            .list_clusters()
            .send()
            .await
            .map_err(|e| AwsError::from_sdk("ListClusters", e))?;
        Ok(out.clusters().to_vec())
    }

    pub async fn create_cluster(&self, spec: &ClusterSpec) -> Result<Value, AwsError> {
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
            .send()
            .await
            .map_err(|e| AwsError::from_sdk("CreateCluster", e))?;
        let cluster = out.cluster();
        Ok(json!({
            "name": cluster.and_then(|c| c.name()),
            "status": cluster.and_then(|c| c.status()).map(|s| s.as_str()),
            "version": cluster.and_then(|c| c.version()),
        }))
    }

    pub async fn delete_cluster(&self, name: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .eks
            .delete_cluster()
            .name(name)
            .send()
            .await
            .map_err(|e| AwsError::from_sdk("DeleteCluster", e))?;
        Ok(())
    }

    /// The cluster's status, through the same describe as `eks::cluster`.
    async fn cluster_status(&self, name: &str) -> Result<String, AwsError> {
        Ok(self.cluster(name).await?["status"]
            .as_str()
            .unwrap_or("UNKNOWN")
            .to_string())
    }

    pub async fn create_nodegroup(
        &self,
        cluster: &str,
        spec: &NodegroupSpec,
    ) -> Result<Value, AwsError> {
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
        let out = request
            .send()
            .await
            .map_err(|e| AwsError::from_sdk("CreateNodegroup", e))?;
        let nodegroup = out.nodegroup();
        Ok(json!({
            "nodegroup_name": nodegroup.and_then(|n| n.nodegroup_name()),
            "status": nodegroup.and_then(|n| n.status()).map(|s| s.as_str()),
        }))
    }

    pub async fn delete_nodegroup(&self, cluster: &str, name: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .eks
            .delete_nodegroup()
            .cluster_name(cluster)
            .nodegroup_name(name)
            .send()
            .await
            .map_err(|e| AwsError::from_sdk("DeleteNodegroup", e))?;
        Ok(())
    }

    /// The node group's status, through the same describe as `eks::nodegroup`.
    async fn nodegroup_status(&self, cluster: &str, name: &str) -> Result<String, AwsError> {
        Ok(self.nodegroup(cluster, name).await?["status"]
            .as_str()
            .unwrap_or("UNKNOWN")
            .to_string())
    }

    pub async fn create_addon(
        &self,
        cluster: &str,
        name: &str,
        version: Option<&str>,
    ) -> Result<Value, AwsError> {
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
            .map_err(|e| AwsError::from_sdk("CreateAddon", e))?;
        let addon = out.addon();
        Ok(json!({
            "addon_name": addon.and_then(|a| a.addon_name()),
            "addon_version": addon.and_then(|a| a.addon_version()),
            "status": addon.and_then(|a| a.status()).map(|s| s.as_str()),
        }))
    }

    pub async fn delete_addon(&self, cluster: &str, name: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .eks
            .delete_addon()
            .cluster_name(cluster)
            .addon_name(name)
            .send()
            .await
            .map_err(|e| AwsError::from_sdk("DeleteAddon", e))?;
        Ok(())
    }

    async fn addon_status(&self, cluster: &str, name: &str) -> Result<String, AwsError> {
        let out = self
            .sdk()
            .await
            .eks
            .describe_addon()
            .cluster_name(cluster)
            .addon_name(name)
            .send()
            .await
            .map_err(|e| AwsError::from_sdk("DescribeAddon", e))?;
        Ok(out
            .addon()
            .and_then(|a| a.status())
            .map_or("UNKNOWN".into(), |s| s.as_str().to_string()))
    }

    pub async fn wait_cluster_active(
        &self,
        name: &str,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<(), AwsError> {
        let what = format!("cluster {name}");
        until_active(clock, timeout, "DescribeCluster", &what, || {
            self.cluster_status(name)
        })
        .await
    }

    pub async fn wait_cluster_deleted(
        &self,
        name: &str,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<(), AwsError> {
        let what = format!("cluster {name}");
        until_gone(clock, timeout, "DescribeCluster", &what, || {
            self.cluster_status(name)
        })
        .await
    }

    pub async fn wait_nodegroup_active(
        &self,
        cluster: &str,
        name: &str,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<(), AwsError> {
        let what = format!("node group {name} of cluster {cluster}");
        until_active(clock, timeout, "DescribeNodegroup", &what, || {
            self.nodegroup_status(cluster, name)
        })
        .await
    }

    pub async fn wait_nodegroup_deleted(
        &self,
        cluster: &str,
        name: &str,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<(), AwsError> {
        let what = format!("node group {name} of cluster {cluster}");
        until_gone(clock, timeout, "DescribeNodegroup", &what, || {
            self.nodegroup_status(cluster, name)
        })
        .await
    }

    pub async fn wait_addon_active(
        &self,
        cluster: &str,
        name: &str,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<(), AwsError> {
        let what = format!("add-on {name} of cluster {cluster}");
        until_active(clock, timeout, "DescribeAddon", &what, || {
            self.addon_status(cluster, name)
        })
        .await
    }

    pub async fn wait_addon_deleted(
        &self,
        cluster: &str,
        name: &str,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<(), AwsError> {
        let what = format!("add-on {name} of cluster {cluster}");
        until_gone(clock, timeout, "DescribeAddon", &what, || {
            self.addon_status(cluster, name)
        })
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
