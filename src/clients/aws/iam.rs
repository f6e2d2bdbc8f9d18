//! IAM: the OIDC providers behind IRSA.

use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;

impl AwsClients {
    pub async fn oidc_providers(&self) -> Result<Vec<Value>, AwsError> {
        let list = self
            .sdk()
            .await
            .iam
            .list_open_id_connect_providers()
            .send()
            .await
            .map_err(|e| self.failed("ListOpenIDConnectProviders", e))?;
        // The providers' details, all at once.
        let arns: Vec<&str> = list
            .open_id_connect_provider_list()
            .iter()
            .filter_map(|p| p.arn())
            .collect();
        let providers = futures::future::try_join_all(arns.iter().map(|arn| async move {
            let p = self
                .sdk()
                .await
                .iam
                .get_open_id_connect_provider()
                .open_id_connect_provider_arn(*arn)
                .send()
                .await
                .map_err(|e| self.failed("GetOpenIDConnectProvider", e))?;
            Ok::<_, AwsError>(json!({
                "arn": arn,
                "url": p.url(),
                "client_ids": p.client_id_list(),
                "thumbprints": p.thumbprint_list(),
            }))
        }))
        .await?;
        Ok(providers)
    }

    /// The provider for a cluster's OIDC issuer (`https://oidc.eks...`), or NoSuchEntity.
    pub async fn oidc_provider_for(&self, issuer: &str) -> Result<Value, AwsError> {
        let url = issuer.trim_start_matches("https://");
        self.oidc_providers()
            .await?
            .into_iter()
            .find(|p| p["url"].as_str() == Some(url))
            .ok_or_else(|| {
                AwsError::new(
                    "GetOpenIDConnectProvider",
                    "NoSuchEntity",
                    format!("no IAM OIDC provider for {issuer}"),
                )
            })
    }

    /// Registers an OIDC issuer with IAM; returns the provider's ARN.
    pub async fn create_oidc_provider(
        &self,
        url: &str,
        client_ids: &[String],
        thumbprints: &[String],
    ) -> Result<String, AwsError> {
        let out = self
            .sdk()
            .await
            .iam
            .create_open_id_connect_provider()
            .url(url)
            .set_client_id_list(Some(client_ids.to_vec()))
            .set_thumbprint_list(Some(thumbprints.to_vec()))
            .send()
            .await
            .map_err(|e| self.failed("CreateOpenIDConnectProvider", e))?;
        out.open_id_connect_provider_arn()
            .map(str::to_string)
            .ok_or_else(|| {
                AwsError::new(
                    "CreateOpenIDConnectProvider",
                    "InvalidResponse",
                    "CreateOpenIDConnectProvider answered without an ARN",
                )
            })
    }

    pub async fn delete_oidc_provider(&self, arn: &str) -> Result<(), AwsError> {
        self.sdk()
            .await
            .iam
            .delete_open_id_connect_provider()
            .open_id_connect_provider_arn(arn)
            .send()
            .await
            .map_err(|e| self.failed("DeleteOpenIDConnectProvider", e))?;
        Ok(())
    }
}
