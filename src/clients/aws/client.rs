//! The three SDK clients. The SDK configuration (credential chain, HTTP client) loads on the
//! first call, so runs that never touch AWS do not pay for it.

use aws_config::stalled_stream_protection::StalledStreamProtectionConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_credential_types::Credentials;
use aws_sdk_eks::config::retry::{RetryPartition, TokenBucket};
use tokio::sync::OnceCell;

use super::retry::RetryPolicy;

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
    retry: RetryPolicy,
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
            retry: RetryPolicy::default(),
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
            retry: RetryPolicy::default(),
            sdk: OnceCell::new(),
            endpoint,
        }
    }

    /// Retries by this policy instead of the default one.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
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
                let mut loader = aws_config::defaults(BehaviorVersion::latest())
                    .retry_config(self.retry.retry_config());
                if let Some(sleep) = self.retry.sleep() {
                    // Backoffs move the virtual clock. Timeouts and stalled-stream checks
                    // would race that clock against loopback I/O that takes wall time, so
                    // the twin's endpoint goes without them.
                    loader = loader
                        .sleep_impl(sleep)
                        .timeout_config(TimeoutConfig::disabled())
                        .stalled_stream_protection(StalledStreamProtectionConfig::disabled());
                }
                let config = match &self.recipe {
                    Recipe::Endpoint { url, region } => {
                        loader
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
                        if let Some(profile) = profile {
                            loader = loader.profile_name(profile);
                        }
                        if let Some(region) = region {
                            loader = loader.region(Region::new(region.clone()));
                        }
                        loader.load().await
                    }
                };
                sdk_clients(&config)
            })
            .await
    }
}

/// One drill is one caller making its calls in turn, each bounded by the attempt budget. The
/// SDK's shared retry quota (about 35 retries a process, then none at all) would only turn a
/// long throttled stretch into a failed cleanup, so each service gets a quota without limit.
fn sdk_clients(config: &SdkConfig) -> Sdk {
    let partition = |name: &'static str| {
        RetryPartition::custom(name)
            .token_bucket(TokenBucket::unlimited())
            .build()
    };
    Sdk {
        eks: aws_sdk_eks::Client::from_conf(
            aws_sdk_eks::config::Builder::from(config)
                .retry_partition(partition("runbook-eks"))
                .build(),
        ),
        ec2: aws_sdk_ec2::Client::from_conf(
            aws_sdk_ec2::config::Builder::from(config)
                .retry_partition(partition("runbook-ec2"))
                .build(),
        ),
        iam: aws_sdk_iam::Client::from_conf(
            aws_sdk_iam::config::Builder::from(config)
                .retry_partition(partition("runbook-iam"))
                .build(),
        ),
    }
}
