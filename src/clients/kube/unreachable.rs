//! A request that got no answer from the API server, in one line: where it went (every error
//! of the client's service stack is wrapped with the server's URL on its way out), why in words
//! (refused, a name that does not resolve, TLS, no connection in time, the credential plugin)
//! and what to do; never the HTTP stack's Debug chain.

use std::error::Error as StdError;
use std::fmt;

type BoxError = Box<dyn StdError + Send + Sync>;

/// An error of one request to `endpoint`; its source is what went wrong.
#[derive(Debug)]
pub(super) struct AtEndpoint {
    endpoint: String,
    source: BoxError,
}

impl fmt::Display for AtEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a request to {}", self.endpoint)
    }
}

impl StdError for AtEndpoint {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(self.source.as_ref())
    }
}

/// The layer that names the endpoint in every error of the service under it.
pub(super) fn name_endpoint(
    endpoint: String,
) -> tower::util::MapErrLayer<impl Fn(BoxError) -> BoxError + Clone> {
    tower::util::MapErrLayer::new(move |source: BoxError| -> BoxError {
        Box::new(AtEndpoint {
            endpoint: endpoint.clone(),
            source,
        })
    })
}

/// The texts of the chain, the endpoint, whether the connection was refused and whether the
/// request timeout ran out.
fn texts(error: &(dyn StdError + 'static)) -> (Vec<String>, Option<String>, bool, bool) {
    let mut texts = Vec::new();
    let mut endpoint = None;
    let mut refused = false;
    let mut elapsed = false;
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(at) = e.downcast_ref::<AtEndpoint>() {
            endpoint = Some(at.endpoint.clone());
        } else {
            let text = e.to_string();
            if !text.is_empty() && !texts.contains(&text) {
                texts.push(text);
            }
        }
        refused |= e
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused);
        elapsed |= e.is::<tower::timeout::error::Elapsed>();
        next = e.source();
    }
    (texts, endpoint, refused, elapsed)
}

/// `cannot reach the Kubernetes API at URL: cause: advice`.
pub(super) fn describe(error: &(dyn StdError + 'static)) -> String {
    let (texts, endpoint, refused, elapsed) = texts(error);
    let all = texts.join(" / ").to_lowercase();
    let innermost = texts.last().cloned().unwrap_or_default();
    let endpoint = endpoint.unwrap_or_else(|| "its server".into());
    let local = endpoint.contains("://127.0.0.1") || endpoint.contains("://localhost");
    let unreachable = if local {
        "is `runbook lab serve` (or the cluster) running there? the kubeconfig it wrote names its port"
    } else {
        "check the network path (VPN, proxy), and whether the cluster's endpoint is public or private (EKS: `aws eks describe-cluster --query cluster.resourcesVpcConfig`)"
    };
    let (cause, advice) = if all.contains("auth exec") || all.contains("exec plugin") {
        (
            format!("the kubeconfig's credential plugin failed ({innermost})"),
            "run its command by hand to see why (for EKS: `aws eks get-token --cluster-name NAME`; an SSO session may need `aws sso login`)",
        )
    } else if refused || all.contains("connection refused") {
        ("the connection was refused".to_string(), unreachable)
    } else if all.contains("dns error") || all.contains("failed to lookup address") {
        (
            "its host name does not resolve".to_string(),
            "check the kubeconfig's server and DNS on this machine (a private EKS endpoint resolves only inside its VPC)",
        )
    } else if all.contains("invalidcontenttype")
        || all.contains("corrupt message")
        || all.contains("certificate")
        || all.contains("tls")
    {
        (
            format!("the TLS handshake failed ({innermost})"),
            "is the server http:// given as https://, or its CA not the one in the kubeconfig?",
        )
    } else if elapsed {
        (
            "no answer within the request timeout (--request-timeout)".to_string(),
            unreachable,
        )
    } else if all.contains("timed out")
        || all.contains("deadline has elapsed")
        || all.contains("timeout")
    {
        (
            "no connection in time (--connect-timeout)".to_string(),
            unreachable,
        )
    } else {
        (innermost, unreachable)
    };
    format!("cannot reach the Kubernetes API at {endpoint}: {cause}: {advice}")
}
