//! The three SDK clients. The SDK configuration (credential chain, HTTP client) loads on the
//! first call, so runs that never touch AWS do not pay for it.

use aws_config::stalled_stream_protection::StalledStreamProtectionConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_credential_types::Credentials;
use aws_sdk_eks::config::SharedHttpClient;
use aws_sdk_eks::config::retry::{RetryPartition, TokenBucket};
use aws_smithy_http_client::pool::{self, ConnectionEvent};
use aws_smithy_http_client::proxy::ProxyConfig;
use aws_smithy_http_client::{Builder, tls};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::OnceCell;

use crate::auth::secret::Secret;

use super::error::AwsError;
use super::failure::Destination;
use super::retry::RetryPolicy;
use super::trust::TrustedCa;
use super::unreachable::Unreachable;

pub(super) struct Sdk {
    /// What the clients were made from: the credentials, region and endpoint they sign for.
    pub(super) config: SdkConfig,
    pub(super) eks: aws_sdk_eks::Client,
    pub(super) ec2: aws_sdk_ec2::Client,
    pub(super) iam: aws_sdk_iam::Client,
    pub(super) kms: aws_sdk_kms::Client,
    pub(super) sts: aws_sdk_sts::Client,
}

enum Recipe {
    /// An endpoint such as the lab twin's or an emulator's, with these keys, or the credential
    /// chain's (for `lab serve`: its env file's) when None.
    Endpoint {
        url: String,
        region: String,
        keys: Option<(String, Secret)>,
    },
    /// The default credential chain (environment, profile, SSO, ...).
    Environment {
        profile: Option<String>,
        region: Option<String>,
    },
}

/// How long a real-clock call may take: a blackholed endpoint fails in seconds with a message
/// instead of hanging the run.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// To open the connection.
    pub connect: std::time::Duration,
    /// Each attempt, from sending to the whole answer (retries get their own).
    pub attempt: std::time::Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: std::time::Duration::from_secs(5),
            attempt: std::time::Duration::from_secs(30),
        }
    }
}

pub struct AwsClients {
    recipe: Recipe,
    retry: RetryPolicy,
    timeouts: Timeouts,
    sdk: OnceCell<Sdk>,
    /// Where calls go, for messages.
    pub endpoint: String,
    /// The lab twin's admin token, for its cost meter (`/twin/usage`).
    lab_token: Option<Secret>,
    /// Connections the shared HTTP client opened, to any AWS endpoint.
    connections: Arc<AtomicU64>,
    /// Trusted instead of the system's roots (the lab twin's CA, AWS_CA_BUNDLE's file).
    trusted_ca: Option<TrustedCa>,
}

impl AwsClients {
    /// Calls to `url` signed with the credential chain's keys (environment, profile).
    pub fn for_endpoint(url: &str, region: &str) -> Self {
        Self {
            recipe: Recipe::Endpoint {
                url: url.into(),
                region: region.into(),
                keys: None,
            },
            retry: RetryPolicy::default(),
            timeouts: Timeouts::default(),
            sdk: OnceCell::new(),
            endpoint: url.into(),
            lab_token: None,
            connections: Arc::default(),
            trusted_ca: None,
        }
    }

    /// Calls to `url` signed with these keys (the lab twin's own).
    pub fn for_endpoint_with_keys(
        url: &str,
        region: &str,
        access_key_id: &str,
        secret_access_key: Secret,
    ) -> Self {
        let mut clients = Self::for_endpoint(url, region);
        if let Recipe::Endpoint { keys, .. } = &mut clients.recipe {
            *keys = Some((access_key_id.to_string(), secret_access_key));
        }
        clients
    }

    /// Reads the lab twin's cost meter with its admin token.
    pub fn with_lab_token(mut self, token: Option<Secret>) -> Self {
        self.lab_token = token;
        self
    }

    pub(super) fn lab_token(&self) -> Option<&Secret> {
        self.lab_token.as_ref()
    }

    /// Trusts these certificates instead of the system's roots (None: the system's).
    pub fn with_trusted_ca(mut self, trusted: Option<TrustedCa>) -> Self {
        self.trusted_ca = trusted;
        self
    }

