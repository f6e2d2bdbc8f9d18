//! IAM roles: the cluster's and the nodes' roles the blueprint makes on a real account, with the
//! AWS managed policies attached to them.

use percent_encoding::percent_decode_str;
use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;

/// A trust policy that lets an AWS service (`eks.amazonaws.com`) assume the role.
fn service_trust_policy(service: &str) -> String {
    json!({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": service},
            "Action": "sts:AssumeRole",
        }],
    })
    .to_string()
}

impl AwsClients {
    /// A new role that `service` may assume; returns its ARN.
    pub async fn create_role(
        &self,
        name: &str,
        service: &str,
        description: &str,
    ) -> Result<String, AwsError> {
        let out = self
            .sdk()
            .await
            .iam
            .create_role()
            .role_name(name)
            .assume_role_policy_document(service_trust_policy(service))
            .description(description)
            .send()
            .await
            .map_err(|e| self.failed("CreateRole", e))?;
        Ok(out.role().map(|r| r.arn().to_string()).unwrap_or_default())
    }

    /// #{ name, arn, role_id, trust_policy (the document, decoded), description }, or
    /// NoSuchEntity.
    pub async fn role(&self, name: &str) -> Result<Value, AwsError> {
        let out = self
            .sdk()
            .await
            .iam
            .get_role()
            .role_name(name)
            .send()
            .await
            .map_err(|e| self.failed("GetRole", e))?;
        let role = out.role();
        // IAM answers the document URL-encoded.
        let trust = role
            .and_then(|r| r.assume_role_policy_document())
            .map(|d| percent_decode_str(d).decode_utf8_lossy().into_owned())
            .and_then(|d| serde_json::from_str::<Value>(&d).ok());
        Ok(json!({
            "name": role.map(|r| r.role_name()),
            "arn": role.map(|r| r.arn()),
            "role_id": role.map(|r| r.role_id()),
            "trust_policy": trust,
            "description": role.and_then(|r| r.description()),
        }))
    }

    pub async fn delete_role(&self, name: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .iam
            .delete_role()
            .role_name(name)
            .send()
            .await
            .map_err(|e| self.failed("DeleteRole", e))?;
        Ok(())
    }

    pub async fn attach_role_policy(&self, role: &str, policy_arn: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .iam
            .attach_role_policy()
            .role_name(role)
            .policy_arn(policy_arn)
            .send()
            .await
            .map_err(|e| self.failed("AttachRolePolicy", e))?;
        Ok(())
    }

    pub async fn detach_role_policy(&self, role: &str, policy_arn: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .iam
            .detach_role_policy()
            .role_name(role)
            .policy_arn(policy_arn)
            .send()
            .await
            .map_err(|e| self.failed("DetachRolePolicy", e))?;
        Ok(())
    }

    /// The ARNs of the managed policies attached to `role`.
    pub async fn attached_role_policies(&self, role: &str) -> Result<Vec<String>, AwsError> {
        let out = self
            .sdk()
            .await
            .iam
            .list_attached_role_policies()
            .role_name(role)
            .send()
            .await
            .map_err(|e| self.failed("ListAttachedRolePolicies", e))?;
        Ok(out
            .attached_policies()
            .iter()
            .filter_map(|p| p.policy_arn().map(str::to_string))
            .collect())
    }
}
