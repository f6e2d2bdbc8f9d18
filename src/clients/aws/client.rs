//! The three SDK clients, built once per run.

use aws_config::{BehaviorVersion, Region};
use aws_credential_types::Credentials;

pub struct AwsClients {
    pub(super) eks: aws_sdk_eks::Client,
    pub(super) ec2: aws_sdk_ec2::Client,
    pub(super) iam: aws_sdk_iam::Client,
    /// Where calls go, for messages.
    pub endpoint: String,
}

impl AwsClients {
    /// Clients for an endpoint such as the lab twin's, with throwaway credentials.
    pub async fn for_endpoint(url: &str, region: &str) -> Self {
        let config = aws_config::defaults(BehaviorVersion::latest())
            .region(Region::new(region.to_string()))
            .endpoint_url(url)
            .credentials_provider(Credentials::new(
                "AKIDLABTWIN",
                "lab-twin-secret",
                None,
                None,
                "lab-twin",
            ))
            .load()
            .await;
        Self::from_config(&config, url.to_string())
    }

    /// Clients from the default credential chain (environment, profile, SSO, ...).
    pub async fn from_environment(profile: Option<&str>, region: Option<&str>) -> Self {
        let mut loader = aws_config::defaults(BehaviorVersion::latest());
        if let Some(profile) = profile {
            loader = loader.profile_name(profile);
        }
        if let Some(region) = region {
            loader = loader.region(Region::new(region.to_string()));
        }
        let config = loader.load().await;
        let endpoint = format!(
            "AWS ({})",
            config
                .region()
                .map_or("default region".to_string(), |r| r.to_string())
        );
        Self::from_config(&config, endpoint)
    }

    fn from_config(config: &aws_config::SdkConfig, endpoint: String) -> Self {
        Self {
            eks: aws_sdk_eks::Client::new(config),
            ec2: aws_sdk_ec2::Client::new(config),
            iam: aws_sdk_iam::Client::new(config),
            endpoint,
        }
    }
}
