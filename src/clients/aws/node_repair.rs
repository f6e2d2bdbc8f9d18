//! EKS node auto repair of a managed node group (`nodeRepairConfig`) through aws-sdk-eks: the
//! configuration as runbook reads and writes it, and the update that changes it.

use aws_sdk_eks::types::{NodeRepairConfig, NodeRepairConfigOverrides, RepairAction};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;

/// One condition's own wait and action (`nodeRepairConfigOverrides`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepairOverride {
    /// The node condition the node monitoring agent sets (`AcceleratedHardwareReady`, ...).
    pub condition: String,
    /// Its reason (`NvidiaXID79Error`, ...).
    pub reason: String,
    pub wait_mins: i32,
    /// `Replace`, `Reboot` or `NoAction`.
    pub action: String,
}

/// A node group's node auto repair: whether on, when it stops (unhealthy nodes past a count or
/// a share), how many nodes it repairs at once, and per-condition overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRepair {
    pub enabled: Option<bool>,
    pub max_unhealthy_count: Option<i32>,
    pub max_unhealthy_percentage: Option<i32>,
    pub max_parallel_count: Option<i32>,
    pub max_parallel_percentage: Option<i32>,
    #[serde(default)]
    pub overrides: Vec<RepairOverride>,
}

impl NodeRepair {
    /// As aws-sdk-eks sends it.
    pub(super) fn to_sdk(&self) -> NodeRepairConfig {
        let overrides: Vec<NodeRepairConfigOverrides> = self
            .overrides
            .iter()
            .map(|o| {
                NodeRepairConfigOverrides::builder()
                    .node_monitoring_condition(&o.condition)
                    .node_unhealthy_reason(&o.reason)
                    .min_repair_wait_time_mins(o.wait_mins)
                    .repair_action(RepairAction::from(o.action.as_str()))
                    .build()
            })
            .collect();
        NodeRepairConfig::builder()
            .set_enabled(self.enabled)
            .set_max_unhealthy_node_threshold_count(self.max_unhealthy_count)
            .set_max_unhealthy_node_threshold_percentage(self.max_unhealthy_percentage)
            .set_max_parallel_nodes_repaired_count(self.max_parallel_count)
            .set_max_parallel_nodes_repaired_percentage(self.max_parallel_percentage)
            .set_node_repair_config_overrides((!overrides.is_empty()).then_some(overrides))
            .build()
    }

    /// As DescribeNodegroup answered it.
    pub(super) fn from_sdk(config: &NodeRepairConfig) -> Self {
        Self {
            enabled: config.enabled(),
            max_unhealthy_count: config.max_unhealthy_node_threshold_count(),
            max_unhealthy_percentage: config.max_unhealthy_node_threshold_percentage(),
            max_parallel_count: config.max_parallel_nodes_repaired_count(),
            max_parallel_percentage: config.max_parallel_nodes_repaired_percentage(),
            overrides: config
                .node_repair_config_overrides()
                .iter()
                .map(|o| RepairOverride {
                    condition: o
                        .node_monitoring_condition()
                        .unwrap_or_default()
                        .to_string(),
                    reason: o.node_unhealthy_reason().unwrap_or_default().to_string(),
                    wait_mins: o.min_repair_wait_time_mins().unwrap_or_default(),
                    action: o
                        .repair_action()
                        .map(|a| a.as_str().to_string())
                        .unwrap_or_default(),
                })
                .collect(),
        }
    }
}

impl AwsClients {
    /// The node group's node auto repair (the default, off, when EKS answers none).
    pub async fn node_repair(&self, cluster: &str, name: &str) -> Result<NodeRepair, AwsError> {
        let n = self.described_nodegroup(cluster, name).await?;
        Ok(n.node_repair_config()
            .map(NodeRepair::from_sdk)
            .unwrap_or_default())
    }

    /// Gives the node group `repair` and waits on `clock` until that update is Successful,
    /// waiting out an update already in flight first (EKS refuses a second one; another
    /// caller's may start between the look and the call, so a busy answer looks again, as
    /// `scale_nodegroup_to` does), up to `patience` for each; returns the update.
    pub async fn update_node_repair_settled(
        &self,
        cluster: &str,
        name: &str,
        repair: &NodeRepair,
        patience: std::time::Duration,
        clock: &dyn crate::clock::Clock,
    ) -> Result<Value, AwsError> {
        let deadline = clock.now() + patience;
        let busy = |error: &AwsError| error.code == "ResourceInUseException";
        super::retry::until_deadline(
            clock,
            Some(deadline),
            super::retry::Backoff::EVERY_5S,
            busy,
            |_, _| {},
            || async {
                self.wait_until_free(cluster, name, patience, clock).await?;
                let mut update = self.update_node_repair(cluster, name, repair).await?;
                let id = update["id"].as_str().unwrap_or_default().to_string();
                self.wait_update(cluster, name, &id, patience, clock)
                    .await?;
                update["status"] = json!("Successful");
                Ok(update)
            },
        )
        .await
    }

    /// Starts the update that gives the node group `repair`; returns it (`id`, `status`).
    pub async fn update_node_repair(
        &self,
        cluster: &str,
        name: &str,
        repair: &NodeRepair,
    ) -> Result<Value, AwsError> {
        super::path_values::checked(
            "UpdateNodegroupConfig",
            &[("cluster name", cluster), ("node group name", name)],
        )?;
        let out = self
            .sdk()
            .await
            .eks
            .update_nodegroup_config()
            .cluster_name(cluster)
            .nodegroup_name(name)
            .node_repair_config(repair.to_sdk())
            .send()
            .await
            .map_err(|e| self.failed("UpdateNodegroupConfig", e).about(name))?;
        let update = out.update();
        Ok(json!({
            "id": update.and_then(|u| u.id()),
            "status": update.and_then(|u| u.status()).map(|s| s.as_str()),
        }))
    }
}
