//! EKS access entries of a cluster, each with its associated access policies (read only).

use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;

impl AwsClients {
    /// Every access entry of a cluster: #{ principal_arn, username, kubernetes_groups, type,
    /// policies: [#{ policy_arn, scope, namespaces }] }.
    pub async fn access_entries(&self, cluster: &str) -> Result<Vec<Value>, AwsError> {
        super::path_values::checked("ListAccessEntries", &[("cluster name", cluster)])?;
        let pages = self
            .sdk()
            .await
            .eks
            .list_access_entries()
            .cluster_name(cluster)
            .into_paginator()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.failed("ListAccessEntries", e).about(cluster))?;
        let entries = pages
            .iter()
            .flat_map(|page| page.access_entries())
            .map(|principal| self.access_entry_with_policies(cluster, principal));
        futures::future::try_join_all(entries).await
    }

    async fn access_entry_with_policies(
        &self,
        cluster: &str,
        principal: &str,
    ) -> Result<Value, AwsError> {
        super::path_values::checked(
            "DescribeAccessEntry",
            &[("cluster name", cluster), ("principal ARN", principal)],
        )?;
        let sdk = self.sdk().await;
        let entry = sdk
            .eks
            .describe_access_entry()
            .cluster_name(cluster)
            .principal_arn(principal)
            .send()
            .await
            .map_err(|e| self.failed("DescribeAccessEntry", e).about(principal))?;
        let policies = sdk
            .eks
            .list_associated_access_policies()
            .cluster_name(cluster)
            .principal_arn(principal)
            .send()
            .await
            .map_err(|e| {
                self.failed("ListAssociatedAccessPolicies", e)
                    .about(principal)
            })?;
        let entry = entry.access_entry();
        let policies: Vec<Value> = policies
            .associated_access_policies()
            .iter()
            .map(|p| {
                let scope = p.access_scope();
                json!({
                    "policy_arn": p.policy_arn(),
                    "scope": scope.and_then(|s| s.r#type()).map(|t| t.as_str()),
                    "namespaces": scope.map(|s| s.namespaces().to_vec()).unwrap_or_default(),
                })
            })
            .collect();
        Ok(json!({
            "principal_arn": principal,
            "username": entry.and_then(|e| e.username()),
            "kubernetes_groups": entry.map(|e| e.kubernetes_groups().to_vec()).unwrap_or_default(),
            "type": entry.and_then(|e| e.r#type()),
            "policies": policies,
        }))
    }
}
