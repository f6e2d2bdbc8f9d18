//! How AWS calls ride through throttling and server errors: the SDK's retry strategy with the
//! run's attempt budget, its backoff slept on the run's clock, and the error codes a cleanup
//! keeps retrying until its own deadline.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_sdk_eks::config::{AsyncSleep, Sleep};

use crate::clock::VirtualClock;

/// Attempts per call (the first and its retries) unless `--aws-max-attempts` says otherwise.
/// The SDK's own default (3) gives up on the throttling a real account shows under load;
/// Terraform's AWS provider allows 25. 15 with backoff capped at 20 s rides out about four
/// minutes of a throttled API per call.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 15;

/// The longest single backoff.
const MAX_BACKOFF: Duration = Duration::from_secs(20);

/// What the AWS clients do when a call is throttled or fails on the server side.
#[derive(Clone)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    /// The run's clock when it is virtual: backoffs then move virtual time instead of waiting,
    /// and have no jitter, so a run under faults repeats exactly.
    pub virtual_clock: Option<Arc<VirtualClock>>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            virtual_clock: None,
        }
    }
}

impl fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("max_attempts", &self.max_attempts)
            .field("virtual", &self.virtual_clock.is_some())
            .finish()
    }
}

impl RetryPolicy {
    /// Standard retries on a virtual clock (deterministic, and the adaptive rate limiter reads
    /// the wall clock); adaptive ones against a real endpoint, where its client-side rate
    /// limiting is what keeps a throttled account from being hammered.
    pub(super) fn retry_config(&self) -> RetryConfig {
        let config = if self.virtual_clock.is_some() {
            RetryConfig::standard().with_use_static_exponential_base(true)
        } else {
            RetryConfig::adaptive()
        };
        config
            .with_max_attempts(self.max_attempts.max(1))
            .with_max_backoff(MAX_BACKOFF)
    }

    pub(super) fn sleep(&self) -> Option<ClockSleep> {
        self.virtual_clock.clone().map(ClockSleep)
    }
}

/// The SDK's sleeps on the run's virtual clock. The clock moves when the sleep is first
/// polled, not when it is made: the SDK also makes sleeps it races against work that is
/// already done (an identity load's timeout), and those must not move time.
pub(super) struct ClockSleep(Arc<VirtualClock>);

impl fmt::Debug for ClockSleep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClockSleep")
    }
}

impl AsyncSleep for ClockSleep {
    fn sleep(&self, duration: Duration) -> Sleep {
        let clock = self.0.clone();
        Sleep::new(async move { clock.advance(duration) })
    }
}

/// Error codes that say "try again later" rather than "this is wrong": throttling, server
/// errors and a connection that did not get through, as each service spells them.
pub fn is_transient(code: &str) -> bool {
    matches!(
        code,
        "ThrottlingException"
            | "Throttling"
            | "ThrottledException"
            | "RequestLimitExceeded"
            | "TooManyRequestsException"
            | "RequestThrottled"
            | "SlowDown"
            | "ServerException"
            | "ServiceException"
            | "InternalError"
            | "InternalFailure"
            | "ServiceFailure"
            | "ServiceUnavailable"
            | "ServiceUnavailableException"
            | "Unavailable"
            | "ConnectionError"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;

    #[test]
    fn throttling_and_server_errors_are_transient_and_bad_input_is_not() {
        for code in [
            "ThrottlingException",
            "RequestLimitExceeded",
            "Throttling",
            "ServerException",
            "InternalError",
            "ServiceFailure",
            "ConnectionError",
        ] {
            assert!(is_transient(code), "{code}");
        }
        for code in [
            "ResourceNotFoundException",
            "InvalidParameterException",
            "InvalidPermission.NotFound",
            "ResourceInUseException",
        ] {
            assert!(!is_transient(code), "{code}");
        }
    }

    #[test]
    fn a_virtual_sleep_moves_time_only_when_polled() {
        let clock = Arc::new(VirtualClock::new());
        let sleep = ClockSleep(clock.clone());
        let made = sleep.sleep(Duration::from_secs(5));
        assert_eq!(clock.now(), Duration::ZERO, "making a sleep moves nothing");
        drop(made);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        runtime.block_on(sleep.sleep(Duration::from_secs(5)));
        assert_eq!(clock.now(), Duration::from_secs(5));
    }

    #[test]
    fn the_attempt_budget_reaches_the_sdk() {
        let policy = RetryPolicy {
            max_attempts: 7,
            virtual_clock: None,
        };
        assert_eq!(policy.retry_config().max_attempts(), 7);
        assert_eq!(
            policy.retry_config().mode(),
            aws_config::retry::RetryMode::Adaptive
        );
        let virtual_policy = RetryPolicy {
            max_attempts: 0,
            virtual_clock: Some(Arc::new(VirtualClock::new())),
        };
        let config = virtual_policy.retry_config();
        assert_eq!(config.max_attempts(), 1, "at least the first attempt");
        assert!(config.use_static_exponential_base());
    }
}
