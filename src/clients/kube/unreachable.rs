//! A request that got no answer from the API server, in one line: where it went (every error
//! of the client's service stack is wrapped with the server's URL on its way out), why in words
//! (refused, a name that does not resolve, TLS, no connection in time, the credential plugin)
//! and what to do; never the HTTP stack's Debug chain.

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use super::KubeError;
use super::stalled_body::Stalled;
use crate::clients::connection::{self, Cause, chain, find};
use crate::clock::format_duration;

type BoxError = Box<dyn StdError + Send + Sync>;

/// Where a client's requests go and how long they may take, for its messages.
#[derive(Debug, Clone)]
pub(super) struct Destination {
    pub(super) endpoint: String,
    pub(super) connect_within: Option<Duration>,
    pub(super) answer_within: Option<Duration>,
}

/// An error of one request to `endpoint`; its source is what went wrong.
#[derive(Debug)]
pub(super) struct AtEndpoint {
    to: Destination,
    source: BoxError,
}

impl fmt::Display for AtEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a request to {}", self.to.endpoint)
    }
}

impl StdError for AtEndpoint {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(self.source.as_ref())
    }
}

/// The layer that names the endpoint in every error of the service under it.
pub(super) fn name_endpoint(
    to: Destination,
) -> tower::util::MapErrLayer<impl Fn(BoxError) -> BoxError + Clone> {
    tower::util::MapErrLayer::new(move |source: BoxError| -> BoxError {
        Box::new(AtEndpoint {
            to: to.clone(),
            source,
        })
    })
}

/// " within 5s" for a limit that is known.
fn within(limit: Option<Duration>) -> String {
    limit.map_or_else(String::new, |l| format!(" within {}", format_duration(l)))
}

/// `cannot reach the Kubernetes API at URL: cause: advice`, with the chain under it.
pub(super) fn describe(error: &(dyn StdError + 'static)) -> KubeError {
    let texts = chain(error);
    let innermost = texts.last().cloned().unwrap_or_default();
    let at = find::<AtEndpoint>(error).map(|at| &at.to);
    let stalled = find::<Stalled>(error);
    let endpoint = at
        .map(|to| to.endpoint.clone())
        .or_else(|| stalled.map(|s| s.endpoint.clone()))
        .unwrap_or_else(|| "its server".to_string());
    let local = endpoint.contains("://127.0.0.1") || endpoint.contains("://localhost");
    let unreachable = if local {
        "is `runbook lab serve` (or the cluster) running there? the kubeconfig it wrote names its port"
    } else {
        "check the network path (VPN, proxy), and whether the cluster's endpoint is public or private (EKS: `aws eks describe-cluster --query cluster.resourcesVpcConfig`)"
    };
    let plugin = texts
        .iter()
        .any(|t| t.contains("auth exec") || t.contains("exec plugin"));
    let elapsed = find::<tower::timeout::error::Elapsed>(error).is_some();
    let (cause, advice) = match connection::cause(error) {
        _ if plugin => (
            format!("the kubeconfig's credential plugin failed ({innermost})"),
            "run its command by hand to see why (for EKS: `aws eks get-token --cluster-name NAME`; an SSO session may need `aws sso login`)",
        ),
        Cause::Refused => ("the connection was refused".to_string(), unreachable),
        Cause::Unresolvable => (
            "its host name does not resolve".to_string(),
            "check the kubeconfig's server and DNS on this machine (a private EKS endpoint resolves only inside its VPC)",
        ),
        Cause::Tls => (
            format!("the TLS handshake failed ({innermost})"),
            "is the server http:// given as https://, or its CA not the one in the kubeconfig?",
        ),
        _ if stalled.is_some() => (
            stalled.map(Stalled::to_string).unwrap_or_default(),
            "the server, or a proxy or VPN on the way, stopped sending mid-answer: run again, and check the network path if it repeats",
        ),
        _ if elapsed => (
            format!(
                "no answer{} (--request-timeout)",
                within(at.and_then(|to| to.answer_within))
            ),
            unreachable,
        ),
        Cause::TimedOut => (
            format!(
                "no connection{} (--connect-timeout)",
                within(at.and_then(|to| to.connect_within))
            ),
            unreachable,
        ),
        Cause::Other => (innermost, unreachable),
    };
    KubeError::Connection {
        message: format!("cannot reach the Kubernetes API at {endpoint}: {cause}: {advice}"),
        causes: texts,
    }
}
