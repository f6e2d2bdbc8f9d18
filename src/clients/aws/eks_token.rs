//! EKS tokens for the Kubernetes client, made the way `aws eks get-token` makes them (a
//! presigned STS GetCallerIdentity for the cluster's name) with the keys the SDK signs with,
//! and made anew before they expire: EKS takes one for 15 minutes, a drill runs for longer.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use aws_credential_types::provider::ProvideCredentials;

use super::client::AwsClients;
use crate::auth::eks_token::{Keys, presign};
use crate::auth::secret::Secret;
use crate::clients::kube::{TokenFuture, TokenSource};

/// A token is renewed this long after it was made: well inside EKS's 15 minutes, with room
/// for a clock a few minutes off.
const RENEW_AFTER: Duration = Duration::from_secs(10 * 60);

#[derive(Clone)]
pub struct EksTokens(Arc<Inner>);

struct Inner {
    aws: Arc<AwsClients>,
    cluster: String,
    cached: tokio::sync::Mutex<Option<(Secret, Instant)>>,
}

impl EksTokens {
    pub fn new(aws: Arc<AwsClients>, cluster: &str) -> Self {
        Self(Arc::new(Inner {
            aws,
            cluster: cluster.to_string(),
            cached: tokio::sync::Mutex::new(None),
        }))
    }
}

impl Inner {
    async fn fresh(&self) -> Result<Secret, String> {
        let mut cached = self.cached.lock().await;
        if let Some((token, made)) = cached.as_ref()
            && made.elapsed() < RENEW_AFTER
        {
            return Ok(token.clone());
        }
        let config = &self.aws.sdk().await.config;
        let provider = config.credentials_provider().ok_or_else(|| {
            "no AWS credentials to sign an EKS token with (set a profile, AWS_ACCESS_KEY_ID, or SSO)".to_string()
        })?;
        let credentials = provider
            .provide_credentials()
            .await
            .map_err(|e| format!("cannot load AWS credentials for the EKS token: {e}"))?;
        let region = config
            .region()
            .map(|r| r.to_string())
            .ok_or("no AWS region for the EKS token's STS call (--region or AWS_REGION)")?;
        let token = presign(
            &Keys {
                access_key_id: credentials.access_key_id(),
                secret_access_key: credentials.secret_access_key(),
                session_token: credentials.session_token(),
            },
            &region,
            &self.cluster,
            // An emulator's or the lab twin's STS is where its keys mean something.
            config.endpoint_url(),
            SystemTime::now(),
        )
        .map_err(|e| e.to_string())?;
        let token = Secret::new(token);
        *cached = Some((token.clone(), Instant::now()));
        Ok(token)
    }
}

impl TokenSource for EksTokens {
    fn token(&self) -> TokenFuture {
        let inner = self.0.clone();
        Box::pin(async move { inner.fresh().await.map_err(Into::into) })
    }
}
