//! Which failures the SDK must not retry: an endpoint that refuses the connection, a host name
//! that does not resolve, a TLS handshake that fails, or no answer within the timeouts. Fifteen
//! attempts with backoff would hold a mistyped endpoint for minutes before saying anything; a
//! cleanup still retries these until its own deadline (bindings::aws), where a blip must not
//! leave GPU nodes running.

use std::error::Error as StdError;

use aws_sdk_eks::config::interceptors::InterceptorContext;
use aws_sdk_eks::config::retry::{ClassifyRetry, RetryAction};

use crate::clients::connection::{self, Cause};

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
    matches!(
        connection::cause(error),
        Cause::Refused | Cause::Unresolvable | Cause::Tls
    )
}
