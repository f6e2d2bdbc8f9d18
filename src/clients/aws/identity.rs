//! Who the AWS credentials are (STS GetCallerIdentity) and what EKS makes of that principal
//! (its access entry): what a refused EKS token needs to be explained.

use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;

impl AwsClients {
    /// `{arn, account, user_id}` of the keys the calls are signed with.
    /// The region calls go to, as the credential chain and flags settled it.
    pub async fn region(&self) -> Option<String> {
        self.sdk().await.config.region().map(ToString::to_string)
    }

    pub async fn caller_identity(&self) -> Result<Value, AwsError> {
        let out = self
            .sdk()
            .await
            .sts
            .get_caller_identity()
            .send()
            .await
            .map_err(|e| self.failed("GetCallerIdentity", e))?;
        Ok(json!({"arn": out.arn(), "account": out.account(), "user_id": out.user_id()}))
    }

    /// The cluster's access entry for `principal_arn`, or None when it has none.
    pub async fn access_entry(
        &self,
        cluster: &str,
        principal_arn: &str,
    ) -> Result<Option<Value>, AwsError> {
        let answer = self
            .sdk()
            .await
            .eks
            .describe_access_entry()
            .cluster_name(cluster)
            .principal_arn(principal_arn)
            .send()
            .await;
        match answer {
            Ok(out) => Ok(out.access_entry().map(|e| {
                json!({
                    "principal_arn": e.principal_arn(),
                    "username": e.username(),
                    "kubernetes_groups": e.kubernetes_groups(),
                })
            })),
            Err(e) => {
                let error = self.failed("DescribeAccessEntry", e);
                if error.code == "ResourceNotFoundException" {
                    Ok(None)
                } else {
                    Err(error)
                }
            }
        }
    }
}

/// The IAM principal an access entry names for a caller: an assumed role's session ARN
/// (`arn:aws:sts::A:assumed-role/R/S`) is the role `arn:aws:iam::A:role/R`.
pub fn principal_of(caller_arn: &str) -> String {
    match caller_arn
        .strip_prefix("arn:aws:sts::")
        .and_then(|rest| rest.split_once(":assumed-role/"))
    {
        Some((account, role)) => {
            let name = role.split('/').next().unwrap_or(role);
            format!("arn:aws:iam::{account}:role/{name}")
        }
        None => caller_arn.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::principal_of;

    #[test]
    fn an_assumed_role_session_is_its_role() {
        assert_eq!(
            principal_of("arn:aws:sts::123456789012:assumed-role/drill/runbook-1"),
            "arn:aws:iam::123456789012:role/drill"
        );
        assert_eq!(
            principal_of("arn:aws:iam::123456789012:user/lab"),
            "arn:aws:iam::123456789012:user/lab"
        );
    }
}