    pub(super) fn trusted_ca(&self) -> Option<&TrustedCa> {
        self.trusted_ca.as_ref()
    }

    pub fn from_environment(profile: Option<&str>, region: Option<&str>) -> Self {
        let endpoint = format!("AWS ({})", region.unwrap_or("the profile's region"));
        Self {
            recipe: Recipe::Environment {
                profile: profile.map(str::to_string),
                region: region.map(str::to_string),
            },
            retry: RetryPolicy::default(),
            timeouts: Timeouts::default(),
            sdk: OnceCell::new(),
            endpoint,
            lab_token: None,
            connections: Arc::default(),
            trusted_ca: None,
        }
    }

    /// Times out real-clock calls by these instead of the defaults (5 s to connect, 30 s an
    /// attempt).
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Retries by this policy instead of the default one.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// An SDK error as this target's [`AwsError`]: where the call went is in the message when
    /// it never got the service's answer.
    pub(super) fn failed<E>(
        &self,
        operation: &str,
        error: aws_sdk_eks::error::SdkError<E, aws_sdk_eks::config::http::HttpResponse>,
    ) -> AwsError
    where
        E: aws_smithy_types::error::metadata::ProvideErrorMetadata
            + std::error::Error
            + Send
            + Sync
            + 'static,
    {
        let to = Destination {
            endpoint: &self.endpoint,
            custom: self.endpoint_url().is_some(),
            timeouts: self.timeouts,
        };
        AwsError::from_sdk(operation, error, &to)
    }

