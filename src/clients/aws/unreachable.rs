//! Which failures the SDK must not retry: an endpoint that refuses the connection, a host name
//! that does not resolve, a TLS handshake that fails, or no answer within the timeouts. Fifteen
//! attempts with backoff would hold a mistyped endpoint for minutes before saying anything; a
//! cleanup still retries these until its own deadline (bindings::aws), where a blip must not
//! leave GPU nodes running.

use std::error::Error as StdError;

use aws_sdk_eks::config::interceptors::InterceptorContext;
use aws_sdk_eks::config::retry::{ClassifyRetry, RetryAction};

#[derive(Debug, Default)]
pub(super) struct Unreachable;

impl ClassifyRetry for Unreachable {
    fn classify_retry(&self, ctx: &InterceptorContext) -> RetryAction {
        let Some(Err(error)) = ctx.output_or_error() else {
            return RetryAction::NoActionIndicated;
        };
        if error.is_timeout_error() {
            return RetryAction::RetryForbidden;
        }
        match error.as_connector_error() {
            Some(connector) if connector.is_timeout() || cannot_connect(connector) => {
                RetryAction::RetryForbidden
            }
            _ => RetryAction::NoActionIndicated,
        }
    }

    fn name(&self) -> &'static str {
        "runbook: unreachable endpoint"
    }
}

/// Refused, unresolvable or a failed TLS handshake: nothing was sent, and trying again at once
/// finds the same.
fn cannot_connect(error: &(dyn StdError + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            return true;
        }
        let text = e.to_string().to_lowercase();
        if text.contains("connection refused")
            || text.contains("dns error")
            || text.contains("failed to lookup address")
            || text.contains("invalidcontenttype")
            || text.contains("invalid certificate")
        {
            return true;
        }
        next = e.source();
    }
    false
}
