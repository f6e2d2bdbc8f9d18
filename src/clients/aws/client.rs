//! The three SDK clients. The SDK configuration (credential chain, HTTP client) loads on the
//! first call, so runs that never touch AWS do not pay for it.

use aws_config::{BehaviorVersion, Region};
use aws_credential_types::Credentials;
use tokio::sync::OnceCell;

pub(super) struct Sdk {
    pub(super) eks: aws_sdk_eks::Client,
    pub(super) ec2: aws_sdk_ec2::Client,
    pub(super) iam: aws_sdk_iam::Client,
}

enum Recipe {
    /// An endpoint such as the lab twin's, with throwaway credentials.
    Endpoint { url: String, region: String },
    /// The default credential chain (environment, profile, SSO, ...).
    Environment {
        profile: Option<String>,
        region: Option<String>,
    },
}

pub struct AwsClients {
    recipe: Recipe,
    sdk: OnceCell<Sdk>,
    /// Where calls go, for messages.
    pub endpoint: String,
}

impl AwsClients {
    pub fn for_endpoint(url: &str, region: &str) -> Self {
        Self {
            recipe: Recipe::Endpoint {
                url: url.into(),
                region: region.into(),
            },
            sdk: OnceCell::new(),
            endpoint: url.into(),
        }
    }

    pub fn from_environment(profile: Option<&str>, region: Option<&str>) -> Self {
        let endpoint = format!("AWS ({})", region.unwrap_or("the profile's region"));
        Self {
            recipe: Recipe::Environment {
                profile: profile.map(str::to_string),
                region: region.map(str::to_string),
            },
            sdk: OnceCell::new(),
            endpoint,
        }
    }

    /// The endpoint URL when calls go to one (the lab twin, an emulator), not to AWS.
    pub(super) fn endpoint_url(&self) -> Option<&str> {
        match &self.recipe {
            Recipe::Endpoint { url, .. } => Some(url),
            Recipe::Environment { .. } => None,
        }
    }

    pub(super) async fn sdk(&self) -> &Sdk {
        self.sdk
            .get_or_init(|| async {
                let config = match &self.recipe {
                    Recipe::Endpoint { url, region } => {
                        aws_config::defaults(BehaviorVersion::latest())
                            .region(Region::new(region.clone()))
                            .endpoint_url(url)
                            .credentials_provider(Credentials::new(
                                "AKIDLABTWIN",
                                "lab-twin-secret",
                                None,
                                None,
                                "lab-twin",
                            ))
                            .load()
                            .await
                    }
                    Recipe::Environment { profile, region } => {
                        let mut loader = aws_config::defaults(BehaviorVersion::latest());
                        if let Some(profile) = profile {
                            loader = loader.profile_name(profile);
                        }
                        if let Some(region) = region {
                            loader = loader.region(Region::new(region.clone()));
                        }
                        loader.load().await
                    }
                };
                Sdk {
                    eks: aws_sdk_eks::Client::new(&config),
                    ec2: aws_sdk_ec2::Client::new(&config),
                    iam: aws_sdk_iam::Client::new(&config),
                }
            })
            .await
    }
}
