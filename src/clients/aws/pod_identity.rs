//! EKS Pod Identity associations and a role's inline policies: what the hybrid audit reads
//! to check Pod Identity end to end (seed 004's six steps, those the APIs can show).

use percent_encoding::percent_decode_str;
use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;

impl AwsClients {
    /// Every association of a cluster: #{ association_id, namespace, service_account, role_arn }.
    pub async fn pod_identity_associations(&self, cluster: &str) -> Result<Vec<Value>, AwsError> {
        super::path_values::checked("ListPodIdentityAssociations", &[("cluster name", cluster)])?;
        let pages = self
            .sdk()
            .await
            .eks
            .list_pod_identity_associations()
            .cluster_name(cluster)
            .into_paginator()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.failed("ListPodIdentityAssociations", e).about(cluster))?;
        let ids: Vec<String> = pages
            .iter()
            .flat_map(|page| page.associations())
            .filter_map(|a| a.association_id().map(str::to_string))
            .collect();
        // The list leaves out the role: one describe per association, all at once.
        let described = ids.iter().map(|id| async move {
            let out = self
                .sdk()
                .await
                .eks
                .describe_pod_identity_association()
                .cluster_name(cluster)
                .association_id(id)
                .send()
                .await
                .map_err(|e| self.failed("DescribePodIdentityAssociation", e).about(id))?;
            let a = out.association();
            Ok::<Value, AwsError>(json!({
                "association_id": id,
                "namespace": a.and_then(|a| a.namespace()),
                "service_account": a.and_then(|a| a.service_account()),
                "role_arn": a.and_then(|a| a.role_arn()),
            }))
        });
        futures::future::try_join_all(described).await
    }

    /// A role's inline policies: #{ name, document } with the document parsed (IAM sends it
    /// URL-encoded).
    pub async fn role_policies(&self, role: &str) -> Result<Vec<Value>, AwsError> {
        let sdk = self.sdk().await;
        let names = sdk
            .iam
            .list_role_policies()
            .role_name(role)
            .send()
            .await
            .map_err(|e| self.failed("ListRolePolicies", e).about(role))?;
        let mut policies = Vec::new();
        for name in names.policy_names() {
            let out = sdk
                .iam
                .get_role_policy()
                .role_name(role)
                .policy_name(name)
                .send()
                .await
                .map_err(|e| self.failed("GetRolePolicy", e).about(role))?;
            let text = percent_decode_str(out.policy_document())
                .decode_utf8_lossy()
                .into_owned();
            let document = serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text));
            policies.push(json!({"name": name, "document": document}));
        }
        Ok(policies)
    }
}
