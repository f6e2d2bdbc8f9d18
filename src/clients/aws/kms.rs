//! KMS: the key that encrypts a cluster's Secrets, found and removed by its alias
//! (`alias/eks/myeks5w`, as terraform-aws-eks names it).

use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;

impl AwsClients {
    /// A new symmetric key, given `alias`; returns its ARN.
    pub async fn create_key(&self, alias: &str, description: &str) -> Result<String, AwsError> {
        let sdk = self.sdk().await;
        let out = sdk
            .kms
            .create_key()
            .description(description)
            .send()
            .await
            .map_err(|e| self.failed("CreateKey", e))?;
        let (id, arn) = out
            .key_metadata()
            .map(|m| {
                (
                    m.key_id().to_string(),
                    m.arn().unwrap_or_default().to_string(),
                )
            })
            .unwrap_or_default();
        sdk.kms
            .create_alias()
            .alias_name(alias)
            .target_key_id(&id)
            .send()
            .await
            .map_err(|e| self.failed("CreateAlias", e))?;
        Ok(arn)
    }

    /// #{ key_id, arn, state, deletion_date } of the key `key` names (an id, ARN or alias), or
    /// NotFoundException.
    pub async fn key(&self, key: &str) -> Result<Value, AwsError> {
        let out = self
            .sdk()
            .await
            .kms
            .describe_key()
            .key_id(key)
            .send()
            .await
            .map_err(|e| self.failed("DescribeKey", e))?;
        let meta = out.key_metadata();
        Ok(json!({
            "key_id": meta.map(|m| m.key_id()),
            "arn": meta.and_then(|m| m.arn()),
            "state": meta.and_then(|m| m.key_state()).map(|s| s.as_str()),
            "deletion_date": meta.and_then(|m| m.deletion_date()).map(|d| d.secs()),
        }))
    }

    /// Removes `alias` and schedules its key's deletion after `days` (7 to 30): KMS never
    /// deletes a key at once.
    pub async fn retire_key(&self, alias: &str, days: i32) -> Result<(), AwsError> {
        let sdk = self.sdk().await;
        let key = sdk
            .kms
            .describe_key()
            .key_id(alias)
            .send()
            .await
            .map_err(|e| self.failed("DescribeKey", e))?;
        let id = key
            .key_metadata()
            .map(|m| m.key_id().to_string())
            .unwrap_or_default();
        sdk.kms
            .delete_alias()
            .alias_name(alias)
            .send()
            .await
            .map_err(|e| self.failed("DeleteAlias", e))?;
        sdk.kms
            .schedule_key_deletion()
            .key_id(id)
            .pending_window_in_days(days)
            .send()
            .await
            .map_err(|e| self.failed("ScheduleKeyDeletion", e))?;
        Ok(())
    }
}
