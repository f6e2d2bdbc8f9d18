//! A cluster's control plane log types and endpoint access as DescribeCluster shows them,
//! kept in the cluster's record; eks_cluster_config.rs changes them.

use serde_json::{Value, json};

/// EKS's control plane log types (the API reference's LogType), in its order.
pub(crate) const LOG_TYPES: [&str; 5] = [
    "api",
    "audit",
    "authenticator",
    "controllerManager",
    "scheduler",
];

/// A cluster's control plane logs and endpoint access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClusterSettings {
    /// The log types sent to CloudWatch, in `LOG_TYPES`' order.
    pub(crate) enabled_logs: Vec<String>,
    pub(crate) public_access: bool,
    pub(crate) private_access: bool,
    pub(crate) public_cidrs: Vec<String>,
}

impl Default for ClusterSettings {
    /// What the lab's Terraform leaves: API and scheduler logs, a public and a private endpoint.
    fn default() -> Self {
        Self {
            enabled_logs: vec!["api".into(), "scheduler".into()],
            public_access: true,
            private_access: true,
            public_cidrs: vec!["0.0.0.0/0".into()],
        }
    }
}

impl ClusterSettings {
    /// `logging` as DescribeCluster answers it: the enabled types, then the others.
    pub(crate) fn logging_json(&self) -> Value {
        json!({"clusterLogging": clusters_logging(&self.enabled_logs)})
    }

    /// Its endpoint fields of `resourcesVpcConfig`.
    pub(crate) fn fill_vpc_config(&self, vpc_config: &mut Value) {
        vpc_config["endpointPublicAccess"] = json!(self.public_access);
        vpc_config["endpointPrivateAccess"] = json!(self.private_access);
        vpc_config["publicAccessCidrs"] = json!(self.public_cidrs);
    }
}

/// `clusterLogging` for these enabled types: a group of the enabled, one of the others (a
/// group left out when empty).
pub(crate) fn clusters_logging(enabled: &[String]) -> Vec<Value> {
    let disabled: Vec<&str> = LOG_TYPES
        .iter()
        .copied()
        .filter(|t| !enabled.iter().any(|e| e == t))
        .collect();
    let mut groups = Vec::new();
    if !enabled.is_empty() {
        groups.push(json!({"types": enabled, "enabled": true}));
    }
    if !disabled.is_empty() {
        groups.push(json!({"types": disabled, "enabled": false}));
    }
    groups
}