    /// TCP connections opened to AWS so far (every service, and the credential chain's calls;
    /// on the lab twin, its cost meter's too).
    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }

    /// One more connection made outside the SDK's pool (the twin's cost meter).
    pub(super) fn count_connection(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    /// The endpoint URL when calls go to one (the lab twin, an emulator), not to AWS.
    pub fn endpoint_url(&self) -> Option<&str> {
        match &self.recipe {
            Recipe::Endpoint { url, .. } => Some(url),
            Recipe::Environment { .. } => None,
        }
    }

    /// The TLS crypto for this target. Real AWS keeps the SDK's default, aws-lc, with its
    /// post-quantum key exchange. An endpoint given to runbook (the lab twin, an emulator) gets
    /// ring, which the rest of runbook's TLS uses: aws-lc seeds its random generator from CPU
    /// jitter on first use, about 20 ms of a run that is otherwise a few ms against the twin.
    fn crypto(&self) -> tls::rustls_provider::CryptoMode {
        let custom = match &self.recipe {
            Recipe::Endpoint { .. } => true,
            Recipe::Environment { .. } => {
                std::env::var_os("AWS_ENDPOINT_URL").is_some_and(|url| !url.is_empty())
            }
        };
        if custom {
            tls::rustls_provider::CryptoMode::Ring
        } else {
            tls::rustls_provider::CryptoMode::AwsLc
        }
    }

    pub(super) async fn sdk(&self) -> &Sdk {
        self.sdk
            .get_or_init(|| async {
                let mut loader = aws_config::defaults(BehaviorVersion::latest())
                    .http_client(shared_https_client(
                        &self.connections,
                        self.trusted_ca.as_ref(),
                        self.crypto(),
                    ))
                    .retry_config(self.retry.retry_config());
                if let Some(sleep) = self.retry.sleep() {
                    // Backoffs move the virtual clock. Timeouts and stalled-stream checks
                    // would race that clock against loopback I/O that takes wall time, so
                    // the twin's endpoint goes without them.
                    loader = loader
                        .sleep_impl(sleep)
                        .timeout_config(TimeoutConfig::disabled())
                        .stalled_stream_protection(StalledStreamProtectionConfig::disabled());
                } else {
                    loader = loader.timeout_config(
                        TimeoutConfig::builder()
                            .connect_timeout(self.timeouts.connect)
                            .operation_attempt_timeout(self.timeouts.attempt)
                            .build(),
                    );
                }
                let config = match &self.recipe {
                    Recipe::Endpoint { url, region, keys } => {
                        loader = loader.region(Region::new(region.clone())).endpoint_url(url);
                        if let Some((id, secret)) = keys {
                            loader = loader.credentials_provider(Credentials::new(
                                id,
                                secret.expose(),
                                None,
                                None,
                                "lab-twin",
                            ));
                        }
                        loader.load().await
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

/// The SDK's HTTPS client (rustls, proxies from the environment), made once for all the
/// services: left to themselves, each service client makes its own, with a pool of its own.
/// It is the SDK's connection pool, which offers HTTP/2 by ALPN (an endpoint that takes it
/// carries every request on one connection) and says when it opens a connection, counted here.
/// It says nothing of a connection it made but did not install (one raced open while the first
/// one's handshake was in flight, then dropped for the first's HTTP/2): the first request going
/// alone (`first_alone`) keeps that from happening, so the count is what the server saw.
fn shared_https_client(
    connections: &Arc<AtomicU64>,
    trusted: Option<&TrustedCa>,
    crypto: tls::rustls_provider::CryptoMode,
) -> SharedHttpClient {
    let provider = || tls::Provider::Rustls(crypto.clone());
    // Only the given CAs: the system's roots are not even loaded for the lab twin.
    let context = trusted.and_then(|trusted| {
        let store = tls::TrustStore::empty().with_pem_certificate(trusted.pem().as_bytes());
        tls::TlsContext::builder()
            .with_trust_store(store)
            .build()
            .ok()
    });
    let counter = connections.clone();
    let mut pool = pool::Builder::default()
        .proxy_config(ProxyConfig::from_env())
        .event_listener(move |event: &ConnectionEvent<'_>| {
            if matches!(event, ConnectionEvent::Opened(_)) {
                counter.fetch_add(1, Ordering::Relaxed);
            }
        })
        .tls_provider(provider());
    if let Some(context) = &context {
        pool = pool.tls_context(context.clone());
    }
    match pool.build_https().map(|pool| pool::Client::new(&pool)) {
        Ok(Ok(client)) => super::first_alone::first_alone(SharedHttpClient::new(client)),
        // Neither fails for a pool without partitions; should one, the SDK's own client
        // still works, only without a count.
        _ => {
            let builder = Builder::new().tls_provider(provider());
            match context {
                Some(context) => builder.tls_context(context).build_https(),
                None => builder.build_https(),
            }
        }
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
        config: config.clone(),
        eks: aws_sdk_eks::Client::from_conf(
            aws_sdk_eks::config::Builder::from(config)
                .retry_partition(partition("runbook-eks"))
                .retry_classifier(Unreachable)
                .build(),
        ),
        ec2: aws_sdk_ec2::Client::from_conf(
            aws_sdk_ec2::config::Builder::from(config)
                .retry_partition(partition("runbook-ec2"))
                .retry_classifier(Unreachable)
                .build(),
        ),
        iam: aws_sdk_iam::Client::from_conf(
            aws_sdk_iam::config::Builder::from(config)
                .retry_partition(partition("runbook-iam"))
                .retry_classifier(Unreachable)
                .build(),
        ),
        kms: aws_sdk_kms::Client::from_conf(
            aws_sdk_kms::config::Builder::from(config)
                .retry_partition(partition("runbook-kms"))
                .retry_classifier(Unreachable)
                .build(),
        ),
        sts: aws_sdk_sts::Client::from_conf(
            aws_sdk_sts::config::Builder::from(config)
                .retry_partition(partition("runbook-sts"))
                .retry_classifier(Unreachable)
                .build(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_given_to_runbook_gets_ring_and_real_aws_the_sdks_default() {
        let twin = AwsClients::for_endpoint("https://127.0.0.1:1", "ap-northeast-2");
        assert_eq!(format!("{:?}", twin.crypto()), "Ring");
        if std::env::var_os("AWS_ENDPOINT_URL").is_none() {
            let real = AwsClients::from_environment(None, Some("ap-northeast-2"));
            assert_eq!(format!("{:?}", real.crypto()), "AwsLc");
        }
    }
}
